package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
)

// chartSnap is a run of d with every second up to elapsed complete.
func chartSnap(d, elapsed time.Duration) load.Snapshot {
	s := load.Snapshot{Spec: bucket.Spec{Capacity: 20, Rate: 10}, Duration: d, Elapsed: elapsed, Running: elapsed < d}
	for i := 0; i < int(elapsed/time.Second); i++ {
		s.PerSecond = append(s.PerSecond, load.Second{Allowed: int64(10 + i%3), Denied: int64(5000 + 100*i)})
	}
	return s
}

var axisLabel = regexp.MustCompile(`\d+(?:\.\d+)?(?:h|m|s)(?:\d+(?:m|s))?`)

// The time axis spans a duration-bounded run, labelled at round steps (1s, 2s, 5s, 10s…)
// evenly spaced, each at its true position.
func TestRatesChartTimeAxis(t *testing.T) {
	for _, d := range []time.Duration{5 * time.Second, 30 * time.Second} {
		for _, elapsed := range []time.Duration{2 * time.Second, d} {
			for _, w := range []int{60, 80, 120} {
				out := ansi.Strip(ratesChart(testStyles, chartSnap(d, elapsed), w, 12))
				rows := strings.Split(out, "\n")
				axis := rows[len(rows)-1]
				locs := axisLabel.FindAllStringIndex(axis, -1)
				var at []time.Duration
				var cols []int
				for _, l := range locs {
					v, err := time.ParseDuration(axis[l[0]:l[1]])
					if err != nil {
						t.Fatalf("label %q: %v", axis[l[0]:l[1]], err)
					}
					at = append(at, v)
					cols = append(cols, ansi.StringWidth(axis[:l[0]]))
				}
				what := func() string {
					return d.String() + " run at " + elapsed.String() + ", width " + strconv.Itoa(w) + ":\n" + out
				}
				if len(at) < 3 {
					t.Errorf("%s: want 3 labels at least, got %v", what(), at)
					continue
				}
				step := at[1] - at[0]
				if at[0] != 0 || !roundStep(step) {
					t.Errorf("%s: labels %v: want 0 first and a round step", what(), at)
				}
				for i := 1; i < len(at); i++ {
					if at[i]-at[i-1] != step {
						t.Errorf("%s: labels %v are not evenly stepped", what(), at)
						break
					}
				}
				if last := at[len(at)-1]; last > d || last+2*step < d {
					t.Errorf("%s: labels %v: the axis should span the run's %v", what(), at, d)
				}
				// Evenly placed: the columns between labels differ by a cell at most.
				lo, hi := 1<<30, 0
				for i := 1; i < len(cols); i++ {
					lo, hi = min(lo, cols[i]-cols[i-1]), max(hi, cols[i]-cols[i-1])
				}
				if hi-lo > 1 {
					t.Errorf("%s: labels at columns %v, not evenly placed", what(), cols)
				}
			}
		}
	}
}

func roundStep(d time.Duration) bool {
	for _, s := range []int{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600} {
		if d == time.Duration(s)*time.Second {
			return true
		}
	}
	return false
}
