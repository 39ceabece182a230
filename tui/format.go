package tui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// This file is the one formatting layer: every number a person reads, in a cmd table or
// line and in a tui view, goes through it, one rule per kind of value, so a bucket reads
// the same in list, inspect, watch and top.
//
//	tokens (levels, capacities, costs)  floored to what is shown, so a shown level is never
//	                                    more than the bucket holds: 0.99, 9.4, 63.2, 9,289,
//	                                    16,000, then 340k, 1.3M (as counts)
//	rates (per second)                  the same steps, rounded; below 1 two significant
//	                                    digits: 0.5/s, 12/s, 1,500/s; below 0.01/s per
//	                                    hour: 6.12/h
//	counts (keys, requests)             FormatCount: 5,003, then 340k, 1.3M
//	percentages                         whole, floored: 99.6% full is 99%, not full;
//	                                    above 0 and below 1%: <1%
//	durations                           850ms, 3.7s, 56s, 1m4s, 2h5m, 3d4h
//	TTLs                                a duration, "none" (no TTL), "-" (no key)
//	retry-after                         a duration, "never" (cost above capacity)
//	chart axis ticks                    FormatAxis, compact: 500, 2.5k, 10k, 1.5M

// noise absorbs float arithmetic's last-bit error before a floor (9.999999999999998 is 10).
const noise = 1e-6

// floorTo floors v to dec decimals.
func floorTo(v float64, dec int) float64 {
	p := math.Pow10(dec)
	return math.Floor(v*p+noise) / p
}

// FormatTokens writes a number of tokens: floored to 2 decimals below 10, 1 below 100,
// whole with thousands separators below 100,000, compact above (as FormatCount).
func FormatTokens(v float64) string {
	if s, ok := special(v); ok {
		return s
	}
	t := tokensShown(v)
	switch a := math.Abs(v); {
	case a >= 100:
		return countOf(t)
	case a >= 10:
		return trimFloat(t, 1)
	}
	return trimFloat(t, 2)
}

// tokensShown is v at the precision FormatTokens shows it, so levels read microseconds
// apart that show the same compare equal.
func tokensShown(v float64) float64 {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return v
	case a >= 100:
		return math.Floor(v + noise)
	case a >= 10:
		return floorTo(v, 1)
	}
	return floorTo(v, 2)
}

// rateShown is v at the precision FormatPerSecond shows it (whole from 100/s up), so
// rates read microseconds apart that show the same compare equal.
func rateShown(v float64) float64 {
	if math.Abs(v) >= 99.95 || math.IsNaN(v) || math.IsInf(v, 0) {
		return math.Round(v)
	}
	r, err := strconv.ParseFloat(FormatPerSecond(v), 64)
	if err != nil {
		return v
	}
	return r
}

// FormatRate writes a per-second rate with its unit: "0.5/s", "12/s", "1,500/s"; a rate
// below 0.01/s per hour, where it reads better and fits a column: "0.4/h" (0.00011/s).
func FormatRate(v float64) string {
	if a := math.Abs(v); a > 0 && a < 0.01 {
		return FormatPerSecond(v*3600) + "/h"
	}
	return FormatPerSecond(v) + "/s"
}

// FormatPerSecond writes the number of a per-second rate, for columns and fields that
// name the unit themselves: rounded, 2 decimals below 10, 1 below 100, then whole as a
// count; below 1 two significant digits, so a slow refill (0.0017) never reads as 0.
func FormatPerSecond(v float64) string {
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
		return trimFloat(v, 1)
	case a >= 1:
		return trimFloat(v, 2)
	}
	return trimFloat(v, 1-int(math.Floor(math.Log10(a))))
}

// FormatPercent writes a ratio in [0,1] as a whole percentage, floored: a bucket is shown
// 100% full only when it is; a share above 0 and below 1% is "<1%", never 0%.
func FormatPercent(r float64) string {
	if s, ok := special(r); ok {
		return s
	}
	if r > 0 && r < 0.01-noise/100 {
		return "<1%"
	}
	return strconv.FormatFloat(math.Floor(r*100+noise), 'f', 0, 64) + "%"
}

// FormatAxis writes a chart axis tick compactly, where width is scarce: 0.5, 20, 500, 2.5k,
// 10k, 1.5M.
func FormatAxis(v float64) string {
	if s, ok := special(v); ok {
		return s
	}
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimFloat(v/1e9, 1) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6, 1) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3, 1) + "k"
	case a >= 100:
		return trimFloat(v, 0)
	case a >= 10:
		return trimFloat(v, 1)
	}
	return trimFloat(v, 2)
}

// special writes the values that are not finite numbers.
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

func trimFloat(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// FormatDuration writes a duration for a person at a glance: 850ms, 3.7s, 1m4s, 2h5m, 3d4h.
func FormatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + FormatDuration(-d)
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Microsecond:
		return "<1µs"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return trimFloat(d.Seconds(), 1) + "s"
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		return compound(d, time.Minute, "m", time.Second, "s")
	case d < 24*time.Hour:
		return compound(d, time.Hour, "h", time.Minute, "m")
	}
	return compound(d, 24*time.Hour, "d", time.Hour, "h")
}

func compound(d, big time.Duration, bigU string, small time.Duration, smallU string) string {
	s := strconv.FormatInt(int64(d/big), 10) + bigU
	if r := (d % big) / small; r > 0 {
		s += strconv.FormatInt(int64(r), 10) + smallU
	}
	return s
}

// FormatTTL writes a key's TTL as Redis reports it: -1 is no TTL ("none"), -2 no key ("-").
func FormatTTL(d time.Duration) string {
	switch {
	case d == -1:
		return "none"
	case d == -2:
		return "-"
	case d < 0:
		return "?"
	}
	return FormatDuration(d)
}

// FormatRetryAfter writes how long until a request can pass; negative is never (its cost
// is above capacity).
func FormatRetryAfter(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return FormatDuration(d)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fit truncates s (which may hold escape codes) to width cells with an ellipsis and pads it
// with spaces to exactly width.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	s = ansi.Truncate(s, width, "…")
	if w := lipgloss.Width(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// TruncMiddle cuts s to at most width cells by replacing its middle with an ellipsis, so
// both the start and the end of a key stay: keys of one family differ in their tail
// (rl:{tenant-4711}:r…/orders, rl:{tenant-4711}:r…/users). s is plain text (pass a key
// through SafeKey first); the tail keeps the larger half.
func TruncMiddle(s string, width int) string {
	w := ansi.StringWidth(s)
	switch {
	case w <= width:
		return s
	case width <= 0:
		return ""
	case width == 1:
		return "…"
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}

// trunc truncates s to width cells with an ellipsis, without padding.
func trunc(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// padLeft right-aligns s in width cells.
func padLeft(s string, width int) string {
	s = trunc(s, width)
	if w := lipgloss.Width(s); w < width {
		return strings.Repeat(" ", width-w) + s
	}
	return s
}

// Plural writes n (as FormatCount) and what, with an s unless n is 1.
func Plural(n int, what string) string {
	s := FormatCount(int64(n)) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

// groupDigits writes n with thousands separators: 10,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
