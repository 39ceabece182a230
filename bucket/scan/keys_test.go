package scan_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// TestKeysStopsAndTakesMastersInTurn: on a 3-master Cluster, Keys (shell completion) walks
// the masters in turn, so a limit of 20 keys with pages of about 10 has keys of two
// masters, and a walk stopped by ErrStop after its first page scans no other master.
func TestKeysStopsAndTakesMastersInTurn(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client(t)
	ctx := context.Background()
	master := map[string]int{}
	for m := 0; m < 3; m++ {
		for i := 0; i < 30; i++ {
			k := cl.KeyOnMaster(m, fmt.Sprintf("k:%d:%d:", m, i))
			master[k] = m
			if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := bucket.NewStore(c)
	calls := 0
	err := scan.Keys(ctx, st, scan.Options{Match: "k:*", Count: 10}, func([]string) error {
		calls++
		return scan.ErrStop
	})
	if err != nil || calls != 1 {
		t.Fatalf("stopped after the first page: err %v, %d calls of fn, want 1", err, calls)
	}
	var keys []string
	err = scan.Keys(ctx, st, scan.Options{Match: "k:*", Count: 10, Limit: 20}, func(page []string) error {
		keys = append(keys, page...)
		return nil
	})
	seen := map[int]bool{}
	for _, k := range keys {
		seen[master[k]] = true
	}
	if err != nil || len(keys) != 20 || len(seen) < 2 {
		sort.Strings(keys)
		t.Fatalf("limit 20: err %v, %d keys from %d masters, want 20 from 2 or more: %v", err, len(keys), len(seen), keys)
	}
}

// TestKeysRaisesCount: a selective completion pattern (10 keys among 4,000) raises SCAN's
// COUNT as States does, instead of a SCAN per 10 keys of the keyspace.
func TestKeysRaisesCount(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < 4000; i++ {
		k := fmt.Sprintf("other:%d", i)
		if i%400 == 0 {
			k = fmt.Sprintf("sel:%d", i)
		}
		pipe.Set(ctx, k, "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before := redistest.CommandCalls(t, c)["scan"]
	n := 0
	err := scan.Keys(ctx, bucket.NewStore(c), scan.Options{Match: "sel:*", Count: 10, MaxCount: 1000}, func(page []string) error {
		n += len(page)
		return nil
	})
	scans := redistest.CommandCalls(t, c)["scan"] - before
	if err != nil || n != 10 || scans > 40 {
		t.Fatalf("err %v, %d keys in %d SCANs: want the 10 in at most 40 (a COUNT of 10 throughout takes about 400)", err, n, scans)
	}
}
