package cmd

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// The plain progress line's "last second" is the second that ended at the tick: its
// figure is the report's per_second entry for that second, not the one before.
func TestLoadProgressLastSecondIsTheOneThatEnded(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// A full bucket of 20 refilling 10/s: the first second allows ~30, the next ~10 each.
	r := run(t, srv.URL(), "load", "persec", "--capacity", "20", "--rate", "10", "-c", "4", "-d", "4s", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep load.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, r.out)
	}
	line := regexp.MustCompile(`^([\d.]+)s/4s .*last second ([\d,.]+)/s allowed`)
	seen := 0
	for _, l := range strings.Split(r.errOut, "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, _ := strconv.ParseFloat(m[1], 64)
		got, _ := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		sec := int(at) - 1 // the last whole second by the tick (the time shown is truncated, never rounded up)
		if sec < 0 || sec >= len(rep.PerSecond) {
			t.Errorf("line %q: no second %d in per_second %v", l, sec, rep.PerSecond)
			continue
		}
		if want := float64(rep.PerSecond[sec].Allowed); got != want {
			t.Errorf("line %q: last second %v allowed, per_second[%d] says %v (per_second %v)", l, got, sec, want, rep.PerSecond)
		}
		seen++
	}
	if seen < 2 {
		t.Fatalf("want progress lines for seconds 1 to 3, got:\n%s", r.errOut)
	}
}
