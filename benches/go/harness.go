// Command harness measures Go's Prometheus text parsers on the same pages and with the
// same work per sample as promrate's `versus_go` criterion group: touch the name, count
// the labels, read the value as f64 (and, in "labels" mode, read every label's name and
// value). Built against Debian's packaged sources by benches/versus_go.sh.
//
// Usage: harness -mode samples|labels -ms 2000 PAGE...
// Prints one line per parser and page: "<parser> <page> <best MB/s> <samples> <median MB/s>",
// the best and the median of ten rounds.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	vm "github.com/VictoriaMetrics/VictoriaMetrics/lib/protoparser/prometheus"
	"github.com/prometheus/common/expfmt"
)

var sink float64

// victoriaMetrics parses the page with VictoriaMetrics' parser (which splits every
// sample's tags into key/value slices as part of its parse) and does the per-sample work.
func victoriaMetrics(rows *vm.Rows, page string, labels bool) int {
	rows.Reset()
	rows.UnmarshalWithErrLogger(page, func(s string) { panic(s) })
	for i := range rows.Rows {
		r := &rows.Rows[i]
		sink += float64(len(r.Metric)) + float64(len(r.Tags)) + r.Value
		if labels {
			for j := range r.Tags {
				sink += float64(len(r.Tags[j].Key) + len(r.Tags[j].Value))
			}
		}
	}
	return len(rows.Rows)
}

// expfmtText parses the page with prometheus/common's TextParser (it builds protobuf
// metric families) and does the same per-sample work on what it returns; -1 if it
// refuses the page.
func expfmtText(page string, labels bool) int {
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(bytes.NewReader([]byte(page)))
	if err != nil {
		return -1
	}
	n := 0
	for name, f := range families {
		for _, m := range f.Metric {
			n++
			sink += float64(len(name)) + float64(len(m.Label))
			switch {
			case m.Counter != nil:
				sink += m.Counter.GetValue()
			case m.Gauge != nil:
				sink += m.Gauge.GetValue()
			case m.Untyped != nil:
				sink += m.Untyped.GetValue()
			}
			if labels {
				for _, l := range m.Label {
					sink += float64(len(l.GetName()) + len(l.GetValue()))
				}
			}
		}
	}
	return n
}

// rates runs parse for about `budget`, in ten rounds of a tenth of it, and returns the
// best and the median round's throughput in MB/s (10^6 bytes per second), and the samples.
func rates(size int, budget time.Duration, parse func() int) (float64, float64, int) {
	const count = 10
	samples := parse()
	var rounds []float64
	for round := 0; round < count; round++ {
		deadline := time.Now().Add(budget / count)
		start := time.Now()
		n := 0
		for time.Now().Before(deadline) {
			parse()
			n++
		}
		rounds = append(rounds, float64(size*n)/time.Since(start).Seconds()/1e6)
	}
	sort.Float64s(rounds)
	return rounds[count-1], (rounds[count/2-1] + rounds[count/2]) / 2, samples
}

func main() {
	mode := flag.String("mode", "samples", "samples: name, label count, value; labels: also every label")
	ms := flag.Int("ms", 2000, "milliseconds per parser and page")
	flag.Parse()
	labels := *mode == "labels"
	budget := time.Duration(*ms) * time.Millisecond
	var rows vm.Rows
	for _, path := range flag.Args() {
		raw, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		page := string(raw)
		name := filepath.Base(path)
		best, median, n := rates(len(page), budget, func() int { return victoriaMetrics(&rows, page, labels) })
		fmt.Printf("victoriametrics %s %.1f %d %.1f\n", name, best, n, median)
		if expfmtText(page, labels) < 0 {
			fmt.Printf("expfmt %s 0 -1 0\n", name)
			continue
		}
		best, median, n = rates(len(page), budget, func() int { return expfmtText(page, labels) })
		fmt.Printf("expfmt %s %.1f %d %.1f\n", name, best, n, median)
	}
	if sink == 0.12345 {
		fmt.Println(sink)
	}
}
