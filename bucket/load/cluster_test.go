package load_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestLoadSurvivesMasterFailover kills the master serving the bucket in the middle of a
// load run on a Cluster: the errors during the outage are counted, decisions are allowed
// again once the replica is promoted, and the run never grants more than the theoretical
// maximum. It follows the run by its snapshots, not by the clock: the kill comes once
// decisions are allowed, and the run is stopped once a whole second after the kill went
// without an error, however long the fail-over takes on a busy machine.
func TestLoadSurvivesMasterFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	o := cl.Options()
	o.MaxRetries, o.PoolSize = -1, 16
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 500*time.Millisecond, time.Second, time.Second
	c := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = c.Close() })
	st := bucket.NewStore(c)
	key := cl.KeyOnMaster(0, "loadfailover:")

	e, err := load.New(st, load.Config{Key: key, Spec: bucket.Spec{Capacity: 5, Rate: 20}, Cost: 1,
		Strategy: load.Lua, Concurrency: 8, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan load.Report, 1)
	go func() {
		r, err := e.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	redistest.WaitFor(t, 10*time.Second, "decisions allowed before the kill", func() bool { return e.Snapshot().Allowed > 0 })
	killedAt := int(e.Snapshot().Elapsed / time.Second)
	killed := cl.KillMaster(0)
	cl.WaitForFailover(t, killed)
	// recovered is the first whole second after the kill's with decisions allowed and no
	// error, or -1.
	recovered := func(secs []load.Second, whole int) int {
		for i := killedAt + 1; i < min(whole, len(secs)); i++ {
			if secs[i].Allowed > 0 && secs[i].Errors == 0 {
				return i
			}
		}
		return -1
	}
	redistest.WaitFor(t, 40*time.Second, "a whole second without errors after the fail-over", func() bool {
		s := e.Snapshot()
		return recovered(s.PerSecond, int(s.Elapsed/time.Second)) >= 0
	})
	stop()
	r := <-done

	t.Logf("%d requests in %.2fs: allowed %d (max %d, over-grant %.2f%%), denied %d, errors %d; per second %+v",
		r.Requests, r.DurationS, r.Allowed, r.TheoreticalMax, r.OverGrantPct, r.Denied, r.Errors, r.PerSecond)
	if r.Errors == 0 {
		t.Fatal("no errors counted while the master was down")
	}
	if r.Allowed > r.TheoreticalMax || r.OverGrantPct > 0 {
		t.Fatalf("allowed %d over a maximum of %d: over-grant %.2f%%", r.Allowed, r.TheoreticalMax, r.OverGrantPct)
	}
	if recovered(r.PerSecond, len(r.PerSecond)) < 0 {
		t.Fatalf("the report shows no recovery after the kill in second %d: %+v", killedAt, r.PerSecond)
	}
	if first := r.PerSecond[0]; first.Allowed == 0 {
		t.Fatalf("nothing allowed before the kill: %+v", r.PerSecond)
	}
}
