// Command start_timestamps is promrate's oracle for PromQL's start-timestamp-aware rate,
// increase, irate and resets: the rules of Prometheus v3.14.0 (commit
// d7598b7141418fa35be2b5ec5d0fefb634199610, promql/functions.go: extrapolatedRate,
// instantValue, funcResets, isStartTimestampReset; engine.go's left-open windows), written
// out again here for float samples, each step in the order Prometheus does it, so that
// the float results are Prometheus' to the last bit. It answers upstream's own cases
// (start-timestamps-upstream.json, translated from start_timestamps.test) and random
// series made from a fixed seed, and prints one JSON file.
//
// Usage: go run tests/go/start_timestamps.go tests/data/oracle/start-timestamps-upstream.json \
//            > tests/data/oracle/start-timestamps.json
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"time"
)

// A float sample with its start timestamp (ms; 0 is unknown).
type sample struct {
	T  int64
	F  float64
	ST int64
}

// The samples of a range selector: rangeStart < t <= rangeEnd (Prometheus 3.x).
func window(samples []sample, at, rangeMs int64) []sample {
	var out []sample
	for _, s := range samples {
		if s.T > at-rangeMs && s.T <= at {
			out = append(out, s)
		}
	}
	return out
}

// A reset told by the start timestamps of two consecutive samples.
func startReset(prevST, prevT, curST, curT int64) bool {
	if curST == 0 || curST >= curT {
		return false // unknown, invalid (after the sample), or OTel's unknown (equal)
	}
	if curST < prevT {
		return false
	}
	if curST > prevT {
		return true
	}
	// curST == prevT: a delta sample, unless the previous start is unknown or invalid.
	if prevST > prevT {
		return false
	}
	return prevST != 0 && prevST != prevT
}

// rate (perSecond) or increase of a counter; ok is false where Prometheus gives no sample.
func extrapolated(samples []sample, at, rangeMs int64, perSecond bool) (float64, bool) {
	in := window(samples, at, rangeMs)
	if len(in) == 0 {
		return 0, false
	}
	rangeStart, rangeEnd := at-rangeMs, at
	intervals := len(in) - 1
	firstT, lastT := in[0].T, in[intervals].T
	result := in[intervals].F - in[0].F
	for i := 1; i < len(in); i++ {
		if in[i].F < in[i-1].F || startReset(in[i-1].ST, in[i-1].T, in[i].ST, in[i].T) {
			result += in[i-1].F
		}
	}
	toStart := float64(firstT-rangeStart) / 1000
	toEnd := float64(rangeEnd-lastT) / 1000
	sampled := float64(lastT-firstT) / 1000
	var average float64
	if intervals > 0 {
		average = sampled / float64(intervals)
	}
	threshold := average * 1.1
	if st := in[0].ST; st != 0 && st > rangeStart && st < firstT {
		// A zero at the start time stands in for the left extrapolation; the average
		// above stays the samples'.
		toStart = 0
		sampled = float64(lastT-st) / 1000
		result += in[0].F
	} else if intervals == 0 {
		return 0, false
	} else {
		if toStart >= threshold {
			toStart = average / 2
		}
		toZero := toStart
		if result > 0 && in[0].F >= 0 {
			toZero = sampled * (in[0].F / result)
		}
		if toZero < toStart {
			toStart = toZero
		}
	}
	if toEnd >= threshold {
		toEnd = average / 2
	}
	factor := 1.0
	if sampled != 0 {
		factor = (sampled + toStart + toEnd) / sampled
	}
	if perSecond {
		factor /= (time.Duration(rangeMs) * time.Millisecond).Seconds()
	}
	return result * factor, true
}

func irate(samples []sample, at, rangeMs int64) (float64, bool) {
	in := window(samples, at, rangeMs)
	if len(in) < 2 {
		return 0, false
	}
	a, b := in[len(in)-2], in[len(in)-1]
	interval := b.T - a.T
	if interval == 0 {
		return 0, false
	}
	result := b.F
	if !(b.F < a.F || startReset(a.ST, a.T, b.ST, b.T)) {
		result = b.F - a.F
	}
	return result / (float64(interval) / 1000), true
}

func resets(samples []sample, at, rangeMs int64) (float64, bool) {
	in := window(samples, at, rangeMs)
	if len(in) == 0 {
		return 0, false
	}
	n := 0
	for i := 1; i < len(in); i++ {
		if in[i].F < in[i-1].F || startReset(in[i-1].ST, in[i-1].T, in[i].ST, in[i].T) {
			n++
		}
	}
	return float64(n), true
}

func answer(fn string, samples []sample, at, rangeMs int64) interface{} {
	var v float64
	var ok bool
	switch fn {
	case "rate":
		v, ok = extrapolated(samples, at, rangeMs, true)
	case "increase":
		v, ok = extrapolated(samples, at, rangeMs, false)
	case "irate":
		v, ok = irate(samples, at, rangeMs)
	case "resets":
		v, ok = resets(samples, at, rangeMs)
	default:
		panic(fn)
	}
	if !ok {
		return nil
	}
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	// The shortest text that reads back as the same float.
	return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
}

type upstreamCase struct {
	Fn       string  `json:"fn"`
	WindowMs int64   `json:"window_ms"`
	TimesMs  []int64 `json:"times_ms"`
	Series   []struct {
		Points [][3]float64 `json:"points"`
	} `json:"series"`
	Eval string `json:"eval"`
}

func samplesOf(points [][3]float64) []sample {
	out := make([]sample, len(points))
	for i, p := range points {
		out[i] = sample{T: int64(p[0]), F: p[1], ST: int64(p[2])}
	}
	return out
}

// Series that exercise every rule: cumulative counters whose start time stays, moves at a
// restart (the value dropping or not), or is unknown; delta-style starts; OTel's ST == T;
// starts after the sample or overlapping the one before; jittered scrapes and gaps.
func randomSeries(r *rand.Rand, kind int) []sample {
	n := 8 + r.Intn(40)
	t := int64(1_700_000_000_000) + r.Int63n(60_000)
	value := float64(r.Intn(3)) * float64(r.Intn(10_000))
	st := t - 1_000 - r.Int63n(600_000)
	var out []sample
	var prevT int64
	for i := 0; i < n; i++ {
		if i > 0 {
			step := int64(15_000) + r.Int63n(2_000) - 1_000
			if r.Intn(12) == 0 {
				step *= int64(2 + r.Intn(4)) // a gap
			}
			prevT = t
			t += step
			value += float64(r.Intn(2_000))
			if r.Intn(10) == 0 { // a restart
				st = prevT + 1 + r.Int63n(t-prevT-1)
				if r.Intn(2) == 0 {
					value = float64(r.Intn(500)) // dropped
				} // else it climbed past the old value: only the start time tells
			}
		}
		s := sample{T: t, F: value}
		switch kind {
		case 0: // no start times
		case 1: // cumulative
			s.ST = st
		case 2: // delta-style: each sample starts at the one before
			if i == 0 {
				s.ST = t - 15_000
			} else {
				s.ST = prevT
			}
		case 3: // OTel's unknown start: ST == T
			s.ST = t
		default: // anything, mixed
			switch r.Intn(7) {
			case 0:
				s.ST = 0
			case 1:
				s.ST = t + 1 + r.Int63n(5_000) // after the sample: invalid
			case 2:
				s.ST = t - r.Int63n(60_000) // may overlap earlier samples
			case 3:
				s.ST = prevT
			case 4:
				s.ST = t
			default:
				s.ST = st
			}
		}
		if r.Intn(60) == 0 {
			s.F = math.NaN()
		}
		out = append(out, s)
	}
	return out
}

type query struct {
	Fn       string        `json:"fn"`
	WindowMs int64         `json:"window_ms"`
	AtMs     int64         `json:"at_ms"`
	Answer   []interface{} `json:"answer"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run tests/go/start_timestamps.go UPSTREAM.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var upstream struct {
		Cases []upstreamCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &upstream); err != nil {
		panic(err)
	}
	// Upstream's cases: an answer per series per time.
	var upstreamAnswers [][][]interface{}
	for _, c := range upstream.Cases {
		var perSeries [][]interface{}
		for _, s := range c.Series {
			samples := samplesOf(s.Points)
			var row []interface{}
			for _, at := range c.TimesMs {
				row = append(row, answer(c.Fn, samples, at, c.WindowMs))
			}
			perSeries = append(perSeries, row)
		}
		upstreamAnswers = append(upstreamAnswers, perSeries)
	}
	// Random series and queries from a fixed seed.
	r := rand.New(rand.NewSource(20270314))
	var series [][][3]interface{}
	var all [][]sample
	for i := 0; i < 40; i++ {
		s := randomSeries(r, i%5)
		all = append(all, s)
		var points [][3]interface{}
		for _, p := range s {
			f := interface{}(json.Number(strconv.FormatFloat(p.F, 'g', -1, 64)))
			if math.IsNaN(p.F) {
				f = "NaN"
			}
			points = append(points, [3]interface{}{p.T, f, p.ST})
		}
		series = append(series, points)
	}
	windows := []int64{15_000, 30_000, 60_000, 90_007, 120_000, 300_000, 600_000}
	var queries []query
	for q := 0; q < 150; q++ {
		w := windows[r.Intn(len(windows))]
		at := int64(1_700_000_000_000) + r.Int63n(800_000)
		if r.Intn(4) == 0 {
			at -= at % 1_000 // on a whole second, as a rule's evaluation is
		}
		for _, fn := range []string{"rate", "increase", "irate", "resets"} {
			qq := query{Fn: fn, WindowMs: w, AtMs: at}
			for _, s := range all {
				qq.Answer = append(qq.Answer, answer(fn, s, at, w))
			}
			queries = append(queries, qq)
		}
	}
	out := map[string]interface{}{
		"source":   "tests/go/start_timestamps.go: Prometheus v3.14.0 (d7598b7141418fa35be2b5ec5d0fefb634199610) rules for float samples",
		"upstream": upstreamAnswers,
		"random":   map[string]interface{}{"series": series, "queries": queries},
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
