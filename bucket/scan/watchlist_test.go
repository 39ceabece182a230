package scan_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// TestWatchlistBoundedAndPinned: the Watchlist keeps at most 3 × Keep buckets whatever the
// keyspace, each refresh within its budget, and a pinned bucket that no ordering would keep
// stays until it is deleted.
func TestWatchlistBoundedAndPinned(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < 2000; i++ {
		pipe.HSet(ctx, fmt.Sprintf("w:%04d", i), "tokens", 10-i%10, "last_refill", "1700000000.5")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	st := bucket.NewStore(c)
	l := bucket.Presets["express"]
	wl, err := scan.NewWatchlist(ctx, st, scan.WatchOptions{Keep: 5, Budget: 500, Options: scan.Options{Match: "w:*",
		Resolve: func(string) bucket.Target {
			return bucket.Target{Layout: &l, Spec: bucket.Spec{Capacity: 10, Rate: 1e-9}}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	const pin = "w:1500" // full, and far from the first by name
	wl.Keep(pin)
	var res scan.WatchResult
	for i := 0; i < 30 && res.Passes == 0; i++ {
		if res, err = wl.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if res.Commands > 500 || len(res.States) > 16 {
			t.Fatalf("refresh %d: %d commands (budget 500), %d kept (at most 3 × 5 + the pinned one)", i, res.Commands, len(res.States))
		}
	}
	if res.Passes == 0 {
		t.Fatal("no whole pass in 30 refreshes")
	}
	has := func(key string) bool {
		for _, s := range res.States {
			if s.Key == key {
				return true
			}
		}
		return false
	}
	if res.Whole {
		t.Fatal("2000 buckets kept 3 × 5: said to be whole")
	}
	if !has(pin) || !has("w:0000") {
		t.Fatalf("kept %d buckets without the pinned %s or the first by name", len(res.States), pin)
	}
	c.Del(ctx, pin)
	if res, err = wl.Refresh(ctx); err != nil || has(pin) {
		t.Fatalf("deleted pinned bucket still kept (%v)", err)
	}
}

// TestWatchlistWhole: on a keyspace that fits, a whole pass says the rows are every bucket.
func TestWatchlistWhole(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		c.HSet(ctx, fmt.Sprintf("s:%02d", i), "tokens", "3", "last_refill", "1700000000.5")
	}
	wl, err := scan.NewWatchlist(ctx, bucket.NewStore(c), scan.WatchOptions{Options: scan.Options{Match: "s:*"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := wl.Refresh(ctx)
	if err != nil || !res.Whole || len(res.States) != 30 {
		t.Fatalf("whole %v, %d states, %v", res.Whole, len(res.States), err)
	}
}

// TestWatchlistLimit: with a limit, each pass looks at the first Limit buckets found only.
func TestWatchlistLimit(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < 2000; i++ {
		pipe.HSet(ctx, fmt.Sprintf("l:%04d", i), "tokens", "3", "last_refill", "1700000000.5")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	wl, err := scan.NewWatchlist(ctx, bucket.NewStore(c), scan.WatchOptions{Limit: 100, Options: scan.Options{Match: "l:*"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := wl.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passes != 1 || len(res.States) != 100 || res.Scanned >= 2000 {
		t.Fatalf("passes %d, %d states, %d keys scanned: want one pass over the first 100 buckets", res.Passes, len(res.States), res.Scanned)
	}
}

// TestWatchlistNeverPassesItsBudget: SCAN's COUNT is a hint, and a page often holds a few
// keys more (SCAN returns whole hash-table buckets). Over a whole pass of 10,000 buckets with
// a budget of 100 commands and pages of 10, no refresh sends more than 100 commands (the
// server's own count), and every bucket is still scanned once.
func TestWatchlistNeverPassesItsBudget(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const n = 10000
	for start := 0; start < n; start += 1000 {
		pipe := c.Pipeline()
		for i := start; i < start+1000; i++ {
			pipe.HSet(ctx, fmt.Sprintf("nb:%05d", i), "tokens", "3", "ts", "1700000000000000", "capacity", "10", "rate", "1")
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := bucket.NewStore(c)
	if _, err := st.Inspect(ctx, []string{"nb:00000"}, nil); err != nil { // loads the read script
		t.Fatal(err)
	}
	wl, err := scan.NewWatchlist(ctx, st, scan.WatchOptions{Budget: 100, Options: scan.Options{Match: "nb:*", Count: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var res scan.WatchResult
	over := 0
	for i := 0; res.Passes == 0; i++ {
		if i == 2000 {
			t.Fatal("no whole pass in 2000 refreshes")
		}
		before := redistest.CommandCalls(t, c)
		if res, err = wl.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		after := redistest.CommandCalls(t, c)
		served := 0
		for _, name := range []string{"scan", "evalsha_ro", "time", "dbsize"} {
			served += after[name] - before[name]
		}
		if served != int(res.Commands) {
			t.Fatalf("refresh %d: counted %d commands, the server ran %d", i, res.Commands, served)
		}
		if served > 100 {
			over++
			t.Errorf("refresh %d: %d commands, over the budget of 100", i, served)
		}
		if len(res.States) > 3*16+1 {
			t.Fatalf("refresh %d: %d kept: half the budget re-reads at most 3 × 16", i, len(res.States))
		}
		if over > 5 {
			t.FailNow()
		}
	}
	if res.Scanned != n && res.Scanned != 0 {
		t.Fatalf("a whole pass scanned %d keys of %d", res.Scanned, n)
	}
}

// TestScannerNextWithinHoldsTheRest: a page capped below what SCAN returned hands the rest
// on to the next calls, which read it without another SCAN.
func TestScannerNextWithinHoldsTheRest(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < 250; i++ {
		pipe.HSet(ctx, fmt.Sprintf("h:%03d", i), "tokens", "3", "ts", "1700000000000000", "capacity", "10", "rate", "1")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	st := bucket.NewStore(c)
	if _, err := st.Inspect(ctx, []string{"h:000"}, nil); err != nil { // loads the read script
		t.Fatal(err)
	}
	sc, err := scan.New(ctx, st, scan.Options{Match: "h:*", Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var sizes []int
	for {
		page, err := sc.NextWithin(ctx, 101) // TIME and 100 reads
		if errors.Is(err, scan.ErrEnd) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page))
		for _, s := range page {
			if seen[s.Key] {
				t.Fatalf("%s read twice", s.Key)
			}
			seen[s.Key] = true
		}
	}
	stats := sc.Stats()
	if fmt.Sprint(sizes) != "[100 100 50]" || len(seen) != 250 || stats.Pages != 1 || stats.Keys != 250 || stats.Buckets != 250 {
		t.Fatalf("pages of %v, %d buckets seen, stats %+v: want one SCAN read as 100, 100 and 50", sizes, len(seen), stats)
	}
	// One SCAN, and per capped page its reads and TIME.
	if stats.Commands != 1+250+3 {
		t.Fatalf("%d commands, want 254", stats.Commands)
	}
}

// TestWatchlistBudgetPerSecond: 1,000 commands a second refreshed every 100 ms is a budget
// of 100 commands a refresh, and 100 a second every 100 ms the floor of 50.
func TestWatchlistBudgetPerSecond(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < 2000; i++ {
		pipe.HSet(ctx, fmt.Sprintf("ps:%04d", i), "tokens", "3", "ts", "1700000000000000", "capacity", "10", "rate", "1")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	st := bucket.NewStore(c)
	for _, tc := range []struct {
		perSecond int64
		want      int64
	}{{1000, 100}, {100, 50}} {
		wl, err := scan.NewWatchlist(ctx, st, scan.WatchOptions{PerSecond: tc.perSecond, Interval: 100 * time.Millisecond,
			Options: scan.Options{Match: "ps:*"}})
		if err != nil {
			t.Fatal(err)
		}
		most := int64(0)
		for i := 0; i < 5; i++ {
			res, err := wl.Refresh(ctx)
			if err != nil {
				t.Fatal(err)
			}
			most = max(most, res.Commands)
		}
		if most > tc.want || most < tc.want/2 {
			t.Errorf("%d/s every 100ms: refreshes sent up to %d commands, want a budget of %d", tc.perSecond, most, tc.want)
		}
	}
}
