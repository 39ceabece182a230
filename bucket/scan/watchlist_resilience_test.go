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
	"github.com/bucketctl/bucketctl/bucket/slot"
	"github.com/bucketctl/bucketctl/scripts"
)

// TestWatchlistClusterRereadKeepsBudget: in a Cluster, re-reading the kept two-key buckets
// whose keys are in different slots costs a GETRANGE per companion key more; with a custom
// two-key layout beside webman and hot keys handed on, the re-read is still reckoned at its
// worst case: no refresh passes its budget, and the scan goes on until a pass completes
// (the re-read alone once filled the budget, and the scan stalled for good).
func TestWatchlistClusterRereadKeepsBudget(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := redis.NewClusterClient(cl.Options())
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.ScriptLoad(ctx, scripts.Read).Err(); err != nil { // no NOSCRIPT resend
		t.Fatal(err)
	}
	var hotKeys []string
	for i, n := 0, 0; n < 600; i++ {
		k := fmt.Sprintf("rw:%04d", i)
		if slot.Of(k) == slot.Of(k+":last_time") {
			continue
		}
		n++
		setWebman(t, c, k, fmt.Sprint(10000-i))
		if n%60 == 30 {
			hotKeys = append(hotKeys, k)
		}
	}
	const budget = 300
	custom := []bucket.Layout{{Name: "tsx", Type: bucket.Strings, TokensKey: "*", TimeKey: "*:ts", TimeUnit: "s"}}
	wl, err := scan.NewWatchlist(ctx, bucket.NewStore(c), scan.WatchOptions{Budget: budget, Options: scan.Options{Match: "rw:*", Custom: custom}})
	if err != nil {
		t.Fatal(err)
	}
	wl.Keep("rw:0599")
	var res scan.WatchResult
	for i := 0; i < 60 && res.Passes == 0; i++ {
		if i >= 3 {
			wl.Hot(hotKeys)
		}
		if res, err = wl.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if res.Commands > budget {
			t.Fatalf("refresh %d: %d commands, over the budget of %d", i, res.Commands, budget)
		}
	}
	if res.Passes == 0 {
		t.Fatalf("no pass completed in 60 refreshes: scanned %d keys, %d kept", res.Scanned, len(res.States))
	}
}

// TestScannerHeldKeysFollowAReshard: keys a capped page held back whose slot then moves to
// another master are read through the Cluster client, which follows the redirect, instead
// of failing on the old master again and again.
func TestScannerHeldKeysFollowAReshard(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := redis.NewClusterClient(cl.Options())
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.ScriptLoad(ctx, scripts.Read).Err(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("{mv}:%02d", i)
		keys = append(keys, k)
		if err := c.HSet(ctx, k, "tokens", 3, "last_refill", "1700000000.5").Err(); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := scan.New(ctx, bucket.NewStore(c), scan.Options{Match: "{mv}:*", Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) == 0 { // until the master holding them pages them: 10 read, 30 held
		page, err := sc.NextWithin(ctx, 11)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range page {
			seen[st.Key] = true
		}
	}
	cl.MoveSlot(t, slot.Of("{mv}"), keys)
	for i := 0; i < 20 && len(seen) < len(keys); i++ {
		page, err := sc.NextWithin(ctx, 11)
		if errors.Is(err, scan.ErrEnd) {
			break
		}
		if err != nil && !strings.Contains(err.Error(), "no room") {
			t.Fatal(err)
		}
		for _, st := range page {
			seen[st.Key] = true
		}
	}
	if len(seen) != len(keys) {
		t.Fatalf("%d of %d keys read after the reshard", len(seen), len(keys))
	}
}

// failOnce fails one read pipeline (the nth) as a lost connection would.
type failOnce struct {
	n     int64
	reads atomic.Int64
}

func (f *failOnce) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f *failOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (f *failOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if strings.HasPrefix(strings.ToLower(c.Name()), "eval") {
				if f.reads.Add(1) == f.n {
					err := errors.New("i/o timeout (injected)")
					for _, c := range cmds {
						c.SetErr(err)
					}
					return err
				}
				break
			}
		}
		return next(ctx, cmds)
	}
}

// TestWatchlistFailedReadSkipsNone: a page whose read fails (a refresh that reports the
// error) is read again by the next refresh, so a pass that says it is whole holds every
// bucket (the page was skipped, and the pass still said whole).
func TestWatchlistFailedReadSkipsNone(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if err := c.HSet(ctx, fmt.Sprintf("sk:%03d", i), "tokens", 3, "last_refill", "1700000000.5").Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.AddHook(&failOnce{n: 3})
	wl, err := scan.NewWatchlist(ctx, bucket.NewStore(c), scan.WatchOptions{Budget: 10000, Options: scan.Options{Match: "sk:*", Count: 10}})
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for i := 0; i < 10; i++ {
		res, err := wl.Refresh(ctx)
		if err != nil {
			failed = true
			continue
		}
		if res.Whole && len(res.States) != 100 {
			t.Fatalf("refresh %d: a whole pass with %d of 100 buckets", i, len(res.States))
		}
		if res.Whole {
			if !failed {
				t.Fatal("the injected failure never happened")
			}
			return
		}
	}
	t.Fatal("no whole pass in 10 refreshes")
}
