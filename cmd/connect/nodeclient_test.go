package connect

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestNodeClientCarriesTheHooks: a client NodeClient builds from a copy of a NewClient
// client's options (as hot's connections are) carries the same hooks: the ACL's refusal
// names the user, and Redis cost is counted.
func TestNodeClientCarriesTheHooks(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACL("ops on >ops-pass ~* +@read +ping +hello"))
	s := &Server{URL: srv.URL(), User: "ops", password: "ops-pass", DialTimeout: 2 * time.Second, Timeout: 2 * time.Second}
	rdb, err := s.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	opt := *rdb.(*redis.Client).Options()
	opt.Protocol, opt.PoolSize = 2, 1
	for name, c := range map[string]*redis.Client{"NewClient": rdb.(*redis.Client), "NodeClient": s.NodeClient(&opt)} {
		var n cost.Counter
		ctx := cost.With(context.Background(), &n)
		if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("%s: GET: %v", name, err)
		}
		if n.Commands() != 1 || n.RoundTrips() != 1 {
			t.Errorf("%s: GET counted as %d commands in %d round trips, want 1 in 1", name, n.Commands(), n.RoundTrips())
		}
		err := c.Do(ctx, "CLIENT", "TRACKING", "on", "BCAST").Err()
		var pe *PermissionError
		if !errors.As(err, &pe) || pe.User != "ops" {
			t.Errorf("%s: refused CLIENT TRACKING: %v (%T), want a PermissionError naming ops", name, err, err)
		}
	}
}
