package redistest_test

import (
	"context"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// A test of behaviour after a server restart, which drops loaded scripts.
func ExampleServer_Restart() {
	var t *testing.T // the test's *testing.T
	srv := redistest.Start(t, redistest.WithPassword("secret"))
	c := srv.Client(t)
	sha, _ := c.ScriptLoad(context.Background(), "return 1").Result()
	srv.Restart(t)
	_ = c.EvalSha(context.Background(), sha, nil).Err() // NOSCRIPT
}

// A test of a cluster failover: kill the master of a key, wait, write again.
func ExampleCluster_WaitForFailover() {
	var t *testing.T // the test's *testing.T
	cluster := redistest.StartCluster(t, 3, 1)
	c := cluster.Client(t)
	key := cluster.KeyOnMaster(0, "bucket:")
	cluster.WaitForFailover(t, cluster.KillMaster(0))
	_ = c.Set(context.Background(), key, 1, 0).Err()
}

// A test against Sentinel: a client that follows the master through a failover.
func ExampleSentinel_Failover() {
	var t *testing.T // the test's *testing.T
	s := redistest.StartSentinel(t)
	c := s.FailoverClient(t)
	s.Failover(t)
	_ = c.Set(context.Background(), "k", 1, 0).Err()
}
