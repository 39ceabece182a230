package redistest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// KillMaster kills the i-th master (see MasterAddrs) with SIGKILL and
// returns its address, for WaitForFailover.
func (c *Cluster) KillMaster(i int) string {
	m, ok := masterItem(c, "KillMaster", i, func() []*clusterNode { return c.masters })
	if !ok {
		return ""
	}
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
	for _, cl := range c.clients.list() {
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
