package format

import (
	"math"
	"strconv"
	"strings"
)

const noise = 1e-6 // float arithmetic's last-bit error, absorbed before a floor

// floorTo cuts v to dec decimals toward zero, after absorbing float noise; never -0.
func floorTo(v float64, dec int) float64 {
	p := math.Pow10(dec)
	if v < 0 {
		return -math.Floor(-v*p+noise)/p + 0
	}
	return math.Floor(v*p+noise) / p
}

// Count writes a count of things (keys, buckets, requests): exact below 100,000 (5,003),
// compact above (340k, 1.3M).
func Count(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "-9.2E18" // -n would overflow
		}
		return "-" + Count(-n)
	}
	switch {
	case n >= 1e9:
		return Decimal(float64(n)/1e9, 1) + "G"
	case n >= 1e6:
		return Decimal(float64(n)/1e6, 1) + "M"
	case n >= 1e5:
		return strconv.FormatInt((n+500)/1000, 10) + "k"
	}
	return GroupDigits(n)
}

// countOf is Count of a float; one too large for an int64 has an exponent.
func countOf(v float64) string {
	if math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return Count(int64(v))
}

// Tokens writes a number of tokens cut toward zero: 2 decimals below 10, 1 below 100, then
// as Count.
func Tokens(v float64) string {
	if s, ok := special(v); ok {
		return s
	}
	t := TokensShown(v)
	switch a := math.Abs(v); {
	case a >= 100:
		return countOf(t)
	case a >= 10:
		return Decimal(t, 1)
	}
	return Decimal(t, 2)
}

// TokensShown is v at the precision Tokens shows it, so levels that show the same compare
// equal.
func TokensShown(v float64) float64 {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return v
	case a >= 100:
		return floorTo(v, 0)
	case a >= 10:
		return floorTo(v, 1)
	}
	return floorTo(v, 2)
}

// RateShown is v at the precision PerSecond shows it.
func RateShown(v float64) float64 {
	if math.Abs(v) >= 99.95 || math.IsNaN(v) || math.IsInf(v, 0) {
		return math.Round(v)
	}
	r, err := strconv.ParseFloat(PerSecond(v), 64)
	if err != nil {
		return v
	}
	return r
}

// Rate writes a rate with its unit: "0.5/s", "1,500/s"; below 0.01/s per hour: "0.4/h".
func Rate(v float64) string {
	if a := math.Abs(v); a > 0 && a < 0.01 {
		return PerSecond(v*3600) + "/h"
	}
	return PerSecond(v) + "/s"
}

// PerSecond writes a rate's bare number: 2 decimals below 10, 1 below 100, then as a count;
// below 1 two significant digits, so a slow refill (0.0017) never reads as 0.
func PerSecond(v float64) string {
	if s, ok := special(v); ok {
		return s
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 99.95:
		return countOf(math.Round(v))
	case a >= 10:
		return Decimal(v, 1)
	case a >= 1:
		return Decimal(v, 2)
	}
	return Decimal(v, 1-int(math.Floor(math.Log10(a))))
}

// Percent writes a ratio in [0,1] as a floored whole percentage; above 0 and below 1% is
// "<1%".
func Percent(r float64) string {
	if s, ok := special(r); ok {
		return s
	}
	if r > 0 && r < 0.01-noise/100 {
		return "<1%"
	}
	p := floorTo(r*100, 0)
	if p >= 0 && p <= 100 {
		return percents[int(p)]
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// percents are Percent's whole percentages, 0% to 100%.
var percents = func() (p [101]string) {
	for i := range p {
		p[i] = strconv.Itoa(i) + "%"
	}
	return p
}()

// Axis writes a chart axis tick compactly: 0.5, 20, 500, 2.5k, 1.5M.
func Axis(v float64) string {
	if s, ok := special(v); ok {
		return s
	}
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return Decimal(v/1e9, 1) + "G"
	case a >= 1e6:
		return Decimal(v/1e6, 1) + "M"
	case a >= 1e3:
		return Decimal(v/1e3, 1) + "k"
	case a >= 100:
		return Decimal(v, 0)
	case a >= 10:
		return Decimal(v, 1)
	}
	return Decimal(v, 2)
}

func special(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "?", true
	case math.IsInf(v, 1):
		return "∞", true
	case math.IsInf(v, -1):
		return "-∞", true
	}
	return "", false
}

// Exact writes v in its shortest exact form, as typed back as an argument: 2.5, 1e+15.
func Exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Fixed writes v with exactly prec decimals: 1.00, 12.50.
func Fixed(v float64, prec int) string {
	if s, ok := special(v); ok {
		return s
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Decimal writes v with at most prec decimals, trailing zeros dropped: 2.5, 3.
func Decimal(v float64, prec int) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10) // the same digits, without the float's
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// Plural writes n (as Count) and what, with an s unless n is 1: "1 key", "5,003 keys".
func Plural[N ~int | ~int64](n N, what string) string {
	s := Count(int64(n)) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

// GroupDigits writes n with thousands separators: 10,000.
func GroupDigits[N ~int | ~int64](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Bytes writes an estimated size: "~1.2 MiB", "-" when nothing was measured.
func Bytes(n int64) string {
	if n <= 0 {
		return "-"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	if i == 0 {
		return "~" + strconv.FormatInt(n, 10) + " B"
	}
	return "~" + strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}
