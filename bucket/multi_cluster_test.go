package bucket_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/slot"
)

// TestTakeAllCluster runs the all-or-nothing decision on a 3-master Cluster with hash-tagged
// keys, and checks keys of different slots are refused before any call to Redis.
func TestTakeAllCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.Client(t)
	ctx := context.Background()

	// Users whose tags land on different masters: the decision is atomic on each.
	for _, user := range []string{"user42", "alice", "bob", "carol"} {
		testDenyLeavesOtherTiersUntouched(t, rdb, "rl:{"+user+"}:user", "rl:{"+user+"}:global")
	}
	var masters atomic.Int32 // ForEachMaster calls fn concurrently
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if n, err := m.DBSize(ctx).Result(); err != nil {
			return err
		} else if n > 0 {
			masters.Add(1)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if masters := masters.Load(); masters < 2 {
		t.Fatalf("the test users' buckets landed on %d master(s): want several", masters)
	}

	// Slot agrees with the server's CLUSTER KEYSLOT.
	for _, k := range []string{"rl:{user42}:user", "rl:user42", "rl:global", "123456789", "{}x", "a{b}c{d}", "ünïcode"} {
		want, err := rdb.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := slot.Of(k); int64(got) != want {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}

	// Untagged keys in different slots: a clear error, and no command sent.
	calls := &redistest.Counter{}
	rdb.AddHook(calls)
	st := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 5, Rate: 1}
	_, err := st.TakeAll(ctx, []bucket.Tier{{Name: "user", Key: "rl:user42", Spec: spec, Cost: 1}, {Name: "global", Key: "rl:global", Spec: spec, Cost: 1}})
	if !errors.Is(err, bucket.ErrCrossSlot) || !strings.Contains(err.Error(), "hash tag") {
		t.Fatalf("cross-slot keys: err = %v, want ErrCrossSlot with advice", err)
	}
	if n := calls.Commands.Load(); n != 0 {
		t.Fatalf("%d commands sent for a cross-slot decision", n)
	}
	if _, err := st.TakeAll(ctx, []bucket.Tier{{Key: "rl:{user42}:a", Spec: spec, Cost: 1}, {Key: "rl:{user42}:b", Spec: spec, Cost: 1}}); err != nil || calls.Commands.Load() == 0 {
		t.Fatalf("same-slot keys: err %v, %d commands", err, calls.Commands.Load())
	}
}

// TestTakeAllRingNeedsOneHashTag checks a Ring, which shards by hash tag, gets the same
// up-front refusal as a Cluster.
func TestTakeAllRingNeedsOneHashTag(t *testing.T) {
	srv := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr()}, MaxRetries: -1})
	t.Cleanup(func() { _ = ring.Close() })
	st := bucket.NewStore(ring)
	ctx := context.Background()
	spec := bucket.Spec{Capacity: 5, Rate: 1}
	_, err := st.TakeAll(ctx, []bucket.Tier{{Key: "rl:{u1}:user", Spec: spec, Cost: 1}, {Key: "rl:{u2}:user", Spec: spec, Cost: 1}})
	if !errors.Is(err, bucket.ErrCrossSlot) {
		t.Fatalf("different hash tags on a Ring: err = %v, want ErrCrossSlot", err)
	}
	r, err := st.TakeAll(ctx, []bucket.Tier{{Key: "rl:{u1}:user", Spec: spec, Cost: 1}, {Key: "rl:{u1}:global", Spec: spec, Cost: 1}})
	if err != nil || !r.Allowed {
		t.Fatalf("one hash tag on a Ring: %+v, %v", r, err)
	}
}
