package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/connect"
)

// TestNoScriptRecovery: after SCRIPT FLUSH or a restart the server answers NOSCRIPT, and
// the next decision falls back to EVAL, once, for a fresh CLI run and a long-lived Store.
func TestNoScriptRecovery(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()

	consume := func(key string) {
		t.Helper()
		if r := run(t, srv.URL(), "consume", key, "--capacity", "10", "--rate", "0.01"); r.code != ExitOK {
			t.Fatalf("consume %s: exit %d %q", key, r.code, r.errOut)
		}
	}
	consume("cli")
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	consume("cli")
	if got := hget(t, admin, "cli", "allowed"); got != "2" {
		t.Fatalf("after SCRIPT FLUSH: %q allowed, want 2", got)
	}

	st := bucket.NewStore(dialTest(t, connect.Server{URL: srv.URL()}))
	take := func(want string) {
		t.Helper()
		if _, err := st.Take(ctx, "lived", bucket.Spec{Capacity: 10, Rate: 0.01}, 1); err != nil {
			t.Fatalf("Take: %v", err)
		}
		if got := hget(t, admin, "lived", "allowed"); got != want {
			t.Fatalf("%q allowed, want %s", got, want)
		}
	}
	take("1")
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	take("2")

	srv.Restart(t)
	if n := admin.Exists(ctx, "lived", "cli").Val(); n != 0 {
		t.Fatalf("%d buckets survived the restart: the test expects an empty server", n)
	}
	take("1")
	consume("cli")
	if got := hget(t, admin, "cli", "allowed"); got != "1" {
		t.Fatalf("after a restart: %q allowed, want 1", got)
	}
}

// TestTimeoutHonoured: a server that stalls past --timeout during a consume gives exit 3
// and one line saying the outcome is unknown; the consume is applied at most once.
func TestTimeoutHonoured(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c := dialTest(t, connect.Server{URL: srv.URL(), Timeout: 200 * time.Millisecond})
	if _, err := bucket.NewStore(c).Take(context.Background(), "slow", bucket.Spec{Capacity: 10, Rate: 0.01}, 1); err != nil {
		t.Fatal(err)
	}
	awake := redistest.Stall(t, srv.Addr(), "1")
	r := runConnected(t, c, "--url", srv.URL(), "--timeout", "200ms", "consume", "slow")
	awake()
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, `no reply for "slow"`) || !strings.Contains(r.errOut, "timeout") ||
		!strings.Contains(r.errOut, "may or may not have been applied") {
		t.Fatalf("consume on a stalled server: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
	// The consume was written before the read timed out: the server runs it once it wakes.
	// Wait for that copy; the command closed its client, so a re-sent copy was written
	// before: one more round trip, then check that no second copy ran.
	redistest.WaitFor(t, 3*time.Second, "the timed-out consume to run once the server wakes", func() bool {
		return hget(t, admin, "slow", "allowed") != "1"
	})
	if err := admin.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if got := hget(t, admin, "slow", "allowed"); got != "1" && got != "2" {
		t.Fatalf("%q allowed after a timed-out consume, want 1 or 2 (applied at most once)", got)
	}

	// Stalled before the connection check: nothing is sent, and the line says so.
	awake = redistest.Stall(t, srv.Addr(), "1")
	r = run(t, srv.URL(), "--timeout", "200ms", "consume", "slow")
	awake()
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, srv.Addr()) || !strings.Contains(r.errOut, "--timeout") {
		t.Fatalf("consume when the server is stalled from the start: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
}

// TestUnreachableAtStart: with every Cluster seed or every sentinel down, one line names
// the addresses and the cause, and the exit code is 3.
func TestUnreachableAtStart(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--cluster", "127.0.0.1:1,127.0.0.1:2"},
		{"--sentinel-master", "mymaster", "--sentinel-addrs", "127.0.0.1:1,127.0.0.1:2"},
	} {
		r := run(t, "", append(args, "--dial-timeout", "500ms", "inspect", "k")...)
		if r.code != ExitUnreachable || !strings.Contains(r.errOut, "127.0.0.1:1,127.0.0.1:2") || !strings.Contains(r.errOut, "refused") ||
			!strings.Contains(r.errOut, "check "+args[len(args)-2]) {
			t.Errorf("%v: exit %d %q", args, r.code, r.errOut)
			continue
		}
		oneLine(t, r)
	}
}

// TestWideStandalone: -o wide shows the one server's address.
func TestWideStandalone(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	run(t, srv.URL(), "consume", "w:1", "--capacity", "3", "--rate", "1")
	for _, args := range [][]string{{"list", "-o", "wide"}, {"inspect", "w:1", "-o", "wide"}} {
		r := run(t, srv.URL(), args...)
		if r.code != ExitOK || !strings.Contains(r.out, "NODE") || !strings.Contains(lineOf(r.out, "w:1"), srv.Addr()) {
			t.Errorf("%v: exit %d %q %q", args, r.code, r.out, r.errOut)
		}
	}
	if r := run(t, srv.URL(), "inspect", "w:1", "-o", "json"); !strings.Contains(r.out, `"node": "`+srv.Addr()+`"`) {
		t.Errorf("inspect -o json lacks the node: %s", r.out)
	}
}
