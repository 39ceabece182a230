package scan_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/scripts"
)

// wire counts, on each node client of a Cluster, the data commands it sends (SCAN, the
// reads, TIME, DBSIZE, GETRANGE) and the round trips that carry them: the test's own
// count, beside the servers' INFO commandstats.
type wire struct{ commands, roundTrips atomic.Int64 }

func dataCommand(cmd redis.Cmder) bool {
	switch strings.ToLower(cmd.Name()) {
	case "scan", "evalsha_ro", "evalsha", "eval_ro", "eval", "time", "dbsize", "getrange", "script":
		return true
	}
	return false
}

func (w *wire) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w *wire) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if dataCommand(cmd) {
			w.commands.Add(1)
			w.roundTrips.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (w *wire) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := int64(0)
		for _, cmd := range cmds {
			if dataCommand(cmd) {
				n++
			}
		}
		if n > 0 {
			w.commands.Add(n)
			w.roundTrips.Add(1)
		}
		return next(ctx, cmds)
	}
}

// setWebman writes a webman bucket: its level at key, its time (seconds, with a fraction)
// at key:last_time.
func setWebman(t *testing.T, c redis.Cmdable, key, level string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Set(ctx, key, level, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, key+":last_time", "1700000000.5", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// served is the data commands the masters ran, by their INFO commandstats.
func served(t *testing.T, admins []*redis.Client) int64 {
	t.Helper()
	n := 0
	for _, a := range admins {
		calls := redistest.CommandCalls(t, a)
		for _, name := range []string{"scan", "evalsha_ro", "evalsha", "eval_ro", "eval", "time", "dbsize", "getrange", "script|load"} {
			n += calls[name]
		}
	}
	return int64(n)
}

// TestClusterCostIsWhatWasSent: on a 3-master Cluster, a Watchlist refresh (top) reports
// the commands the masters ran (INFO commandstats) and the round trips the node clients
// made (a pipeline across masters is one per master), and keeps its budget by those
// figures (top shows the same: LiveRefresh has no others); a streaming scan (audit)
// reports likewise, the cross-slot reads of two-key buckets included.
func TestClusterCostIsWhatWasSent(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	opt := cl.Options()
	opt.PoolSize = 1 // after the first refresh, no dial's handshake in the counts
	c := redis.NewClusterClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	var w wire
	c.OnNewNode(func(n *redis.Client) { n.AddHook(&w) })
	var admins []*redis.Client
	for _, addr := range cl.MasterAddrs() {
		a := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = a.Close() })
		admins = append(admins, a)
	}
	ctx := context.Background()
	for i := 0; i < 600; i++ {
		if err := c.HSet(ctx, fmt.Sprintf("cc:%04d", i), "tokens", "3", "ts", "1700000000000000", "capacity", "10", "rate", "1").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 60; i++ { // webman buckets: KEY and KEY:last_time, in other slots
		setWebman(t, c, fmt.Sprintf("cc:w%02d", i), "5")
	}
	st := bucket.NewStore(c)
	live := scan.NewLive(st, scan.WatchOptions{Keep: 10, Budget: 300, Options: scan.Options{Match: "cc:*", Count: 50}})
	t.Cleanup(live.Close)
	for i := 0; i < 6; i++ {
		beforeServed, beforeCmds, beforeRTs := served(t, admins), w.commands.Load(), w.roundTrips.Load()
		r, err := live.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ran, sent, trips := served(t, admins)-beforeServed, w.commands.Load()-beforeCmds, w.roundTrips.Load()-beforeRTs
		res := r.Watch
		t.Logf("refresh %d: reported %d commands in %d round trips; masters ran %d, node clients sent %d in %d",
			i, res.Commands, res.RoundTrips, ran, sent, trips)
		if i == 0 {
			continue // the pools dial: the hook does not count the handshakes, the test's does
		}
		if res.Commands != ran || res.Commands != sent || res.RoundTrips != trips {
			t.Errorf("refresh %d: reported %d commands in %d round trips; masters ran %d, node clients sent %d in %d",
				i, res.Commands, res.RoundTrips, ran, sent, trips)
		}
		if res.Commands > 300 {
			t.Errorf("refresh %d: %d commands, over the budget of 300", i, res.Commands)
		}
	}
	beforeServed, beforeCmds, beforeRTs := served(t, admins), w.commands.Load(), w.roundTrips.Load()
	stats, err := scan.States(ctx, st, scan.Options{Match: "cc:*", Count: 100}, func([]bucket.State) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	ran, sent, trips := served(t, admins)-beforeServed, w.commands.Load()-beforeCmds, w.roundTrips.Load()-beforeRTs
	t.Logf("scan: reported %d commands in %d round trips; masters ran %d, node clients sent %d in %d", stats.Commands, stats.RoundTrips, ran, sent, trips)
	if stats.Commands != ran || stats.Commands != sent || stats.RoundTrips != trips {
		t.Errorf("scan: reported %d commands in %d round trips; masters ran %d, node clients sent %d in %d",
			stats.Commands, stats.RoundTrips, ran, sent, trips)
	}
}

// TestClusterPageKeepsItsCap: in a Cluster, a page of two-key buckets whose keys are in
// different slots costs a read and a GETRANGE per key; a capped page reckons that before it
// sends anything, so no page passes its cap, and the keys left over are read by the next.
func TestClusterPageKeepsItsCap(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := redis.NewClusterClient(cl.Options())
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	for i := 0; i < 40; i++ { // webman buckets: KEY and KEY:last_time, in other slots
		setWebman(t, c, fmt.Sprintf("cw:%02d", i), "5")
	}
	st := bucket.NewStore(c)
	if err := c.ScriptLoad(ctx, scripts.Read).Err(); err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(ctx, st, scan.Options{Match: "cw:*", Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		before := sc.Stats()
		page, err := sc.NextWithin(ctx, 21) // TIME and 10 keys at two commands each
		if errors.Is(err, scan.ErrEnd) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		after := sc.Stats()
		reads := after.Commands - before.Commands - (after.Pages - before.Pages) // less SCAN
		if reads > 21 {
			t.Fatalf("page %d sent %d commands for its reads, over its cap of 21", pages, reads)
		}
		for _, s := range page {
			if s.Problem != "" || s.Layout.Name != "webman" {
				t.Fatalf("%s: read as %q (%s), want a webman bucket", s.Key, s.Layout.Name, s.Problem)
			}
			seen[s.Key] = true
		}
		if pages > 40 {
			t.Fatal("the scan makes no progress")
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d webman buckets seen, want 40", len(seen))
	}
}
