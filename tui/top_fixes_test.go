package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Two buckets showing the same fill keep their order (by key) across refreshes although
// their raw fills, read microseconds apart, swap; the cursor stays on its bucket.
func TestTopEqualFillsKeepOrder(t *testing.T) {
	snap := func(round int, a, b float64) TopSnapshot {
		now := at(0) + int64(round)*1_000_000
		return TopSnapshot{States: []bucket.State{
			native("rate:b", now+3, b, 50, 5, 0, 0),
			native("rate:a", now+7, a, 50, 5, 0, 0),
			native("rate:c", now, 40, 50, 5, 0, 0),
		}}
	}
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	want := []string{"rate:a", "rate:b", "rate:c"}
	for i := 0; i < 4; i++ {
		a, b := 25.00002, 25.00001 // a reads fuller by a hair, then b does
		if i%2 == 1 {
			a, b = b, a
		}
		src.feed <- topRead{snap: snap(i, a, b)}
		// The next read begins only once this one is on screen.
		screen := waitView(t, tm, p, func(string) bool { return src.calls.Load() > int32(i+1) })
		keys, sel := rowKeys(screen)
		wantSel := "rate:b"
		if i == 0 {
			wantSel = "rate:a"
		}
		if strings.Join(keys, " ") != strings.Join(want, " ") || sel != wantSel {
			t.Errorf("read %d: rows %v (selected %q), want %v with %s selected", i+1, keys, sel, want, wantSel)
		}
		if i == 0 {
			tm.Send(press("j"))
			waitView(t, tm, p, func(s string) bool { _, sel := rowKeys(s); return sel != "" && sel != keys[0] })
		}
	}
}

// Esc closes the ? help, in the table and in the detail pane; the help opened in one does
// not show in the other.
func TestTopEscClosesHelp(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("33 buckets"))
	const helpShown = "Redis cost per refresh"
	tm.Send(press("?"))
	waitView(t, tm, p, contains(helpShown))
	tm.Send(press("esc"))
	waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, helpShown) })

	tm.Send(press("?"))
	waitView(t, tm, p, contains(helpShown))
	tm.Send(press("enter"))
	screen := waitView(t, tm, p, contains("detail rate:"))
	if strings.Contains(screen, helpShown) {
		t.Errorf("the table's help shows in the detail pane:\n%s", screen)
	}
	tm.Send(press("?"))
	waitView(t, tm, p, contains(helpShown))
	tm.Send(press("esc")) // closes the help, stays in the detail pane
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, helpShown) })
	if !strings.Contains(screen, "detail rate:") {
		t.Errorf("esc with the help open left the detail pane:\n%s", screen)
	}
	tm.Send(press("?"))
	waitView(t, tm, p, contains(helpShown))
	tm.Send(press("enter")) // back to the table, without the detail's help
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "detail rate:") })
	if strings.Contains(screen, "Redis cost") {
		t.Errorf("the detail pane's help shows in the table:\n%s", screen)
	}
}

// When top keeps part of a large keyspace, the filter says it searched the buckets kept,
// not every key, and the header keeps the coverage in view at 80 columns.
func TestTopFilterSaysWhatItSearched(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	snap := fleet(0)
	snap.Coverage, snap.Keyspace = "scanned 12,000 of ~20k keys", 20_000
	src.feed <- topRead{snap: snap}
	screen := waitView(t, tm, p, contains("33 kept of ~20,000 keys"))
	checkSize(t, screen, 80, 24)
	tm.Send(press("3"))
	screen = waitView(t, tm, p, contains("sort name"))
	if !strings.Contains(screen, "of 33 kept") {
		t.Errorf("the name sort's footer does not say the rows are the kept buckets:\n%s", screen)
	}
	tm.Send(press("/"))
	waitView(t, tm, p, contains("part of the key (filters the 33 buckets kept)"))
	tm.Send(press("user:15000"))
	screen = waitView(t, tm, p, contains(`none of the 33 buckets kept contains "user:15000"; try 'bucketctl inspect KEY'`))
	checkSize(t, screen, 80, 24)
	if strings.Contains(screen, "no bucket key contains") {
		t.Errorf("the filter claims no key contains the text:\n%s", screen)
	}
	tm.Send(press("enter"))
	screen = waitView(t, tm, p, contains(`filter "user:15000" of the 33 kept`))
	checkSize(t, screen, 80, 24)
}

// Sorted by busy, rows whose decision rates jitter (Poisson traffic: 14, 18, 15, 17/s)
// keep their order and the cursor its row; a rate that really moved (to 60/s) reorders.
func TestTopBusyOrderIsSteady(t *testing.T) {
	var counts = map[string]int64{}
	snap := func(round int, rates map[string]int64) TopSnapshot {
		now := at(time.Duration(round) * time.Second)
		var states []bucket.State
		for _, k := range []string{"rate:a", "rate:b", "rate:c"} {
			counts[k] += rates[k]
			states = append(states, native(k, now, 25, 50, 5, counts[k], 0))
		}
		return TopSnapshot{States: states}
	}
	opts := topOpts()
	opts.Sort = SortBusy
	src := newFakeTop()
	tm, p := run(t, NewTop(src, opts), 80, 24)
	rounds := []struct {
		rates map[string]int64
		want  string
	}{
		{map[string]int64{"rate:a": 0, "rate:b": 0, "rate:c": 0}, ""},
		{map[string]int64{"rate:a": 16, "rate:b": 15, "rate:c": 5}, "rate:a rate:b rate:c"},
		{map[string]int64{"rate:a": 14, "rate:b": 18, "rate:c": 4}, "rate:a rate:b rate:c"},
		{map[string]int64{"rate:a": 17, "rate:b": 14, "rate:c": 6}, "rate:a rate:b rate:c"},
		{map[string]int64{"rate:a": 15, "rate:b": 19, "rate:c": 5}, "rate:a rate:b rate:c"},
		{map[string]int64{"rate:a": 15, "rate:b": 16, "rate:c": 60}, "rate:c rate:a rate:b"},
	}
	for i, r := range rounds {
		src.feed <- topRead{snap: snap(i, r.rates)}
		screen := waitView(t, tm, p, func(string) bool { return src.calls.Load() > int32(i+1) })
		if r.want == "" {
			continue
		}
		keys, _ := rowKeys(screen)
		if got := strings.Join(keys, " "); got != r.want {
			t.Errorf("read %d: rows %s, want %s", i+1, got, r.want)
		}
	}
}

func TestSteady(t *testing.T) {
	for _, c := range []struct{ old, now, want float64 }{
		{16, 14, 16}, {16, 18, 16}, {16, 22, 22}, {60, 45, 60}, {60, 30, 30},
		{1, 2.5, 1}, {1, 3.5, 3.5}, {0, 1, 1}, {1, 0, 0}, {-1, 5, 5}, {5, -1, -1},
	} {
		if got := steady(c.old, c.now); got != c.want {
			t.Errorf("steady(%v, %v) = %v, want %v", c.old, c.now, got, c.want)
		}
	}
}
