package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/sandbox"
	"github.com/bucketctl/bucketctl/bucket/slot"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// Cluster is a Redis Cluster of real redis-server nodes on loopback.
//
// Nodes run with --cluster-node-timeout 1000 (ms), so a killed master is
// flagged FAIL after about a second and its replica wins the election about
// a second later (500 ms + a random 0–500 ms + 1 s per rank). They also run
// with --cluster-replica-validity-factor 0: a replica whose link to its
// master was down for long (a slow sync on a busy machine) still stands for
// election, instead of refusing because its data might be old. Failover
// needs a majority of masters alive, so tests of it need 3 masters or more.
type Cluster struct {
	tb       testing.TB
	replicas int
	nodes    []*clusterNode // in start order: masters first, then their replicas

	mu      sync.Mutex
	masters []*clusterNode // masters[i] serves ranges[i]
	ranges  [][2]int
	clients tracked[*redis.ClusterClient]
}

type clusterNode struct {
	r      *sandbox.Redis
	id     string
	admin  *redis.Client
	master *clusterNode // the node this replica should follow; nil for a master
	dead   bool
}

func (n *clusterNode) addr() string { return n.r.Addr() }

// StartCluster starts masters*(1+replicasPerMaster) nodes, gives master i
// the i-th equal share of the slots (CLUSTER ADDSLOTSRANGE), joins them
// (CLUSTER MEET), attaches replicasPerMaster replicas to each master
// (CLUSTER REPLICATE) and waits until every node reports cluster_state:ok,
// sees all slots served and every node healthy in its role, and every
// replica is in sync. The nodes are stopped in t.Cleanup.
func StartCluster(t testing.TB, masters, replicasPerMaster int) *Cluster {
	t.Helper()
	if masters < 1 || replicasPerMaster < 0 || masters > clusterSlots {
		t.Fatalf("redistest: StartCluster(%d, %d): need at least one master and no negative replica count", masters, replicasPerMaster)
	}
	bin := requireRedisServer(t)
	root := t.TempDir()
	n := masters * (1 + replicasPerMaster)
	c := &Cluster{tb: t, replicas: replicasPerMaster, nodes: make([]*clusterNode, n)}

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// One directory per node: a replica writes the RDB it receives
			// to its dir, and nodes must not share that file.
			dir := filepath.Join(root, fmt.Sprintf("node-%d", i))
			if err := os.Mkdir(dir, 0o700); err != nil {
				errs[i] = err
				return
			}
			args := append(baseArgs(),
				"--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", i)),
				"--cluster-node-timeout", "1000",
				"--cluster-replica-validity-factor", "0",
			)
			r, err := sandbox.StartRedis(context.Background(), sandbox.RedisConfig{
				Binary:       bin,
				Dir:          dir,
				LogPath:      filepath.Join(dir, "redis.log"),
				ClusterBus:   true,
				Args:         args,
				ReadyTimeout: readyTimeout,
			})
			if err != nil {
				errs[i] = fmt.Errorf("node %d: %w", i, err)
				return
			}
			c.nodes[i] = &clusterNode{r: r, admin: redis.NewClient(adminOptions(r.Addr()))}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: cluster logs:%s", logTails(c.procs(true)...))
		}
		c.Stop()
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("redistest: start cluster nodes: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	for i, node := range c.nodes {
		id, err := node.admin.ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatalf("redistest: CLUSTER MYID on node %d (%s): %v", i, node.addr(), err)
		}
		node.id = id
	}
	for i := range masters {
		lo, hi := i*clusterSlots/masters, (i+1)*clusterSlots/masters-1
		m := c.nodes[i]
		if err := m.admin.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			t.Fatalf("redistest: CLUSTER ADDSLOTSRANGE %d %d on %s: %v", lo, hi, m.addr(), err)
		}
		c.masters = append(c.masters, m)
		c.ranges = append(c.ranges, [2]int{lo, hi})
		for j := range replicasPerMaster {
			c.nodes[masters+i*replicasPerMaster+j].master = m
		}
	}
	for _, node := range c.nodes[1:] {
		// The bus port is not port+10000 here, so MEET names it.
		err := c.nodes[0].admin.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", node.r.Port, node.r.BusPort).Err()
		if err != nil {
			t.Fatalf("redistest: CLUSTER MEET %s: %v", node.addr(), err)
		}
	}

	// A replica can only follow a master it knows, so wait for the
	// handshakes before CLUSTER REPLICATE.
	ok, status := poll(clusterTimeout, func(ctx context.Context) (bool, string) {
		for _, node := range c.nodes {
			entries, err := clusterNodes(ctx, node.admin)
			if err != nil {
				return false, fmt.Sprintf("%s: CLUSTER NODES: %v", node.addr(), err)
			}
			for _, other := range c.nodes {
				e, found := entries[other.id]
				if !found || e.has("handshake") || e.has("noaddr") {
					return false, fmt.Sprintf("%s does not know %s yet", node.addr(), other.addr())
				}
			}
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("redistest: cluster nodes did not meet within %v: %s%s", clusterTimeout, status, logTails(c.procs(false)...))
	}
	pending := c.nodes[masters:]
	ok, status = poll(clusterTimeout, func(ctx context.Context) (bool, string) {
		for len(pending) > 0 {
			r := pending[0]
			if err := r.admin.ClusterReplicate(ctx, r.master.id).Err(); err != nil {
				return false, fmt.Sprintf("CLUSTER REPLICATE on %s: %v", r.addr(), err)
			}
			pending = pending[1:]
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("redistest: attach replicas: %s%s", status, logTails(c.procs(false)...))
	}
	c.waitHealthy(t, clusterTimeout, "cluster start")
	return c
}

func adminOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:         addr,
		DialTimeout:  commandTimeout,
		ReadTimeout:  commandTimeout,
		WriteTimeout: commandTimeout,
		PoolSize:     2,
		MaxRetries:   -1, // the harness polls; a failed command is retried there
	}
}

// procs returns the node processes, all of them or the live ones only.
func (c *Cluster) procs(all bool) []*sandbox.Redis {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []*sandbox.Redis
	for _, n := range c.nodes {
		if n != nil && (all || !n.dead) {
			ps = append(ps, n.r)
		}
	}
	return ps
}

// Addrs returns the addresses of all running nodes, masters and replicas.
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var addrs []string
	for _, n := range c.nodes {
		if !n.dead {
			addrs = append(addrs, n.addr())
		}
	}
	return addrs
}

// MasterAddrs returns the address of the master of each share of the slots,
// in slot order: MasterAddrs()[i] serves the i-th share. After
// WaitForFailover the promoted replica takes the killed master's place.
func (c *Cluster) MasterAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	addrs := make([]string, len(c.masters))
	for i, m := range c.masters {
		addrs[i] = m.addr()
	}
	return addrs
}

// Options returns go-redis cluster options seeded with every running node.
// Clients built from them are not refreshed by WaitForFailover; Client's are.
func (c *Cluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: c.Addrs(), MaintNotificationsConfig: noMaintNotifications()}
}

// Client returns a cluster client, closed in t.Cleanup. WaitForFailover
// makes it learn the new slot owner before returning.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	return c.clients.add(t, redis.NewClusterClient(c.Options()))
}

// KeyOnMaster returns prefix followed by a number, the first such key whose
// slot the i-th master serves (see MasterAddrs). A prefix with a {hash tag}
// fixes the slot, so it rarely works.
func (c *Cluster) KeyOnMaster(i int, prefix string) string {
	r, ok := masterItem(c, "KeyOnMaster", i, func() [][2]int { return c.ranges })
	if !ok {
		return ""
	}
	for n := range 1_000_000 {
		key := prefix + strconv.Itoa(n)
		if s := KeySlot(key); s >= r[0] && s <= r[1] {
			return key
		}
	}
	c.tb.Fatalf("redistest: KeyOnMaster(%d, %q): no key with this prefix lands in slots %d-%d", i, prefix, r[0], r[1])
	return ""
}

// KeySlot returns the cluster hash slot of key (CRC16 of the key, or of its first non-empty
// {hash tag}, modulo 16384), as CLUSTER KEYSLOT does: slot.Of, which the harness's tests
// check against the servers.
func KeySlot(key string) int { return slot.Of(key) }

// Stop stops every node (SIGTERM, then SIGKILL after 2 s). It is idempotent.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		wg.Go(func() {
			if err := n.r.Stop(stopGrace); err != nil {
				c.tb.Errorf("redistest: stop cluster node %s: %v", n.addr(), err)
			}
			_ = n.admin.Close()
		})
	}
	wg.Wait()
}

// masterItem returns the i-th master's entry of list (read under c.mu), failing the test
// when i is not a master's index; what names the caller.
func masterItem[T any](c *Cluster, what string, i int, list func() []T) (T, bool) {
	c.mu.Lock()
	l := list()
	var v T
	ok := i >= 0 && i < len(l)
	if ok {
		v = l[i]
	}
	c.mu.Unlock()
	if !ok {
		c.tb.Fatalf("redistest: %s(%d): the cluster has %d masters", what, i, len(l))
	}
	return v, ok
}
