package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/scripts"
)

// resetSHA is the reset script's SHA1, which a proxy rule matches to fault a reset's write.
var resetSHA = redis.NewScript(scripts.Reset()).Hash()

// TestResetKeyOutcomeUnknown: a reset whose reply is late or lost (held by a proxy past
// --timeout, a dropped connection, a paused server, a killed one) is never "nothing
// changed": exit 3, one line saying the outcome is unknown, naming the server and the
// cause, and that re-running is safe. Where the server got the request it applied it, which
// is why "nothing changed" was a lie; re-running gives the same state.
func TestResetKeyOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		fault   redistest.Fault
		before  func(srv *redistest.Server, admin *redis.Client) func()
		cause   []string
		applied bool
	}{
		{"delayed reply", redistest.Hold, nil, []string{"within --timeout", "i/o timeout"}, true},
		{"dropped connection", redistest.Drop, nil, []string{"was lost before the reply ("}, true},
		{"paused server", redistest.Pass, func(_ *redistest.Server, admin *redis.Client) func() {
			return func() {
				if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "1500", "ALL").Err(); err != nil {
					t.Errorf("CLIENT PAUSE: %v", err)
				}
			}
		}, []string{"within --timeout"}, false}, // the client gone, Redis drops the paused command
		{"killed server", redistest.Pass, func(srv *redistest.Server, _ *redis.Client) func() { return srv.Kill }, []string{"the connection to "}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			admin := srv.Client(t)
			ctx := context.Background()
			if err := admin.HSet(ctx, "k", "tokens", "2", "last_refill", fmt.Sprint(time.Now().Unix())).Err(); err != nil {
				t.Fatal(err)
			}
			loadReset(t, admin)
			p := redistest.StartProxy(t, srv.Addr())
			rule := redistest.Rule{Match: resetSHA, Fault: tc.fault}
			if tc.before != nil {
				rule.Before = tc.before(srv, admin)
			}
			p.Arm(rule)
			args := []string{"--timeout", "300ms", "reset", "k", "--layout", "express", "--capacity", "10", "--rate", "1", "--tokens", "7", "--yes"}
			r := run(t, p.URL(), args...)
			p.Release()
			if !p.Fired() {
				t.Fatalf("the fault never fired: exit %d %q", r.code, r.errOut)
			}
			want := append([]string{`reset "k" on ` + p.Addr() + ": outcome unknown", "re-running the same command is safe"}, tc.cause...)
			for _, w := range want {
				if !strings.Contains(r.errOut, w) {
					t.Fatalf("exit %d, stderr %q lacks %q", r.code, r.errOut, w)
				}
			}
			if r.code != ExitUnreachable || strings.Contains(r.errOut, "nothing changed") {
				t.Fatalf("exit %d %q, want %d and no 'nothing changed'", r.code, r.errOut, ExitUnreachable)
			}
			oneLine(t, r)
			if !tc.applied {
				return
			}
			redistest.WaitFor(t, 5*time.Second, "the reset to be applied", func() bool {
				return admin.HGet(ctx, "k", "tokens").Val() == "7"
			})
			if r := run(t, srv.URL(), args[2:]...); r.code != ExitOK || admin.HGet(ctx, "k", "tokens").Val() != "7" {
				t.Fatalf("re-run: exit %d %q, tokens %q", r.code, r.errOut, admin.HGet(ctx, "k", "tokens").Val())
			}
		})
	}
}

// TestResetMatchOutcomeUnknown: a --match whose batch after the first gets no reply (held, dropped)
// says how many were reset and that up to the batch in flight more are unknown, names the
// server and the cause, and that re-running is safe; the server holds exactly that: at
// least the count reset, at most the count plus the unknown ones (all of them when the
// server got the whole batch). The unknown batch's keys are not printed as reset.
func TestResetMatchOutcomeUnknown(t *testing.T) {
	t.Parallel()
	const n = 1200
	for _, tc := range []struct {
		name  string
		fault redistest.Fault
		cause string
		kill  bool // the server is killed as the batch is sent, and restarted empty after
	}{
		{"delayed reply", redistest.Hold, "within --timeout", false},
		{"dropped connection", redistest.Drop, "was lost before the reply (", false},
		{"restarted server", redistest.Pass, "the connection to ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			admin := srv.Client(t)
			ctx := context.Background()
			pipe := admin.Pipeline()
			for i := range n {
				pipe.HSet(ctx, fmt.Sprintf("m:%d", i), "tokens", "2", "last_refill", fmt.Sprint(time.Now().Unix()))
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			loadReset(t, admin)
			p := redistest.StartProxy(t, srv.Addr())
			// The second batch: the first was applied, and answered, before it was sent. SCAN
			// pages hold COUNT (500) keys at least, batches 500 at most: 500 scripts first.
			rule := redistest.Rule{Match: resetSHA, Skip: 500, Fault: tc.fault}
			if tc.kill {
				rule.Before = srv.Kill
			}
			p.Arm(rule)
			r := run(t, p.URL(), "--timeout", "300ms", "reset", "--match", "m:*", "--layout", "express", "--capacity", "10", "--rate", "1", "--yes", "-o", "jsonl")
			p.Release()
			if !p.Fired() {
				t.Fatalf("the fault never fired: exit %d %q", r.code, r.errOut)
			}
			var done, unknown int
			line := r.errOut[strings.LastIndex(strings.TrimRight(r.errOut, "\n"), "\n")+1:]
			counts := line[strings.Index(line, p.Addr()+": ")+len(p.Addr())+2:]
			if _, err := fmt.Sscanf(counts, "%d reset, up to %d more unknown", &done, &unknown); err != nil {
				t.Fatalf("exit %d, last line %q: %v", r.code, line, err)
			}
			for _, w := range []string{`reset --match "m:*" on ` + p.Addr() + ": ", tc.cause, "re-running the same command is safe"} {
				if !strings.Contains(line, w) {
					t.Fatalf("last line %q lacks %q", line, w)
				}
			}
			if r.code != ExitUnreachable || done == 0 || unknown == 0 || unknown > 500 {
				t.Fatalf("exit %d, %d reset, %d unknown: %q", r.code, done, unknown, r.errOut)
			}
			if printed := strings.Count(r.out, `"done":true`); printed != done {
				t.Fatalf("%d keys printed as reset, the line says %d", printed, done)
			}
			if tc.kill {
				srv.Restart(t)
				return
			}
			deleted := func() int { return n - int(admin.DBSize(ctx).Val()) }
			if tc.fault == redistest.Hold {
				redistest.WaitFor(t, 5*time.Second, "the held batch to be applied", func() bool { return deleted() == done+unknown })
			}
			if d := deleted(); d < done || d > done+unknown {
				t.Fatalf("%d buckets reset on the server; the line says %d, up to %d more", d, done, unknown)
			}
			if r := run(t, srv.URL(), "reset", "--match", "m:*", "--layout", "express", "--capacity", "10", "--rate", "1", "--yes"); r.code != ExitOK || deleted() != n {
				t.Fatalf("re-run: exit %d %q, %d of %d reset", r.code, r.errOut, deleted(), n)
			}
		})
	}
}

// loadReset loads the reset script, so that the faulted request is the reset itself and not
// an EVALSHA answered NOSCRIPT.
func loadReset(t *testing.T, c *redis.Client) {
	t.Helper()
	if err := c.ScriptLoad(context.Background(), scripts.Reset()).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestLostConnectionNamed: a connection lost during a read (inspect) or a decision
// (consume) names the server and the cause, never a bare "EOF"; exit 3.
func TestLostConnectionNamed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	if r := run(t, srv.URL(), "consume", "lost:key", "--capacity", "5", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("consume: exit %d %q", r.code, r.errOut)
	}
	for _, args := range [][]string{{"inspect", "lost:key"}, {"consume", "lost:key"}} {
		p := redistest.StartProxy(t, srv.Addr())
		p.Arm(redistest.Rule{Match: "lost:key", Fault: redistest.Drop})
		r := run(t, p.URL(), args...)
		if !p.Fired() || r.code != ExitUnreachable || !strings.Contains(r.errOut, p.Addr()) || !strings.Contains(r.errOut, "was lost before the reply (EOF: closed by the server") {
			t.Fatalf("%v: fired %v, exit %d %q", args, p.Fired(), r.code, r.errOut)
		}
		oneLine(t, r)
	}
}
