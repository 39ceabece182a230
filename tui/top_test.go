package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/bucketctl/bucketctl/bucket"
)

type topRead struct {
	snap TopSnapshot
	err  error
}

// fakeTop is a TopSource returning what the test sends and recording resets.
type fakeTop struct {
	feed  chan topRead
	calls atomic.Int32 // Fetch calls begun

	mu     sync.Mutex
	resets []string
}

func newFakeTop() *fakeTop { return &fakeTop{feed: make(chan topRead)} }

func (f *fakeTop) Fetch(ctx context.Context) (TopSnapshot, error) {
	f.calls.Add(1)
	select {
	case r := <-f.feed:
		return r.snap, r.err
	case <-ctx.Done():
		return TopSnapshot{}, ctx.Err()
	}
}

func (f *fakeTop) Reset(_ context.Context, st bucket.State) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = append(f.resets, st.Key)
	return nil
}

func (f *fakeTop) resetKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.resets...)
}

func topOpts() TopOptions {
	return TopOptions{Match: "rate:*", LiveOptions: liveOpts()}
}

// fleet is a mix of buckets read at server time now (round 0 or 1, ten seconds apart):
// 30 native user buckets of varied fill, a few of them denying, a spring bucket with its
// spec from a rule, a go-bench bucket of unknown spec and a key that is not a bucket.
func fleet(round int) TopSnapshot {
	now := at(time.Duration(round) * 10 * time.Second)
	var states []bucket.State
	for i := 1; i <= 30; i++ {
		fill := float64((i*37)%100) / 100
		var denied int64
		if i%7 == 0 {
			denied = int64(round * i * 10)
		}
		states = append(states, native(fmt.Sprintf("rate:user:%02d", i), now, fill*50, 50, 5,
			int64(round*i*20), denied))
	}
	spring := bucket.State{Key: "rate:spring:login", Type: "hash", Exists: true, Layout: bucket.Presets["spring"],
		Stored: bucket.Level{Tokens: 3, TS: now - 2_000_000}, Now: now,
		Spec: bucket.Spec{Capacity: 20, Rate: 1}, SpecSource: "rule login", Tokens: 5, TTL: -1}
	bench := bucket.State{Key: "rate:bench:x", Type: "hash", Exists: true, Layout: bucket.Presets["go-bench"],
		Detected: true, Stored: bucket.Level{Tokens: 7, TS: now}, Now: now, Tokens: 7, TTL: 5 * time.Second}
	list := bucket.State{Key: "rate:queue", Type: "list", Exists: true, Now: now, TTL: -1,
		Problem: "holds a list, not a bucket"}
	states = append(states, spring, bench, list)
	return TopSnapshot{States: states, Cost: Cost{Commands: 101, RoundTrips: 2, Detail: "1 SCAN page, 1 inspect pipeline"},
		Took: 3 * time.Millisecond}
}

func press(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// rowKeys lists the keys of the table's rows, top to bottom, and the selected one.
func rowKeys(screen string) (keys []string, selected string) {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, "▸"))
		if len(f) == 0 || !strings.HasPrefix(f[0], "rate:") {
			continue
		}
		keys = append(keys, f[0])
		if strings.HasPrefix(l, "▸") {
			selected = f[0]
		}
	}
	return keys, selected
}

func TestTopGoldenAndResize(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	src.feed <- topRead{snap: fleet(1)}
	// The second snapshot has arrived when the rates are counted (user:14 denies 14/s).
	screen := waitView(t, tm, p, func(s string) bool {
		return contains("33 buckets", "DENY/s", "rate:user:14")(s) && strings.Contains(s, " 14   1m30s")
	})
	checkSize(t, screen, 80, 24)
	keys, sel := rowKeys(screen)
	// Sorted by fill, emptiest first: user:27 holds 99%·... (27·37 mod 100 = 99), user:19 3%.
	if len(keys) < 10 || keys[0] != "rate:user:19" || sel != "rate:user:19" {
		t.Errorf("rows %v (selected %q), want the emptiest bucket rate:user:19 first and selected", keys, sel)
	}
	for _, want := range []string{"+", "more below", "sort fill ↑", "TTL"} {
		if !strings.Contains(screen, want) {
			t.Errorf("80x24 screen lacks %q:\n%s", want, screen)
		}
	}
	golden(t, "80x24", screen)

	tm.Send(tea.WindowSizeMsg{Width: 160, Height: 48})
	screen = waitView(t, tm, p, contains("LAYOUT", "ALLOW/s", "USE/s"))
	checkSize(t, screen, 160, 48)
	if keys, _ := rowKeys(screen); len(keys) != 33 {
		t.Errorf("160x48 shows %d rows, want all 33", len(keys))
	}
	golden(t, "160x48", screen)

	tm.Send(tea.WindowSizeMsg{Width: 50, Height: 16})
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "CAP") && strings.Count(s, "\n") == 15 })
	checkSize(t, screen, 50, 16)
	golden(t, "50x16", screen)

	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	tm.Send(press("?"))
	screen = waitView(t, tm, p, contains("Redis cost per refresh: 2 round trips, 101 commands"))
	golden(t, "help", screen)
}

func TestTopSortFilterDetail(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 100, 30)
	src.feed <- topRead{snap: fleet(0)}
	src.feed <- topRead{snap: fleet(1)}
	waitView(t, tm, p, contains("33 buckets", "DENY/s"))

	tm.Send(press("2"))
	// Deny rates need both snapshots: wait until the second one is in and sorted.
	screen := waitView(t, tm, p, func(s string) bool {
		keys, _ := rowKeys(s)
		return strings.Contains(s, "sort deny/s ↓") && len(keys) > 0 && keys[0] == "rate:user:28"
	})
	keys, _ := rowKeys(screen)
	// user:28 denies 28 per second, user:21 21, user:14 14, user:07 7.
	if strings.Join(keys[:4], " ") != "rate:user:28 rate:user:21 rate:user:14 rate:user:07" {
		t.Errorf("by deny rate: %v", keys)
	}
	tm.Send(press("3"))
	screen = waitView(t, tm, p, contains("sort name"))
	if keys, _ = rowKeys(screen); keys[0] != "rate:bench:x" || keys[1] != "rate:queue" {
		t.Errorf("by name: %v", keys)
	}
	tm.Send(press("s"))
	waitView(t, tm, p, contains("sort fill ↑"))

	tm.Send(press("/"))
	for _, k := range "user:1" {
		tm.Send(press(string(k)))
	}
	tm.Send(press("enter"))
	screen = waitView(t, tm, p, contains(`filter "user:1"`))
	keys, _ = rowKeys(screen)
	if len(keys) != 10 { // user:10..19
		t.Errorf("filter user:1 shows %v", keys)
	}
	for _, k := range keys {
		if !strings.Contains(k, "user:1") {
			t.Errorf("filter user:1 shows %s", k)
		}
	}
	golden(t, "filtered", screen)

	// The selection stays on the emptiest bucket, user:19; the next one is user:11.
	tm.Send(press("down"))
	tm.Send(press("enter"))
	screen = waitView(t, tm, p, contains("detail rate:user:11", "allowed 22/s"))
	golden(t, "detail", screen)
	tm.Send(press("esc"))
	screen = waitView(t, tm, p, contains("KEY"))
	if _, sel := rowKeys(screen); sel != "rate:user:11" {
		t.Errorf("after the detail pane the selection is %q, want rate:user:11", sel)
	}
	tm.Send(press("esc")) // clears the filter
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, `filter "`) })
	if keys, _ = rowKeys(screen); len(keys) < 20 {
		t.Errorf("esc left %d rows", len(keys))
	}
}

func TestTopResetNeedsConfirmation(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:19"))

	tm.Send(press("r"))
	screen := waitView(t, tm, p, contains("Reset rate:user:19?", "y reset • n/esc cancel"))
	golden(t, "confirm", screen)
	tm.Send(press("n"))
	waitView(t, tm, p, contains("reset cancelled"))
	if got := src.resetKeys(); len(got) != 0 {
		t.Fatalf("n reset %v", got)
	}

	tm.Send(press("down"))
	tm.Send(press("r"))
	waitView(t, tm, p, contains("Reset rate:user:11?"))
	tm.Send(press("x")) // not an answer: the dialog stays, nothing is reset
	tm.Send(press("y"))
	waitView(t, tm, p, contains("reset rate:user:11: it reads as full now"))
	if got := src.resetKeys(); len(got) != 1 || got[0] != "rate:user:11" {
		t.Fatalf("after y the resets are %v, want [rate:user:11]", got)
	}
	// The reset asks for a refresh at once: the next snapshot is taken.
	select {
	case src.feed <- topRead{snap: fleet(1)}:
	case <-time.After(10 * time.Second):
		t.Fatal("no refresh after the reset")
	}

	// From the detail pane, r resets the bucket shown.
	tm.Send(press("enter"))
	waitView(t, tm, p, contains("detail rate:user:11"))
	tm.Send(press("r"))
	waitView(t, tm, p, contains("Reset rate:user:11?"))
	tm.Send(press("n"))
	waitView(t, tm, p, contains("detail rate:user:11", "reset cancelled"))
	if got := src.resetKeys(); len(got) != 1 {
		t.Fatalf("resets %v after n", got)
	}
}

func TestTopUnreachableThenRecovers(t *testing.T) {
	src := newFakeTop()
	opts := topOpts()
	var clk manualClock
	opts.Now = clk.now
	tm, p := run(t, NewTop(src, opts), 80, 24)
	src.feed <- topRead{err: refused()}
	screen := waitView(t, tm, p, contains("Redis unreachable at 127.0.0.1:6379"))
	if strings.Contains(screen, "showing data") {
		t.Errorf("the banner speaks of data before any arrived:\n%s", screen)
	}
	src.feed <- topRead{snap: fleet(0)}
	src.feed <- topRead{snap: fleet(1)}
	// The second snapshot is drawn (its deny rate, 14/s on rate:user:14, needs both) before
	// the clock moves: the data's age counts from it.
	waitView(t, tm, p, func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "rate:user:14") && slices.Contains(strings.Fields(l), "14") {
				return true
			}
		}
		return false
	})
	clk.advance(time.Second)
	src.feed <- topRead{err: refused()}
	screen = waitView(t, tm, p, contains("showing data from 1s ago", "rate:user:19"))
	checkSize(t, screen, 80, 24)
	golden(t, "unreachable", screen)
	src.feed <- topRead{snap: fleet(2)}
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "unreachable") })
	if !strings.Contains(screen, "rate:user:19") {
		t.Errorf("no rows after recovery:\n%s", screen)
	}
}

func TestTopTenThousandBuckets(t *testing.T) {
	now := at(0)
	states := make([]bucket.State, 10000)
	for i := range states {
		states[i] = native(fmt.Sprintf("rate:tenant:%05d", i), now, float64((i*7919)%10000)/100, 100, 10, 0, 0)
	}
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: TopSnapshot{States: states, Took: 2500 * time.Millisecond,
		Cost: Cost{Commands: 30021, RoundTrips: 21}}}
	screen := waitView(t, tm, p, contains("10,000 buckets"))
	checkSize(t, screen, 80, 24)
	keys, _ := rowKeys(screen)
	if len(keys) == 0 || keys[0] != "rate:tenant:00000" {
		t.Fatalf("first row %v, want the empty bucket rate:tenant:00000", keys)
	}
	for _, want := range []string{fmt.Sprintf("1–%d of 10,000", len(keys)), fmt.Sprintf("+%d,%03d more below", (10000-len(keys))/1000, (10000-len(keys))%1000),
		"refresh took 2.5s (interval 10ms)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	tm.Send(press("G"))
	screen = waitView(t, tm, p, contains("of 10,000"))
	if _, sel := rowKeys(screen); sel == "" || !strings.Contains(screen, "10,000 of 10,000") {
		t.Errorf("end key: selected %q\n%s", sel, screen)
	}
}

func TestTopNeverOverlapsFetches(t *testing.T) {
	src := &slowTop{}
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	waitView(t, tm, p, func(string) bool { return src.calls.Load() >= 5 })
	if m := src.most.Load(); m != 1 {
		t.Errorf("%d fetches were in flight at once, want 1", m)
	}
	tm.Send(press("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// slowTop takes three intervals per fetch and records how many run at once.
type slowTop struct{ inflight, most, calls atomic.Int32 }

func (s *slowTop) Fetch(context.Context) (TopSnapshot, error) {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	c := s.calls.Add(1)
	time.Sleep(30 * time.Millisecond)
	return fleet(int(c)), nil
}

func (s *slowTop) Reset(context.Context, bucket.State) error { return nil }

// TestTopDetailUsesKeyCost: the detail pane's retry-after assumes the cost the key's rule
// gives (CostOf), as watch does on the same key: a cost above capacity never succeeds.
func TestTopDetailUsesKeyCost(t *testing.T) {
	src := newFakeTop()
	opts := topOpts()
	opts.CostOf = func(key string) float64 {
		if key == "rate:user:19" {
			return 100 // capacity 50
		}
		return 1
	}
	tm, p := run(t, NewTop(src, opts), 100, 30)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:19"))
	tm.Send(press("enter")) // the selection starts on the emptiest bucket, user:19
	waitView(t, tm, p, contains("detail rate:user:19", "retry-after never: cost exceeds capacity"))
}
