package redistest

import (
	"context"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
)

// MoveSlot moves slot s, with keys (all the slot holds), from the master that holds them to
// the next one (see MasterAddrs), as redis-cli --cluster reshard does.
func (c *Cluster) MoveSlot(t testing.TB, s int, keys []string) {
	t.Helper()
	ctx := context.Background()
	masters := c.MasterAddrs()
	node := func(addr string) *redis.Client {
		n := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = n.Close() })
		return n
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("redistest: MoveSlot(%d): %v", s, err)
		}
	}
	src := -1
	for i, a := range masters {
		if n, _ := node(a).ClusterCountKeysInSlot(ctx, s).Result(); n > 0 {
			src = i
		}
	}
	if src < 0 {
		t.Fatalf("redistest: MoveSlot(%d): no master holds the slot's keys", s)
	}
	dst := (src + 1) % len(masters)
	from, to := node(masters[src]), node(masters[dst])
	fromID, _ := from.Do(ctx, "CLUSTER", "MYID").Text()
	toID, _ := to.Do(ctx, "CLUSTER", "MYID").Text()
	must(to.Do(ctx, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID).Err())
	must(from.Do(ctx, "CLUSTER", "SETSLOT", s, "MIGRATING", toID).Err())
	host, port, _ := net.SplitHostPort(masters[dst])
	args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	must(from.Do(ctx, args...).Err())
	for _, a := range masters {
		must(node(a).Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", toID).Err())
	}
}
