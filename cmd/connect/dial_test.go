package connect

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// read is a one-key read as inspect makes it: TIME and a read in one pipeline.
func read(ctx context.Context, c redis.Cmdable) (*redis.TimeCmd, *redis.StringCmd, error) {
	var t *redis.TimeCmd
	var g *redis.StringCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		t, g = p.Time(ctx), p.Get(ctx, "k")
		return nil
	})
	return t, g, err
}

// TestPingInFirstRead: the reachability PING rides in the first pipeline, so a one-key
// read makes two round trips (HELLO, then PING with the reads) where a PING by a pipeline
// made three, and the server still sees the PING; a server that cannot be reached fails the
// read as Dial's PING would (the address and the cause); a PING the ACL refuses is the
// permission error it was.
func TestPingInFirstRead(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	admin.Set(ctx, "k", "v", 0)
	// stat reads a field of INFO: a read event of the server is one round trip of a client
	// (each INFO is one too).
	stat := func(section, prefix string) string {
		for _, l := range strings.Split(admin.Info(ctx, section).Val(), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
				return strings.SplitN(v, ",", 2)[0]
			}
		}
		return ""
	}
	reads := func() int64 {
		n, err := strconv.ParseInt(stat("stats", "total_reads_processed:"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	clients := stat("clients", "connected_clients:") // the admin's

	for _, c := range []struct {
		check Check
		trips int64
	}{
		{PingFirst, 3},       // HELLO, PING, the read: pipelines share the pool (PipelinePoolSize -1)
		{PingByPipeline, 3},  // HELLO, PING, the read, on one connection
		{PingInFirstRead, 2}, // HELLO, PING with the read
	} {
		pings, r0 := stat("commandstats", "cmdstat_ping:"), reads()
		s := &Server{URL: srv.URL(), DialTimeout: time.Second, Timeout: time.Second}
		cl, err := s.Dial(ctx, c.check)
		if err != nil {
			t.Fatalf("check %d: %v", c.check, err)
		}
		tm, g, err := read(ctx, cl.(*redis.Client))
		if err != nil || g.Val() != "v" || tm.Val().IsZero() {
			t.Fatalf("check %d: read %v %q %v", c.check, err, g.Val(), tm.Val())
		}
		// reads() itself is one read event, and the first INFO's counted one before it.
		if got := reads() - r0 - 1; got != c.trips {
			t.Errorf("check %d: %d round trips for HELLO, the check and one read, want %d", c.check, got, c.trips)
		}
		if after := stat("commandstats", "cmdstat_ping:"); after == pings {
			t.Errorf("check %d: the server saw no PING (%s)", c.check, after)
		}
		_ = cl.Close()
		// A close is a read event too: the next check counts from after the server's.
		redistest.WaitFor(t, 5*time.Second, "the server to see the client close", func() bool {
			return stat("clients", "connected_clients:") == clients
		})
	}

	// Nothing listens: the read fails as Dial's PING would, naming the address.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	s := &Server{URL: "redis://" + addr, DialTimeout: time.Second, Timeout: time.Second}
	cl, err := s.Dial(ctx, PingInFirstRead)
	if err != nil {
		t.Fatalf("Dial made a round trip: %v", err)
	}
	tm, g, err := read(ctx, cl.(*redis.Client))
	var ue *UnreachableError
	if !errors.As(err, &ue) || !errors.As(tm.Err(), &ue) || !errors.As(g.Err(), &ue) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("read from a closed port: %v / %v / %v, want UnreachableError naming %s", err, tm.Err(), g.Err(), addr)
	}
	_ = cl.Close()

	// A refused password fails the connection before the PING is sent: the read says so as
	// Dial's PING did.
	admin.Do(ctx, "ACL", "SETUSER", "ops", "on", ">right", "+@all", "~*")
	s = &Server{URL: srv.URL(), User: "ops", password: "wrong", DialTimeout: time.Second, Timeout: time.Second}
	cl, err = s.Dial(ctx, PingInFirstRead)
	if err != nil {
		t.Fatal(err)
	}
	tm, g, err = read(ctx, cl.(*redis.Client))
	if !errors.As(err, &ue) || !errors.As(tm.Err(), &ue) || !errors.As(g.Err(), &ue) || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("read with a wrong password: %v / %v / %v, want UnreachableError with WRONGPASS", err, tm.Err(), g.Err())
	}
	_ = cl.Close()

	// An ACL user that may not PING: the read fails with the permission error.
	admin.Do(ctx, "ACL", "SETUSER", "noping", "on", ">np", "+@all", "-ping", "~*")
	s = &Server{URL: srv.URL(), User: "noping", password: "np", DialTimeout: time.Second, Timeout: time.Second}
	cl, err = s.Dial(ctx, PingInFirstRead)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = read(ctx, cl.(*redis.Client))
	var pe *PermissionError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "ping") {
		t.Fatalf("read as a user without +ping: %v, want a PermissionError naming ping", err)
	}
	_ = cl.Close()

	// The user named by the URL alone is the one the error names.
	s = &Server{URL: "redis://noping@" + strings.TrimPrefix(srv.URL(), "redis://"), password: "np", DialTimeout: time.Second, Timeout: time.Second}
	cl, err = s.Dial(ctx, PingInFirstRead)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = read(ctx, cl.(*redis.Client))
	if !errors.As(err, &pe) || pe.User != "noping" {
		t.Fatalf("read as the URL's user without +ping: %v, want a PermissionError naming user noping", err)
	}
	_ = cl.Close()
}

// TestYieldBeforeReads: load's dialer marks its connections to yield before reads, keeps
// the guard and go-redis's peek (syscall.Conn), and commands go through; other connections
// do not yield.
func TestYieldBeforeReads(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	for _, yield := range []bool{false, true} {
		dial := guardedDialer(time.Second, nil)
		if yield {
			dial = YieldBeforeReads(dial)
		}
		c, err := dial(ctx, "tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		g, ok := c.(*guardSyscallConn)
		if !ok {
			t.Fatalf("yield %v: dialed a %T, want the guard with syscall.Conn", yield, c)
		}
		if g.yield != yield {
			t.Errorf("connection yields %v, want %v", g.yield, yield)
		}
		_ = c.Close()
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr(), Dialer: dial, Protocol: 2})
		if got, err := rc.Echo(ctx, "x").Result(); err != nil || got != "x" {
			t.Errorf("yield %v: ECHO x = %q, %v", yield, got, err)
		}
		_ = rc.Close()
	}
}
