package bucket_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
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
	wl, err := st.NewWatchlist(ctx, bucket.WatchOptions{Keep: 5, Budget: 500, ScanOptions: bucket.ScanOptions{Match: "w:*",
		Resolve: func(string) bucket.Target {
			return bucket.Target{Layout: &l, Spec: bucket.Spec{Capacity: 10, Rate: 1e-9}}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	const pin = "w:1500" // full, and far from the first by name
	wl.Keep(pin)
	var res bucket.WatchResult
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
	wl, err := bucket.NewStore(c).NewWatchlist(ctx, bucket.WatchOptions{ScanOptions: bucket.ScanOptions{Match: "s:*"}})
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
	wl, err := bucket.NewStore(c).NewWatchlist(ctx, bucket.WatchOptions{Limit: 100, ScanOptions: bucket.ScanOptions{Match: "l:*"}})
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
