package scan_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// TestSCANSentAheadReadsTheSameWalk: an unlimited States, which sends each next SCAN ahead
// and reads two pages at once, hands on the same keys in the same order, in as many pages,
// commands and round trips, as a walk with Next that reads a page when it is wanted.
func TestSCANSentAheadReadsTheSameWalk(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := range 3000 {
		pipe.HSet(ctx, fmt.Sprintf("a:%d", i), "tokens", "2", "last_refill", "1700000000")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	st := bucket.NewStore(c)
	o := scan.Options{Match: "a:*", Count: 100}
	// The read script loaded first, so that neither walk pays its NOSCRIPT.
	if _, err := scan.States(ctx, st, scan.Options{Match: "a:*", Limit: 1}, func([]bucket.State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var ahead []string
	aheadStats, err := scan.States(ctx, st, o, func(page []bucket.State) error {
		for _, s := range page {
			ahead = append(ahead, s.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	var walked []string
	for {
		page, err := sc.Next(ctx)
		if errors.Is(err, scan.ErrEnd) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			walked = append(walked, s.Key)
		}
	}
	ws := sc.Stats()
	if len(ahead) != 3000 || !slices.Equal(ahead, walked) {
		t.Fatalf("sent ahead: %d keys, walked: %d keys, same order: %v", len(ahead), len(walked), slices.Equal(ahead, walked))
	}
	if aheadStats.Pages != ws.Pages || aheadStats.Keys != ws.Keys || aheadStats.Commands != ws.Commands || aheadStats.RoundTrips != ws.RoundTrips || aheadStats.Pages < 20 ||
		aheadStats.Buckets != ws.Buckets || aheadStats.Other != ws.Other || !aheadStats.Done || !ws.Done {
		t.Fatalf("sent ahead %+v, walked %+v", aheadStats, ws)
	}
}
