// Command values writes the golden file of the sample-value grammar as Prometheus reads it:
// Go's strconv.ParseFloat, minus the forms with 'p', 'P' or '_' that Prometheus' text
// parser refuses (model/textparse parseFloat). One line per input: the input, a tab, and
// either the value's IEEE-754 bits in hex ("nan" for any NaN) or "error".
//
// Usage: go run tests/go/values.go > tests/data/values/prometheus-values.tsv
// The inputs are hand-picked edge cases plus strings generated from a fixed seed, so the
// file is the same on every run; none holds a blank, which would split the sample line.
package main

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
)

func prometheusParseFloat(s string) (float64, error) {
	if strings.ContainsAny(s, "pP_") {
		return 0, fmt.Errorf("unsupported character in float")
	}
	return strconv.ParseFloat(s, 64)
}

var handPicked = []string{
	"0", "-0", "+0", "1", "-1", "+1", "0.0", "18.0", "1.5", ".5", "5.", "-.5", "+5.",
	"1e3", "1E3", "1e+3", "1e-3", "1.5e3", "1.5E-3", "-1.5e+3", "4.404533e+06", "1.6e-05",
	"680175.0", "2351.5699999999997", "1.7644801077700212e+09", "0.1", "0.2", "0.3",
	"9007199254740992", "9007199254740993", "18446744073709551615", "18446744073709551616",
	"123456789012345678901234567890", "0.000000000000000000000000000001",
	"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
	"-1.7976931348623159e308", "1e308", "1e309", "1e400", "-1e400", "1e-400", "-1e-400",
	"4.9e-324", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "3e-324",
	"2.2250738585072011e-308", "2.2250738585072014e-308",
	"Inf", "inf", "INF", "+Inf", "-Inf", "+inf", "-inf", "Infinity", "infinity", "-Infinity",
	"+Infinity", "infinit", "infinityx", "in", "NaN", "nan", "NAN", "+NaN", "-NaN", "+nan",
	"-nan", "nana", "na",
	"+", "-", ".", "e", "e5", "1e", "1e+", "1e-", "1.e5", ".e5", "1..2", "1.2.3", "--1",
	"+-1", "1e5.5", "1e1e1", "0x1", "0x1p3", "0X1P-2", "0x1.8p1", "1_000", "1_0.5", "0x_1p0",
	"1p3", "0b101", "0o17", "017", "0017.5", "00", "1,5", "1e0400", "1e00000000000000000001",
	"1f", "1d", "$1", "1%", "٣", "１",
}

// generated returns n strings built from the characters a value can hold, in shapes that
// reach every branch of the grammar: signs, digit runs, points, exponents, words.
func generated(n int) []string {
	r := rand.New(rand.NewSource(20261130))
	digits := func(max int) string {
		var b strings.Builder
		for i, k := 0, r.Intn(max); i < k; i++ {
			b.WriteByte(byte('0' + r.Intn(10)))
		}
		return b.String()
	}
	pick := func(options ...string) string { return options[r.Intn(len(options))] }
	out := make([]string, 0, n)
	for len(out) < n {
		var s string
		switch r.Intn(6) {
		case 0: // plain decimals with a realistic number of digits
			s = pick("", "-", "+") + digits(12) + pick("", ".") + digits(12)
		case 1: // exponents near and beyond the range
			s = pick("", "-") + digits(4) + pick("", ".") + digits(20) + pick("e", "E") +
				pick("", "+", "-") + strconv.Itoa(r.Intn(420))
		case 2: // long mantissas (correct rounding)
			s = pick("", "-") + digits(40) + "." + digits(40)
		case 3: // words and their near misses
			s = pick("", "+", "-") + pick("inf", "Inf", "infinity", "NaN", "nan", "in", "infinite", "nan0")
		case 4: // random characters from the alphabet
			const alphabet = "0123456789.eE+-xXpP_aInNfF"
			var b strings.Builder
			for i, k := 0, 1+r.Intn(8); i < k; i++ {
				b.WriteByte(alphabet[r.Intn(len(alphabet))])
			}
			s = b.String()
		default: // subnormals and the edges of the exponent range
			s = pick("", "-") + "1" + pick("", "."+digits(17)) + "e" + pick("-", "") +
				strconv.Itoa(300+r.Intn(30))
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func main() {
	seen := map[string]bool{}
	for _, s := range append(handPicked, generated(3000)...) {
		if seen[s] || strings.ContainsAny(s, " \t\n\r") {
			continue
		}
		seen[s] = true
		v, err := prometheusParseFloat(s)
		switch {
		case err != nil:
			fmt.Printf("%s\terror\n", s)
		case math.IsNaN(v):
			fmt.Printf("%s\tnan\n", s)
		default:
			fmt.Printf("%s\t%016x\n", s, math.Float64bits(v))
		}
	}
}
