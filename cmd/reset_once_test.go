package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestResetMatchEachKeyOnce: SCAN returns a key twice when the keyspace's table shrinks
// between its pages (here 60,000 other keys are deleted once the first batch is sent, and
// the table shrinks). reset --match --tokens still writes, counts and prints each key
// once: the run keeps the keys it met.
func TestResetMatchEachKeyOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	const n, pad = 3000, 60000
	if err := admin.Do(ctx, "DEBUG", "POPULATE", pad, "pad").Err(); err != nil {
		t.Fatal(err)
	}
	pipe := admin.Pipeline()
	for i := range n {
		pipe.HSet(ctx, fmt.Sprintf("m:%d", i), "tokens", "2", "last_refill", fmt.Sprint(time.Now().Unix()))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	loadReset(t, admin)
	p := redistest.StartProxy(t, srv.Addr())
	shrunk := make(chan error, 1)
	p.Arm(redistest.Rule{Match: resetSHA, Before: func() {
		pipe := admin.Pipeline()
		for i := range pad {
			pipe.Unlink(ctx, fmt.Sprintf("pad:%d", i))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			shrunk <- err
			return
		}
		// serverCron shrinks the table within a few ticks, then rehashes it.
		if redistest.Poll(10*time.Second, func() bool {
			st := admin.Do(ctx, "DEBUG", "HTSTATS", "0").String()
			return !strings.Contains(st, "rehashing") && !strings.Contains(st, "table size: 131072") && !strings.Contains(st, "table size: 65536")
		}) {
			shrunk <- nil
			return
		}
		shrunk <- fmt.Errorf("the table did not shrink: %s", admin.Do(ctx, "DEBUG", "HTSTATS", "0").String())
	}})
	// The deletes run while the first batch waits: a --timeout long enough for them.
	r := run(t, p.URL(), "--timeout", "60s", "reset", "--match", "m:*", "--layout", "express", "--capacity", "10", "--rate", "1", "--tokens", "7", "--yes", "-o", "jsonl")
	if err := <-shrunk; err != nil {
		t.Fatal(err)
	}
	if r.code != ExitOK {
		t.Fatalf("exit %d %q", r.code, r.errOut)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		seen[l[:strings.Index(l, `",`)]]++
	}
	for k, c := range seen {
		if c > 1 {
			t.Fatalf("%s printed %d times", k, c)
		}
	}
	if len(seen) != n || !strings.Contains(r.errOut, fmt.Sprintf("reset %s bucket(s)", fmtCount(n))) {
		t.Fatalf("%d keys printed, want %d; stderr %q", len(seen), n, r.errOut)
	}
}
