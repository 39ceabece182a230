package tui

import (
	"strings"
	"testing"

	"github.com/muesli/termenv"
)

// dotColumns is which columns of a rendered chart hold a braille dot.
func dotColumns(chart string) map[int]bool {
	cols := map[int]bool{}
	for _, l := range strings.Split(chart, "\n") {
		for i, r := range []rune(stripANSI(l)) {
			if r > 0x2800 && r <= 0x28FF {
				cols[i] = true
			}
		}
	}
	return cols
}

// dotSpan is the first and last of w columns holding a dot (-1, -1: none).
func dotSpan(cols map[int]bool, w int) (first, last int) {
	first, last = -1, -1
	for c := 0; c < w; c++ {
		if cols[c] {
			if first < 0 {
				first = c
			}
			last = c
		}
	}
	return first, last
}

// TestLevelChartLeavesGaps: reads 8 s apart, amid reads 1 s apart (Redis was down, or the
// key gone with no known capacity), are not joined by a line: the chart shows a gap, not a
// refill ramp that never happened. A read missed now and then is still joined.
func TestLevelChartLeavesGaps(t *testing.T) {
	var hist []sample
	for s := -20; s <= -12; s++ {
		hist = append(hist, sample{at: int64(s) * 1e6, tokens: 1})
	}
	for s := -4; s <= 0; s++ {
		hist = append(hist, sample{at: int64(s) * 1e6, tokens: 9})
	}
	cols := dotColumns(levelChart(NewStyles(termenv.Ascii), hist, 0, 60, 10, 10))
	first, last := dotSpan(cols, 60)
	run, longest := 0, 0
	for c := first; c <= last; c++ {
		if cols[c] {
			run = 0
		} else if run++; run > longest {
			longest = run
		}
	}
	// 8 s of 20 over a graph of about 55 columns: about 20 columns without a dot.
	if first < 0 || longest < 12 {
		t.Fatalf("longest run of columns without a dot %d (dots from %d to %d): the 8 s without reads is drawn over", longest, first, last)
	}

	// Every other read missing (2 s apart amid 1 s): still one line, no column left empty.
	hist = hist[:0]
	for s := -20; s <= 0; s++ {
		if s%4 != 0 || s == 0 {
			hist = append(hist, sample{at: int64(s) * 1e6, tokens: float64(s + 20)})
		}
	}
	cols = dotColumns(levelChart(NewStyles(termenv.Ascii), hist, 0, 60, 10, 20))
	first, last = dotSpan(cols, 60)
	for c := first; c <= last; c++ {
		if !cols[c] {
			t.Fatalf("column %d empty between %d and %d: a missed read broke the line", c, first, last)
		}
	}
}
