package redistest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestClusterRoutesToSlotOwnerAndFailsOver(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3, 1)
	ctx := ctxT(t)

	if got := len(c.Addrs()); got != 6 {
		t.Fatalf("Addrs() has %d nodes, want 6", got)
	}
	masters := c.MasterAddrs()
	if len(masters) != 3 {
		t.Fatalf("MasterAddrs() = %v", masters)
	}
	cl := c.Client(t)

	// Every key written through the cluster client lands on the master that
	// owns its slot, and on no other master.
	direct := map[string]*redis.Client{}
	for _, addr := range masters {
		rc := redis.NewClient(&redis.Options{Addr: addr})
		defer rc.Close()
		direct[addr] = rc
	}
	for i := range masters {
		key := c.KeyOnMaster(i, "bucket:")
		slot, err := direct[masters[0]].ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if int(slot) != KeySlot(key) {
			t.Fatalf("KeySlot(%q) = %d, CLUSTER KEYSLOT = %d", key, KeySlot(key), slot)
		}
		if err := cl.Set(ctx, key, fmt.Sprint(i), 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", key, err)
		}
		for j, addr := range masters {
			n, err := direct[addr].Exists(ctx, key).Result()
			if i == j {
				if err != nil || n != 1 {
					t.Errorf("EXISTS %s (slot %d) on its owner %s = %d, %v", key, slot, addr, n, err)
				}
				continue
			}
			// Another master does not hold the key and redirects to the owner.
			if want := fmt.Sprintf("MOVED %d %s", slot, masters[i]); err == nil || err.Error() != want {
				t.Errorf("EXISTS %s on %s = %d, %v; want %s", key, addr, n, err, want)
			}
		}
	}

	// The replica of master 1 holds its data; after the master dies it is
	// promoted, and the same client writes to the failed-over slots.
	key := c.KeyOnMaster(1, "bucket:")
	killed := c.KillMaster(1)
	if killed != masters[1] {
		t.Fatalf("KillMaster(1) = %s, want %s", killed, masters[1])
	}
	start := time.Now()
	c.WaitForFailover(t, killed)
	t.Logf("failover took %v", time.Since(start).Round(time.Millisecond))

	after := c.MasterAddrs()
	if after[1] == killed || after[0] != masters[0] || after[2] != masters[2] {
		t.Fatalf("MasterAddrs() after failover = %v (before %v)", after, masters)
	}
	if slices.Contains(c.Addrs(), killed) {
		t.Errorf("Addrs() still lists the killed node %s", killed)
	}
	if got, err := cl.Get(ctx, key).Result(); err != nil || got != "1" {
		t.Errorf("GET %s after failover = %q, %v; want the replicated value", key, got, err)
	}
	if err := cl.Set(ctx, key, "after", 0).Err(); err != nil {
		t.Fatalf("SET %s after failover: %v", key, err)
	}
	promoted := redis.NewClient(&redis.Options{Addr: after[1]})
	defer promoted.Close()
	if got, err := promoted.Get(ctx, key).Result(); err != nil || got != "after" {
		t.Errorf("GET %s on the promoted master = %q, %v", key, got, err)
	}
	role, err := promoted.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) == 0 || role[0] != "master" {
		t.Errorf("ROLE on %s = %v, %v", after[1], role, err)
	}
	// Every slot is still served: a fresh client reaches every master share.
	fresh := c.Client(t)
	for i := range after {
		k := c.KeyOnMaster(i, "fresh:")
		if err := fresh.Set(ctx, k, "x", 0).Err(); err != nil {
			t.Errorf("fresh client SET %s: %v", k, err)
		}
	}
	info, err := promoted.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") {
		t.Errorf("CLUSTER INFO on the promoted master: %v\n%s", err, info)
	}
}

func TestClusterWithoutReplicas(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 1, 0)
	ctx := ctxT(t)
	cl := c.Client(t)
	if err := cl.Set(ctx, "{a}b", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Hash tags as CLUSTER KEYSLOT reads them.
	for _, key := range []string{"{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{}", "a{b", "", "rl:user:42"} {
		want, err := cl.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := KeySlot(key); int64(got) != want {
			t.Errorf("KeySlot(%q) = %d, CLUSTER KEYSLOT = %d", key, got, want)
		}
	}
	nodes, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Start != 0 || nodes[0].End != 16383 {
		t.Errorf("CLUSTER SLOTS = %+v, want one master serving 0-16383", nodes)
	}
}

func TestKeySlot(t *testing.T) {
	// CRC16/XMODEM check value and a slot from the cluster specification.
	if got := KeySlot("123456789"); got != 0x31C3 {
		t.Errorf("KeySlot(123456789) = %d, want %d", got, 0x31C3)
	}
	if got := KeySlot("foo"); got != 12182 {
		t.Errorf("KeySlot(foo) = %d, want 12182", got)
	}
}
