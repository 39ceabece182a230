package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

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
