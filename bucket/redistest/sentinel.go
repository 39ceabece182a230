package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/sandbox"
)

// sentinelMasterName is the name the sentinels monitor the master under.
const sentinelMasterName = "mymaster"

// Sentinel is a Redis Sentinel setup: a master, one replica and three
// sentinels monitoring them as "mymaster" with quorum 2,
// down-after-milliseconds 1000 and failover-timeout 5000.
type Sentinel struct {
	tb        testing.TB
	data      []*Server // the master and the replica, in start order
	sentinels []*sandbox.Redis

	mu      sync.Mutex
	clients tracked[*redis.Client]
}

// StartSentinel starts a master, a replica of it and three sentinels, and
// waits until every sentinel sees the master up, the replica in sync and the
// two other sentinels. Everything is stopped in t.Cleanup.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin := requireRedisServer(t)
	master := Start(t)
	replica := Start(t, WithReplicaOf(master))
	s := &Sentinel{tb: t, data: []*Server{master, replica}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: sentinel logs:%s", logTails(s.sentinels...))
		}
		s.stopSentinels()
	})
	for i := range 3 {
		dir := t.TempDir()
		// Sentinel rewrites its config file, so it lives in the temp dir.
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf(`sentinel resolve-hostnames no
sentinel monitor %[1]s 127.0.0.1 %[2]d 2
sentinel down-after-milliseconds %[1]s 1000
sentinel failover-timeout %[1]s 5000
sentinel parallel-syncs %[1]s 1
`, sentinelMasterName, master.Port())
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatalf("redistest: write %s: %v", conf, err)
		}
		r, err := sandbox.StartRedis(context.Background(), sandbox.RedisConfig{
			Binary:       bin,
			Dir:          dir,
			ConfigFile:   conf,
			Sentinel:     true,
			LogPath:      filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", i)),
			ReadyTimeout: readyTimeout,
		})
		if err != nil {
			t.Fatalf("redistest: start sentinel %d: %v", i, err)
		}
		s.sentinels = append(s.sentinels, r)
	}
	s.waitSentinelsAgree(t, master.Addr(), replica.Addr(), "sentinel start")
	return s
}

// MasterName returns the name the sentinels monitor the master under.
func (s *Sentinel) MasterName() string { return sentinelMasterName }

// SentinelAddrs returns the sentinels' addresses.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.sentinels))
	for i, r := range s.sentinels {
		addrs[i] = r.Addr()
	}
	return addrs
}

// MasterAddr returns the master's address as the first sentinel that
// answers reports it.
func (s *Sentinel) MasterAddr(t testing.TB) string {
	t.Helper()
	var errs []string
	for _, r := range s.sentinels {
		addr, err := s.masterAddrFrom(r.Addr())
		if err == nil {
			return addr
		}
		errs = append(errs, fmt.Sprintf("%s: %v", r.Addr(), err))
	}
	t.Fatalf("redistest: no sentinel reports the master: %s", strings.Join(errs, "; "))
	return ""
}

func (s *Sentinel) masterAddrFrom(sentinelAddr string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	sc := redis.NewSentinelClient(adminOptions(sentinelAddr))
	defer sc.Close()
	hp, err := sc.GetMasterAddrByName(ctx, sentinelMasterName).Result()
	if err != nil {
		return "", err
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("GET-MASTER-ADDR-BY-NAME answered %q", hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// FailoverClient returns a go-redis failover client for the master, closed
// in t.Cleanup. Failover waits until it talks to the new master.
func (s *Sentinel) FailoverClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    sentinelMasterName,
		SentinelAddrs: s.SentinelAddrs(),
	})
	return s.clients.add(t, c)
}

// Failover asks a sentinel for a failover (SENTINEL FAILOVER) and waits
// until every sentinel reports the other data node as master and that node
// answers ROLE as master. It then turns the old master into a replica of the
// new one and closes its client connections, as the sentinels would do some
// seconds later, and waits until it is in sync, so Failover can be called
// again. Clients from FailoverClient talk to the new master when it returns.
// It fails the test after 25 s.
func (s *Sentinel) Failover(t testing.TB) {
	t.Helper()
	oldAddr := s.MasterAddr(t)
	var oldMaster, newMaster *Server
	s.mu.Lock()
	data := s.data
	s.mu.Unlock()
	for _, d := range data {
		if d.Addr() == oldAddr {
			oldMaster = d
		} else {
			newMaster = d
		}
	}
	if oldMaster == nil {
		t.Fatalf("redistest: the sentinels report master %s, which is neither data node", oldAddr)
	}

	next := 0
	ok, status := poll(failoverWait, func(ctx context.Context) (bool, string) {
		sc := redis.NewSentinelClient(adminOptions(s.sentinels[next%len(s.sentinels)].Addr()))
		defer sc.Close()
		next++
		if err := sc.Failover(ctx, sentinelMasterName).Err(); err != nil {
			// NOGOODSLAVE: the sentinel has not judged the replica fit yet;
			// INPROGRESS: a failover is running already. Both pass.
			return false, "SENTINEL FAILOVER: " + err.Error()
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("redistest: %s%s", status, logTails(s.procs()...))
	}

	newAddr := newMaster.Addr()
	newAdmin := redis.NewClient(newMaster.adminOptions())
	defer newAdmin.Close()
	ok, status = poll(failoverWait, func(ctx context.Context) (bool, string) {
		for _, r := range s.sentinels {
			addr, err := s.masterAddrFrom(r.Addr())
			if err != nil {
				return false, fmt.Sprintf("sentinel %s: %v", r.Addr(), err)
			}
			if addr != newAddr {
				return false, fmt.Sprintf("sentinel %s reports master %s", r.Addr(), addr)
			}
		}
		role, err := newAdmin.Do(ctx, "ROLE").Slice()
		if err != nil {
			return false, fmt.Sprintf("ROLE on %s: %v", newAddr, err)
		}
		if len(role) == 0 || role[0] != "master" {
			return false, fmt.Sprintf("ROLE on %s: %v", newAddr, role)
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("redistest: failover from %s to %s not done within %v: %s%s", oldAddr, newAddr, failoverWait, status, logTails(s.procs()...))
	}

	// Demote the old master now rather than when the sentinels get to it.
	oldAdmin := redis.NewClient(oldMaster.adminOptions())
	defer oldAdmin.Close()
	ok, status = poll(failoverWait, func(ctx context.Context) (bool, string) {
		if err := oldAdmin.ReplicaOf(ctx, "127.0.0.1", strconv.Itoa(newMaster.Port())).Err(); err != nil {
			return false, fmt.Sprintf("REPLICAOF on %s: %v", oldAddr, err)
		}
		if err := oldAdmin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal").Err(); err != nil {
			return false, fmt.Sprintf("CLIENT KILL on %s: %v", oldAddr, err)
		}
		if err := oldAdmin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
			return false, fmt.Sprintf("CLIENT KILL on %s: %v", oldAddr, err)
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("redistest: demote %s: %s%s", oldAddr, status, logTails(s.procs()...))
	}
	s.mu.Lock()
	s.data = []*Server{newMaster, oldMaster}
	s.mu.Unlock()
	waitReplicaInSync(t, oldMaster.adminOptions(), newAddr, oldMaster.proc(), newMaster.proc())
	// The sentinels learn that the old master replicates only at their next
	// INFO of it (every 10 s); they need not have, for it to be promoted again.
	s.waitSentinelsAgree(t, newAddr, "", "failover to "+newAddr)
	s.refreshClients(t, newAddr)
}

// waitSentinelsAgree waits until every sentinel sees the master up at
// masterAddr and the other sentinels, and, unless replicaAddr is "", the
// replica at replicaAddr following it with a live link.
func (s *Sentinel) waitSentinelsAgree(t testing.TB, masterAddr, replicaAddr, what string) {
	t.Helper()
	ok, status := poll(failoverWait, func(ctx context.Context) (bool, string) {
		for _, r := range s.sentinels {
			sc := redis.NewSentinelClient(adminOptions(r.Addr()))
			st, ok := sentinelView(ctx, sc, masterAddr, replicaAddr, len(s.sentinels)-1)
			_ = sc.Close()
			if !ok {
				return false, fmt.Sprintf("sentinel %s: %s", r.Addr(), st)
			}
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("redistest: %s: sentinels not in agreement within %v: %s%s", what, failoverWait, status, logTails(s.procs()...))
	}
}

func sentinelView(ctx context.Context, sc *redis.SentinelClient, masterAddr, replicaAddr string, others int) (string, bool) {
	m, err := sc.Master(ctx, sentinelMasterName).Result()
	if err != nil {
		return "SENTINEL MASTER: " + err.Error(), false
	}
	if addr := net.JoinHostPort(m["ip"], m["port"]); addr != masterAddr {
		return fmt.Sprintf("master is %s, want %s", addr, masterAddr), false
	}
	if m["flags"] != "master" || m["num-other-sentinels"] != strconv.Itoa(others) {
		return fmt.Sprintf("master flags %q, %s other sentinels (want %d)", m["flags"], m["num-other-sentinels"], others), false
	}
	if replicaAddr == "" {
		return "", true
	}
	replicas, err := sc.Replicas(ctx, sentinelMasterName).Result()
	if err != nil {
		return "SENTINEL REPLICAS: " + err.Error(), false
	}
	for _, r := range replicas {
		if net.JoinHostPort(r["ip"], r["port"]) != replicaAddr {
			continue
		}
		if r["flags"] != "slave" || r["master-link-status"] != "ok" || net.JoinHostPort(r["master-host"], r["master-port"]) != masterAddr {
			return fmt.Sprintf("replica %s: flags %q, link %q, master %s:%s", replicaAddr, r["flags"], r["master-link-status"], r["master-host"], r["master-port"]), false
		}
		return "", true
	}
	return fmt.Sprintf("replica %s not discovered yet (%d replicas known)", replicaAddr, len(replicas)), false
}

// refreshClients waits until every tracked failover client talks to the
// master at addr.
func (s *Sentinel) refreshClients(t testing.TB, addr string) {
	t.Helper()
	for _, c := range s.clients.list() {
		ok, status := poll(failoverWait, func(ctx context.Context) (bool, string) {
			// The old master is a replica now, so ROLE tells them apart.
			role, err := c.Do(ctx, "ROLE").Slice()
			if err != nil {
				return false, err.Error()
			}
			if len(role) == 0 || role[0] != "master" {
				return false, fmt.Sprintf("ROLE: %v", role)
			}
			return true, ""
		})
		if !ok {
			t.Fatalf("redistest: a failover client did not move to %s within %v: %s", addr, failoverWait, status)
		}
	}
}

func (s *Sentinel) procs() []*sandbox.Redis {
	ps := append([]*sandbox.Redis(nil), s.sentinels...)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.data {
		ps = append(ps, d.proc())
	}
	return ps
}

func (s *Sentinel) stopSentinels() {
	var wg sync.WaitGroup
	for _, r := range s.sentinels {
		wg.Go(func() {
			if err := r.Stop(stopGrace); err != nil {
				s.tb.Errorf("redistest: stop sentinel %s: %v", r.Addr(), err)
			}
		})
	}
	wg.Wait()
}
