package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/tui"
)

// TestTopShowsHotBucket: among 20,000 buckets, with a budget that scans a few hundred keys a
// refresh, a bucket hammered at the end of the keyspace shows on top's first screen, first
// and marked, long before the scan could reach it; a hammered counter does not.
func TestTopShowsHotBucket(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	fillBuckets(t, c, "tb:", 20000)
	hammerKeys(t, c, "tb:99999", "tb:web", "tb:views")
	styles := tui.NewStyles(termenv.Ascii)
	src := NewTopSource(bucket.NewStore(c), TopParams{Match: "tb:*", Interval: 200 * time.Millisecond, Budget: 500})
	t.Cleanup(src.Close)
	m := tui.NewTop(src, tui.TopOptions{Match: "tb:*", LiveOptions: tui.LiveOptions{Addr: srv.Addr(),
		Interval: 200 * time.Millisecond, Styles: &styles}})
	p := &viewProbe{Model: m, views: make(chan string, 1)}
	tm := teatest.NewTestModel(t, *p, teatest.WithInitialTermSize(120, 16))
	t.Cleanup(func() { _ = tm.Quit() })
	var screen string
	redistest.WaitFor(t, 10*time.Second, "top to show the hammered buckets", func() bool {
		tm.Send(snapMsg{})
		select {
		case screen = <-p.views:
		case <-time.After(time.Second):
			return false
		}
		return strings.Contains(screen, "tb:99999") && strings.Contains(screen, "tb:web")
	})
	if !strings.Contains(screen, "hot now (client tracking)") {
		t.Errorf("no hot line:\n%s", screen)
	}
	var rows []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "tb:") || strings.HasPrefix(l, "! ") || strings.HasPrefix(l, "▸ ") {
			rows = append(rows, l)
		}
	}
	if len(rows) < 2 || !strings.Contains(rows[0]+rows[1], "tb:99999") || !strings.Contains(rows[0]+rows[1], "tb:web") {
		t.Fatalf("the hammered buckets should be the first rows:\n%s", screen)
	}
	for _, l := range rows[:2] {
		if strings.Contains(l, "tb:99999") && !strings.HasPrefix(l, "▸ ") && !strings.HasPrefix(l, "! ") {
			t.Errorf("row not marked hot: %q", l)
		}
	}
	if strings.Contains(screen, "tb:views") {
		t.Errorf("a counter is not a bucket:\n%s", screen)
	}
	if strings.Contains(screen, "pass 2") {
		t.Errorf("the scan went round (the test's point is that it has not):\n%s", screen)
	}
}
