package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// TestSentinelFailover: bucketctl finds the master through the sentinels, and after a
// failover both a fresh run and a long-lived Store reach the new master.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t)
	flags := []string{"--sentinel-master", s.MasterName(), "--sentinel-addrs", strings.Join(s.SentinelAddrs(), ",")}
	cli := func(args ...string) result {
		t.Helper()
		return run(t, "", append(flags, args...)...)
	}
	node := func(key string) string {
		t.Helper()
		r := cli("inspect", key, "-o", "json")
		var v output.StateView
		if err := json.Unmarshal([]byte(r.out), &v); r.code != ExitOK || err != nil {
			t.Fatalf("inspect %s: exit %d %v %q", key, r.code, err, r.errOut)
		}
		return v.Node
	}

	if r := cli("consume", "s:k", "--capacity", "100", "--rate", "0.01"); r.code != ExitOK {
		t.Fatalf("consume: exit %d %q", r.code, r.errOut)
	}
	oldMaster := s.MasterAddr(t)
	if got := node("s:k"); got != oldMaster {
		t.Fatalf("inspect names node %q, the master is %s", got, oldMaster)
	}

	// A long-lived Store keeps deciding while the sentinels fail over.
	st := bucket.NewStore(dialTest(t, connect.Server{SentinelMaster: s.MasterName(), SentinelAddrs: s.SentinelAddrs(), Timeout: time.Second}))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var (
		mu                       sync.Mutex
		ok, failed, uncertain    int
		lastOK                   time.Time
		wg                       sync.WaitGroup
		spec                     = bucket.Spec{Capacity: 1e6, Rate: 0.01}
		okAfterSwitch, switchEnd time.Time
	)
	wg.Go(func() {
		for ctx.Err() == nil {
			_, err := st.Take(ctx, "s:lived", spec, 1)
			var ue *bucket.UncertainError
			mu.Lock()
			switch {
			case err == nil:
				ok++
				lastOK = time.Now()
			case ctx.Err() != nil:
			case errors.As(err, &ue):
				uncertain++
			default:
				failed++
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	})
	redistest.WaitFor(t, 10*time.Second, "decisions before the failover", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ok >= 20
	})
	s.Failover(t)
	switchEnd = time.Now()
	newMaster := s.MasterAddr(t)
	if newMaster == oldMaster {
		t.Fatalf("the master is still %s after the failover", newMaster)
	}
	deadline := switchEnd.Add(15 * time.Second)
	for {
		mu.Lock()
		okAfterSwitch = lastOK
		mu.Unlock()
		if okAfterSwitch.After(switchEnd) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long-lived Store made no decision within 15 s of the failover")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	wg.Wait()

	// Every decision that got a reply is on the new master (which replicated the old
	// one's); none was applied twice.
	nm := redis.NewClient(&redis.Options{Addr: newMaster})
	defer nm.Close()
	allowed, _ := strconv.Atoi(hget(t, nm, "s:lived", "allowed"))
	t.Logf("long-lived Store: %d decisions, %d failed, %d uncertain; the new master counts %d", ok, failed, uncertain, allowed)
	if allowed == 0 || allowed > ok+uncertain {
		t.Fatalf("the new master counts %d decisions; %d got a reply and %d may have arrived", allowed, ok, uncertain)
	}

	// A fresh run reaches the new master.
	if r := cli("consume", "s:k"); r.code != ExitOK {
		t.Fatalf("consume after the failover: exit %d %q", r.code, r.errOut)
	}
	if got := hget(t, nm, "s:k", "allowed"); got != "2" {
		t.Fatalf("s:k on the new master counts %q allowed, want 2", got)
	}
	if got := node("s:k"); got != newMaster {
		t.Fatalf("inspect names node %q after the failover, the master is %s", got, newMaster)
	}
}

// TestSentinelAuthHint: when the sentinels refuse the client (they have a password of their
// own), the one error line names the sentinels' password variable, not the data nodes'.
func TestSentinelAuthHint(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	for _, a := range s.SentinelAddrs() {
		c := redis.NewClient(&redis.Options{Addr: a})
		err := c.Do(ctx, "acl", "setuser", "default", "resetpass", ">sentinel-secret").Err()
		_ = c.Close()
		if err != nil {
			t.Fatalf("sentinel %s: %v", a, err)
		}
	}
	t.Cleanup(func() {
		for _, a := range s.SentinelAddrs() {
			c := redis.NewClient(&redis.Options{Addr: a, Password: "sentinel-secret"})
			_ = c.Do(context.Background(), "acl", "setuser", "default", "nopass").Err()
			_ = c.Close()
		}
	})
	r := run(t, "", "--sentinel-master", s.MasterName(), "--sentinel-addrs", strings.Join(s.SentinelAddrs(), ","), "inspect", "k")
	if r.code != ExitError || strings.Count(r.errOut, "\n") != 1 || !strings.Contains(r.errOut, "the sentinels refused the client") ||
		!strings.Contains(r.errOut, "BUCKETCTL_SENTINEL_PASSWORD") {
		t.Fatalf("sentinels refusing the client: exit %d, %q; want exit 1 and one line naming BUCKETCTL_SENTINEL_PASSWORD", r.code, r.errOut)
	}
	setEnv(t, "BUCKETCTL_SENTINEL_PASSWORD", "sentinel-secret")
	if r := run(t, "", "--sentinel-master", s.MasterName(), "--sentinel-addrs", strings.Join(s.SentinelAddrs(), ","), "inspect", "k"); r.code != ExitNoKey {
		t.Fatalf("with the sentinels' password: exit %d, %q (want 6: connected, no such key)", r.code, r.errOut)
	}
}
