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
// maximum.
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
		Strategy: load.Lua, Concurrency: 8, Duration: 9 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan load.Report, 1)
	go func() {
		r, err := e.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	time.Sleep(2 * time.Second)
	killed := cl.KillMaster(0)
	cl.WaitForFailover(t, killed)
	r := <-done

	t.Logf("%d requests in %.2fs: allowed %d (max %d, over-grant %.2f%%), denied %d, errors %d; per second %+v",
		r.Requests, r.DurationS, r.Allowed, r.TheoreticalMax, r.OverGrantPct, r.Denied, r.Errors, r.PerSecond)
	if r.Errors == 0 {
		t.Fatal("no errors counted while the master was down")
	}
	if r.Allowed > r.TheoreticalMax || r.OverGrantPct > 0 {
		t.Fatalf("allowed %d over a maximum of %d: over-grant %.2f%%", r.Allowed, r.TheoreticalMax, r.OverGrantPct)
	}
	n := len(r.PerSecond)
	if n < 3 {
		t.Fatalf("per-second tallies %+v", r.PerSecond)
	}
	if last := r.PerSecond[n-2]; last.Allowed == 0 || last.Errors != 0 {
		t.Fatalf("the run did not recover after the failover: second %d was %+v (all: %+v)", n-2, last, r.PerSecond)
	}
	if first := r.PerSecond[0]; first.Allowed == 0 {
		t.Fatalf("nothing allowed before the kill: %+v", r.PerSecond)
	}
}
