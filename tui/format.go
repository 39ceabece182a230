package tui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// FormatTokens writes a token count compactly: 63.2, 1500, 12.5k, 3.1M.
func FormatTokens(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "?"
	case a >= 1e9:
		return trimFloat(v/1e9, 1) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6, 1) + "M"
	case a >= 1e4:
		return trimFloat(v/1e3, 1) + "k"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return trimFloat(v, 1)
	}
	return trimFloat(v, 2)
}

// FormatRate writes a per-second rate: "12/s", "0.5/s", "1.2k/s".
func FormatRate(v float64) string { return FormatTokens(v) + "/s" }

// FormatPercent writes a ratio in [0,1] as a whole percentage.
func FormatPercent(r float64) string {
	return strconv.FormatFloat(math.Round(r*100), 'f', 0, 64) + "%"
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

// FormatTTL writes a key's TTL as Redis reports it: -1 is no TTL, -2 no key.
func FormatTTL(d time.Duration) string {
	switch {
	case d == -1:
		return "none"
	case d == -2:
		return "gone"
	case d < 0:
		return "?"
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

// Plural writes n (with thousands separators) and what, with an s unless n is 1.
func Plural(n int, what string) string {
	s := groupDigits(n) + " " + what
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
