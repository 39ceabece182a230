package scan_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// TestScanStatesLimitAndFilter: 30 buckets and 10 other keys; buckets only, a limit of 25
// ends the scan there (Truncated), OnPage sees the counts grow, DBSize is read first.
func TestScanStatesLimitAndFilter(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	for i := 0; i < 30; i++ {
		if _, err := st.Take(ctx, fmt.Sprintf("s:b:%d", i), spec, 1); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ {
		if err := c.Set(ctx, fmt.Sprintf("s:o:%d", i), "session data", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var got, others, pages int
	stats, err := scan.States(ctx, st, scan.Options{Match: "s:*", Count: 4, BucketsOnly: true, Limit: 25, CountKeys: true,
		OnPage: func(scan.Stats) { pages++ }}, func(states []bucket.State) error {
		for _, s := range states {
			if s.Problem != "" {
				others++
			}
			got++
		}
		return nil
	})
	if err != nil || got != 25 || others != 0 || !stats.Truncated || stats.DBSize != 40 || pages == 0 {
		t.Fatalf("limit 25, buckets only: err %v, %d states (%d not buckets), stats %+v, %d pages", err, got, others, stats, pages)
	}
	got, others = 0, 0
	stats, err = scan.States(ctx, st, scan.Options{Match: "s:*"}, func(states []bucket.State) error {
		for _, s := range states {
			if s.Problem != "" {
				others++
			}
			got++
		}
		return nil
	})
	if err != nil || got != 40 || others != 10 || stats.Truncated || stats.Buckets != 30 || stats.Other != 10 || stats.DBSize != 0 {
		t.Fatalf("every key: err %v, %d states (%d not buckets), stats %+v", err, got, others, stats)
	}
}
