package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/sandbox"
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
	clients map[*redis.ClusterClient]struct{}
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
	c := &Cluster{tb: t, replicas: replicasPerMaster, nodes: make([]*clusterNode, n), clients: map[*redis.ClusterClient]struct{}{}}

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
	return &redis.ClusterOptions{Addrs: c.Addrs()}
}

// Client returns a cluster client, closed in t.Cleanup. WaitForFailover
// makes it learn the new slot owner before returning.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cl := redis.NewClusterClient(c.Options())
	c.mu.Lock()
	c.clients[cl] = struct{}{}
	c.mu.Unlock()
	t.Cleanup(func() {
		c.mu.Lock()
		delete(c.clients, cl)
		c.mu.Unlock()
		_ = cl.Close()
	})
	return cl
}

// KeyOnMaster returns prefix followed by a number, the first such key whose
// slot the i-th master serves (see MasterAddrs). A prefix with a {hash tag}
// fixes the slot, so it rarely works.
func (c *Cluster) KeyOnMaster(i int, prefix string) string {
	c.mu.Lock()
	if i < 0 || i >= len(c.ranges) {
		c.mu.Unlock()
		c.tb.Fatalf("redistest: KeyOnMaster(%d): the cluster has %d masters", i, len(c.ranges))
		return ""
	}
	r := c.ranges[i]
	c.mu.Unlock()
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
// {hash tag}, modulo 16384), as CLUSTER KEYSLOT does: bucket.Slot, which the harness's tests
// check against the servers.
func KeySlot(key string) int { return bucket.Slot(key) }

// KillMaster kills the i-th master (see MasterAddrs) with SIGKILL and
// returns its address, for WaitForFailover.
func (c *Cluster) KillMaster(i int) string {
	c.mu.Lock()
	if i < 0 || i >= len(c.masters) {
		c.mu.Unlock()
		c.tb.Fatalf("redistest: KillMaster(%d): the cluster has %d masters", i, len(c.masters))
		return ""
	}
	m := c.masters[i]
	c.mu.Unlock()
	if err := m.r.Kill(); err != nil {
		c.tb.Fatalf("redistest: kill master %s: %v", m.addr(), err)
	}
	c.mu.Lock()
	m.dead = true
	c.mu.Unlock()
	return m.addr()
}

// WaitForFailover waits until a replica of the master killed at killedAddr
// has been promoted and serves its slots, every running node reports
// cluster_state:ok and flags the killed node as failed, the other replicas
// follow the new master, and every client from Client routes the killed
// master's slots to the new one. It fails the test after 25 s.
func (c *Cluster) WaitForFailover(t testing.TB, killedAddr string) {
	t.Helper()
	c.mu.Lock()
	idx := -1
	for i, m := range c.masters {
		if m.addr() == killedAddr {
			idx = i
		}
	}
	var old *clusterNode
	if idx >= 0 {
		old = c.masters[idx]
	}
	var candidates []*clusterNode
	for _, n := range c.nodes {
		if n.master == old && old != nil && !n.dead {
			candidates = append(candidates, n)
		}
	}
	live := 0
	for _, m := range c.masters {
		if !m.dead {
			live++
		}
	}
	c.mu.Unlock()
	switch {
	case old == nil || !old.dead:
		t.Fatalf("redistest: WaitForFailover(%s): not a master killed with KillMaster", killedAddr)
	case len(candidates) == 0:
		t.Fatalf("redistest: WaitForFailover(%s): the master has no running replica to promote", killedAddr)
	case 2*live <= len(c.masters):
		t.Fatalf("redistest: WaitForFailover(%s): %d of %d masters run, a failover needs a majority", killedAddr, live, len(c.masters))
	}

	var winner *clusterNode
	ok, status := poll(failoverWait, func(ctx context.Context) (bool, string) {
		for _, n := range candidates {
			entries, err := clusterNodes(ctx, n.admin)
			if err != nil {
				return false, fmt.Sprintf("%s: CLUSTER NODES: %v", n.addr(), err)
			}
			if self := entries[n.id]; self.has("master") && len(self.slots) > 0 {
				winner = n
				return true, ""
			}
		}
		return false, "no replica of " + killedAddr + " promoted yet"
	})
	if !ok {
		t.Fatalf("redistest: no failover of %s within %v: %s%s", killedAddr, failoverWait, status, logTails(c.procs(true)...))
	}
	c.mu.Lock()
	c.masters[idx] = winner
	winner.master = nil
	for _, n := range candidates {
		if n != winner {
			n.master = winner
		}
	}
	c.mu.Unlock()
	c.waitHealthy(t, failoverWait, "failover of "+killedAddr)
	c.refreshClients(t, idx)
}

// refreshClients waits until every tracked client routes the slots of
// master idx to its current node.
func (c *Cluster) refreshClients(t testing.TB, idx int) {
	t.Helper()
	key := c.KeyOnMaster(idx, "redistest:probe:")
	c.mu.Lock()
	clients := make([]*redis.ClusterClient, 0, len(c.clients))
	for cl := range c.clients {
		clients = append(clients, cl)
	}
	c.mu.Unlock()
	for _, cl := range clients {
		ok, status := poll(failoverWait, func(ctx context.Context) (bool, string) {
			cl.ReloadState(ctx)
			master, err := cl.MasterForKey(ctx, key)
			if err != nil {
				return false, err.Error()
			}
			if got, want := master.Options().Addr, c.MasterAddrs()[idx]; got != want {
				return false, fmt.Sprintf("client routes %s to %s, not %s", key, got, want)
			}
			if err := cl.Get(ctx, key).Err(); err != nil && !errors.Is(err, redis.Nil) {
				return false, err.Error()
			}
			return true, ""
		})
		if !ok {
			t.Fatalf("redistest: a cluster client did not learn the new slot owner within %v: %s", failoverWait, status)
		}
	}
}

// waitHealthy waits until every running node agrees with c's picture:
// cluster_state:ok with all slots served, masters serving their ranges,
// replicas following their masters and in sync, killed nodes flagged fail.
func (c *Cluster) waitHealthy(t testing.TB, timeout time.Duration, what string) {
	t.Helper()
	ok, status := poll(timeout, c.checkHealthy)
	if !ok {
		t.Fatalf("redistest: %s: cluster not healthy within %v: %s%s", what, timeout, status, logTails(c.procs(true)...))
	}
}

func (c *Cluster) checkHealthy(ctx context.Context) (bool, string) {
	c.mu.Lock()
	nodes := append([]*clusterNode(nil), c.nodes...)
	slotsOf := map[*clusterNode]string{}
	for i, m := range c.masters {
		slotsOf[m] = slotRange(c.ranges[i])
	}
	followed := map[*clusterNode]*clusterNode{}
	for _, n := range nodes {
		followed[n] = n.master
	}
	dead := map[*clusterNode]bool{}
	for _, n := range nodes {
		dead[n] = n.dead
	}
	c.mu.Unlock()

	for _, n := range nodes {
		if dead[n] {
			continue
		}
		info, err := n.admin.ClusterInfo(ctx).Result()
		if err != nil {
			return false, fmt.Sprintf("%s: CLUSTER INFO: %v", n.addr(), err)
		}
		f := infoFields(info)
		if f["cluster_state"] != "ok" || f["cluster_slots_assigned"] != "16384" || f["cluster_slots_ok"] != "16384" ||
			f["cluster_known_nodes"] != strconv.Itoa(len(nodes)) {
			return false, fmt.Sprintf("%s: cluster_state:%s slots_assigned:%s slots_ok:%s known_nodes:%s (want %d)",
				n.addr(), f["cluster_state"], f["cluster_slots_assigned"], f["cluster_slots_ok"], f["cluster_known_nodes"], len(nodes))
		}
		entries, err := clusterNodes(ctx, n.admin)
		if err != nil {
			return false, fmt.Sprintf("%s: CLUSTER NODES: %v", n.addr(), err)
		}
		for _, o := range nodes {
			e, found := entries[o.id]
			switch {
			case !found:
				return false, fmt.Sprintf("%s does not know %s", n.addr(), o.addr())
			case dead[o]:
				if !e.has("fail") {
					return false, fmt.Sprintf("%s does not flag the killed %s as failed yet (flags %s)", n.addr(), o.addr(), e.flags)
				}
				continue
			case e.has("fail") || e.has("fail?") || e.has("handshake") || e.has("noaddr"):
				return false, fmt.Sprintf("%s sees %s as %s", n.addr(), o.addr(), e.flags)
			case !e.has("myself") && e.link != "connected":
				return false, fmt.Sprintf("%s: link to %s is %s", n.addr(), o.addr(), e.link)
			}
			if m := followed[o]; m != nil {
				if !e.has("slave") || e.master != m.id {
					return false, fmt.Sprintf("%s sees %s as %s of %s, want a replica of %s", n.addr(), o.addr(), e.flags, e.master, m.addr())
				}
			} else if want, isMaster := slotsOf[o]; isMaster {
				if !e.has("master") || strings.Join(e.slots, " ") != want {
					return false, fmt.Sprintf("%s sees %s as %s serving %q, want a master serving %s", n.addr(), o.addr(), e.flags, e.slots, want)
				}
			}
		}
		if followed[n] != nil {
			info, err := n.admin.Info(ctx, "replication").Result()
			if err != nil {
				return false, fmt.Sprintf("%s: INFO replication: %v", n.addr(), err)
			}
			f := infoFields(info)
			if f["master_link_status"] != "up" || f["master_sync_in_progress"] != "0" {
				return false, fmt.Sprintf("replica %s: master_link_status:%s master_sync_in_progress:%s", n.addr(), f["master_link_status"], f["master_sync_in_progress"])
			}
		}
	}
	return true, ""
}

func slotRange(r [2]int) string {
	if r[0] == r[1] {
		return strconv.Itoa(r[0])
	}
	return fmt.Sprintf("%d-%d", r[0], r[1])
}

// nodeEntry is one line of CLUSTER NODES.
type nodeEntry struct {
	addr   string
	flags  string
	master string // master id, "-" for a master
	link   string
	slots  []string
}

func (e nodeEntry) has(flag string) bool {
	for f := range strings.SplitSeq(e.flags, ",") {
		if f == flag {
			return true
		}
	}
	return false
}

// clusterNodes runs CLUSTER NODES and indexes its lines by node id.
func clusterNodes(ctx context.Context, c *redis.Client) (map[string]nodeEntry, error) {
	out, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	entries := map[string]nodeEntry{}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		// <id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv> <epoch> <link> <slot>...
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		entries[f[0]] = nodeEntry{addr: f[1], flags: f[2], master: f[3], link: f[7], slots: f[8:]}
	}
	return entries, nil
}

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
