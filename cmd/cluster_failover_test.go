package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/connect"
)

// testMovedSlot moves the empty slot of a fresh key from master 0 to master 1 behind the
// back of a connected client, then consumes from it.
func testMovedSlot(t *testing.T, cl *redistest.Cluster, direct []*redis.Client) {
	ctx := context.Background()
	c := dialTest(t, connect.Server{Cluster: cl.Addrs()})
	st := bucket.NewStore(c)
	if _, err := st.Take(ctx, cl.KeyOnMaster(0, "warm:"), bucket.Spec{Capacity: 1, Rate: 1}, 1); err != nil {
		t.Fatal(err)
	}
	key := cl.KeyOnMaster(0, "moved:")
	slot := redistest.KeySlot(key)
	if n, err := direct[0].ClusterCountKeysInSlot(ctx, slot).Result(); err != nil || n != 0 {
		t.Fatalf("slot %d holds %d keys (%v): pick another key", slot, n, err)
	}
	ids := make([]string, len(direct))
	for i, d := range direct {
		id, err := d.ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	// The resharding sequence of the Redis manual, for a slot without keys.
	steps := []struct {
		on   int
		args []any
	}{
		{1, []any{"CLUSTER", "SETSLOT", slot, "IMPORTING", ids[0]}},
		{0, []any{"CLUSTER", "SETSLOT", slot, "MIGRATING", ids[1]}},
		{1, []any{"CLUSTER", "SETSLOT", slot, "NODE", ids[1]}},
		{0, []any{"CLUSTER", "SETSLOT", slot, "NODE", ids[1]}},
		{2, []any{"CLUSTER", "SETSLOT", slot, "NODE", ids[1]}},
	}
	for _, s := range steps {
		if err := direct[s.on].Do(ctx, s.args...).Err(); err != nil {
			t.Fatalf("%v on master %d: %v", s.args, s.on, err)
		}
	}
	rejected := func() int {
		info := direct[0].Info(ctx, "commandstats").Val()
		var n int
		if _, rest, ok := strings.Cut(info, "cmdstat_evalsha:"); ok {
			if _, v, ok := strings.Cut(rest, "rejected_calls="); ok {
				fmt.Sscanf(v, "%d", &n)
			}
		}
		return n
	}
	before := rejected()
	if _, err := st.Take(ctx, key, bucket.Spec{Capacity: 5, Rate: 0.01}, 1); err != nil {
		t.Fatalf("consume after the slot moved: %v", err)
	}
	if got := hget(t, direct[1], key, "allowed"); got != "1" {
		t.Fatalf("the new owner counts %q allowed, want 1", got)
	}
	if direct[0].Exists(ctx, key).Val() != 0 {
		t.Fatal("the old owner holds the key")
	}
	if after := rejected(); after <= before {
		t.Fatalf("the old owner rejected no EVALSHA (%d, then %d): the client was not redirected, the test proves nothing", before, after)
	}
}

// TestClusterMasterKilledDuringDecisions kills a master while goroutines take from buckets
// on every master. Decisions fail during the outage and succeed after the replica's
// promotion; no bucket grants more than capacity + rate × elapsed, and no decision is
// applied more often than it was sent.
func TestClusterMasterKilledDuringDecisions(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 1)
	c := dialTest(t, connect.Server{Cluster: cl.Addrs(), DialTimeout: time.Second, Timeout: time.Second})
	st := bucket.NewStore(c)
	spec := bucket.Spec{Capacity: 3, Rate: 2}

	type tally struct {
		allowed, denied, failed, uncertain int
		// cancelled counts the decisions the end of the run cut off: each may have been
		// applied (a batch once sent outlives its callers), so each may have arrived.
		cancelled int
		// ok counts the decisions that got a reply; okAfter those after the promotion.
		ok, okAfter int
	}
	var (
		mu       sync.Mutex
		promoted time.Time // zero until the replica is promoted
		stats    = map[string]*tally{}
		keys     []string
		share    = map[string]int{} // the key's share of the slots: MasterAddrs()[share] serves it
	)
	for i := range 3 {
		for j := range 2 {
			k := cl.KeyOnMaster(i, fmt.Sprintf("kill:%d%d:", i, j))
			keys = append(keys, k)
			stats[k] = &tally{}
			share[k] = i
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			// A decision every 2 ms per goroutine: traffic all along, not a busy loop.
			pace := time.NewTicker(2 * time.Millisecond)
			defer pace.Stop()
			for n := g; ctx.Err() == nil; n++ {
				k := keys[n%len(keys)]
				res, err := st.Take(ctx, k, spec, 1)
				mu.Lock()
				s := stats[k]
				var ue *bucket.UncertainError
				switch {
				case err == nil && res.Allowed:
					s.allowed++
				case err == nil:
					s.denied++
				case ctx.Err() != nil:
					s.cancelled++
				case errors.As(err, &ue):
					s.uncertain++
				default:
					s.failed++
				}
				if err == nil {
					s.ok++
					if !promoted.IsZero() {
						s.okAfter++
					}
				}
				mu.Unlock()
				select {
				case <-ctx.Done():
				case <-pace.C:
				}
			}
		})
	}
	// every says whether each bucket has n decisions answered (after the promotion, with
	// after set).
	every := func(n int, after bool) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				got := stats[k].ok
				if after {
					got = stats[k].okAfter
				}
				if got < n {
					return false
				}
			}
			return true
		}
	}
	redistest.WaitFor(t, 10*time.Second, "decisions answered on every bucket before the kill", every(5, false))
	killed := cl.KillMaster(0)
	killedAt := time.Now()
	cl.WaitForFailover(t, killed)
	mu.Lock()
	promoted = time.Now()
	mu.Unlock()

	// Decisions on the failed-over master's buckets succeed again, several times each
	// (retries or late replies of the outage would be applied by then).
	redistest.WaitFor(t, 20*time.Second, "decisions answered on every bucket after the promotion", every(10, true))
	stop()
	wg.Wait()
	elapsed := time.Since(start).Seconds()

	direct := directClients(t, cl.MasterAddrs())
	errors0 := 0
	limit := spec.Capacity + spec.Rate*elapsed
	for _, k := range keys {
		s := stats[k]
		if share[k] == 0 {
			errors0 += s.failed + s.uncertain
		}
		if float64(s.allowed) > limit {
			t.Errorf("%s: %d allowed in %.1fs, more than capacity + rate × elapsed = %.1f", k, s.allowed, elapsed, limit)
		}
		a, _ := strconv.Atoi(hget(t, direct[share[k]], k, "allowed"))
		d, _ := strconv.Atoi(hget(t, direct[share[k]], k, "denied"))
		if sent := s.allowed + s.denied + s.uncertain + s.cancelled; a+d > sent {
			t.Errorf("%s: the server counted %d decisions, more than the %d that got a reply or may have arrived: a decision was applied twice", k, a+d, sent)
		}
		t.Logf("%s (share %d): allowed %d denied %d failed %d uncertain %d cancelled %d; server %d+%d", k, share[k], s.allowed, s.denied, s.failed, s.uncertain, s.cancelled, a, d)
	}
	if errors0 == 0 {
		t.Error("no decision on the killed master's buckets failed: the kill went unnoticed")
	}
	t.Logf("run %.1fs, outage %v, bound %.1f allowed per bucket", elapsed, promoted.Sub(killedAt).Round(time.Millisecond), limit)
}
