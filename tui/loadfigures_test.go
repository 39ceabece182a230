package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/load"
)

// TestLoadFiguresOneRule: a load run's figures read by one rule in the report, the
// comparison and the live view: the measured duration as format.Seconds (the theoretical
// maximum's multiplicand included), ops/s as a rate (PerSecond, rounded), the progress as
// format.Percent.
func TestLoadFiguresOneRule(t *testing.T) {
	r := loadReport(load.Lua, 40, 40, 0)
	r.DurationS, r.OpsPerSec = 9.9996, 1234.6
	report := ansi.Strip(RenderLoadReport(testStyles, r, 120))
	mustShow(t, "report", report, "measured 9.999s", "(capacity + rate × 9.999s)", "throughput 1,235/s")
	compare := ansi.Strip(RenderLoadComparison(testStyles, []load.Report{r}, 120))
	mustShow(t, "comparison", compare, "each run 9.999s on a fresh key")
	if row := lineWith(compare, "lua "); !strings.Contains(row, " 1,235 ") {
		t.Errorf("comparison ops/s: %q, want 1,235 (a rate, rounded as the report's 1,235/s)", row)
	}

	m := NewLoad(newSnapSource(load.Snapshot{}).get, LoadOptions{Styles: &testStyles})
	m.snap, m.has, m.w = loadSnap(30*time.Millisecond, load.Lua), true, 80
	if got := ansi.Strip(m.progressLine()); !strings.HasSuffix(got, "  <1% · 30ms of 10s") {
		t.Errorf("progress at 0.3%%: %q, want it to end \"  <1%% · 0s of 10s\" (format.Percent)", got)
	}
	m.snap = loadSnap(4560*time.Millisecond, load.Lua)
	if got := ansi.Strip(m.progressLine()); !strings.HasSuffix(got, "  45% · 4.5s of 10s") {
		t.Errorf("progress at 45.6%%: %q", got)
	}
}

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
