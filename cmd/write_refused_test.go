package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// checkWriteLine checks the one line of a write the server refused: exit 1, the key (or
// what was done), the server, the reply without the script's SHA1 and line, the fix.
func checkWriteLine(t *testing.T, name string, r result, want ...string) {
	t.Helper()
	if r.code != ExitError {
		t.Errorf("%s: exit %d, want 1: %q", name, r.code, r.errOut)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(r.errOut, "\n"), "\n") {
		if strings.HasPrefix(l, "bucketctl: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Errorf("%s: want one 'bucketctl: ' line, got %q", name, r.errOut)
		return
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("%s: %q lacks %q", name, lines[0], w)
		}
	}
	for _, noise := range []string{"script:", "@user_script", "; NOREPLICAS"} {
		if strings.Contains(lines[0], noise) {
			t.Errorf("%s: %q holds %q", name, lines[0], noise)
		}
	}
}

// TestWritesRefusedNoReplicas: a server with min-replicas-to-write and no replica refuses
// every write. reset (by key, --tokens, --match) and consume say which key (or how many were
// reset before --match stopped), which server, the reply without noise and the fix, once.
func TestWritesRefusedNoReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		run(t, url, "consume", fmt.Sprintf("rate:user:%d", i), "--capacity", "10", "--rate", "1")
	}
	const bulk = 3000
	pipe := c.Pipeline()
	for i := 0; i < bulk; i++ {
		pipe.HSet(ctx, fmt.Sprintf("bulk:%d", i), "tokens", "9", "ts", "1700000000000000", "capacity", "10", "rate", "1")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before := dumpKey(t, c, "rate:user:1")
	if err := c.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	reply, hint := "NOREPLICAS Not enough good replicas to write", "the server refuses writes until a replica is connected (min-replicas-to-write)"
	checkWriteLine(t, "reset KEY", run(t, url, "reset", "rate:user:1", "--yes"),
		`bucketctl: reset "rate:user:1" on `+srv.Addr()+": "+reply+": "+hint)
	checkWriteLine(t, "reset KEY --tokens", run(t, url, "reset", "rate:user:1", "--tokens", "3", "--yes"),
		`reset "rate:user:1" on `+srv.Addr(), reply, hint)
	checkWriteLine(t, "reset KEY KEY", run(t, url, "reset", "rate:user:1", "rate:user:2", "--yes"),
		"reset of 2 buckets on "+srv.Addr(), reply+` (2 keys, the first "rate:user:1"): `+hint)
	checkWriteLine(t, "consume", run(t, url, "consume", "rate:user:1"),
		`bucketctl: consume "rate:user:1" on `+srv.Addr()+": "+reply+": "+hint)
	r := run(t, url, "reset", "--match", "rate:user:*", "--yes")
	// (SCAN may spread the three over pages among the bulk keys: --match stops after the
	// first refused batch, whatever it holds.)
	checkWriteLine(t, "reset --match", r,
		`bucketctl: reset --match "rate:user:*" on `+srv.Addr()+" stopped after 0 bucket(s) were reset: "+reply, hint)
	if n := strings.Count(r.errOut, "NOREPLICAS"); n != 1 {
		t.Errorf("reset --match: the reply %d times: %q", n, r.errOut)
	}
	// A bulk reset stops at the first refused batch instead of sending every other batch
	// to a server that refuses them all.
	r = run(t, url, "reset", "--match", "bulk:*", "--yes")
	checkWriteLine(t, "reset --match bulk:*", r, "stopped after 0 bucket(s) were reset: "+reply+" (", hint)
	tried, _, _ := strings.Cut(r.errOut[strings.Index(r.errOut, reply+" (")+len(reply)+2:], " keys")
	if n, err := strconv.Atoi(strings.ReplaceAll(tried, ",", "")); err != nil || n >= bulk {
		t.Errorf("reset --match bulk:* tried %q of %d buckets (%v): %q", tried, bulk, err, r.errOut)
	}
	if got := dumpKey(t, c, "rate:user:1"); got != before {
		t.Error("a refused write changed rate:user:1")
	}
	if n := c.Exists(ctx, "rate:user:1", "rate:user:2", "rate:user:3").Val(); n != 3 {
		t.Errorf("%d of 3 buckets left after refused resets", n)
	}
}

// TestWritesRefusedReplicaAndOOM: a replica answers READONLY, a full server OOM; each write
// says which key, which server and what to do.
func TestWritesRefusedReplicaAndOOM(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	mc := master.Client(t)
	run(t, master.URL(), "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	replica := redistest.Start(t, redistest.WithReplicaOf(master))
	redistest.WaitFor(t, 10e9, "rate:user:1 on the replica", func() bool {
		return replica.Client(t).Exists(context.Background(), "rate:user:1").Val() == 1
	})
	for _, args := range [][]string{{"reset", "rate:user:1", "--yes"}, {"consume", "rate:user:1"}, {"reset", "--match", "rate:*", "--yes"}} {
		checkWriteLine(t, "replica "+strings.Join(args, " "), run(t, replica.URL(), args...),
			" on "+replica.Addr(), "READONLY You can't write against a read only replica", "this is a replica: point --url (or the context) at the master")
	}
	if err := mc.ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mc.ConfigSet(context.Background(), "maxmemory", "0") })
	for _, args := range [][]string{{"reset", "rate:user:1", "--tokens", "2", "--yes"}, {"consume", "rate:user:1"}} {
		checkWriteLine(t, "OOM "+strings.Join(args, " "), run(t, master.URL(), args...),
			`"rate:user:1" on `+master.Addr(), "OOM command not allowed when used memory > 'maxmemory'", "raise maxmemory")
	}
}
