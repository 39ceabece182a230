package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/tui"
)

// fillBuckets writes n native buckets key:00000... (holding i%100 of 100 tokens) and a few
// other keys, pipelined. They refill slowly
// (0.001/s), so their order by level is the same at every read, however long a loaded
// machine takes between refreshes.
func fillBuckets(tb testing.TB, c *redis.Client, prefix string, n int) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UnixMicro()
	for start := 0; start < n; start += 1000 {
		pipe := c.Pipeline()
		for i := start; i < min(n, start+1000); i++ {
			pipe.HSet(ctx, fmt.Sprintf("%s%05d", prefix, i), "tokens", strconv.Itoa(i%100), "ts", now,
				"capacity", "100", "rate", "0.001", "allowed", i, "denied", 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		c.Set(ctx, fmt.Sprintf("other:%d", i), "x", 0)
	}
}

// TestTopRefreshCost10k measures one top refresh over 10,000 buckets on a real server and
// checks the count against the server's own command statistics: round trips are the SCAN
// TestTopRefreshWithinBudget: on 10,000 buckets with a budget of 2,000 commands a second,
// each refresh sends at most its budget (the count checked against the server's own
// statistics), keeps a bounded set of rows, and the scan goes on where it stopped until a
// whole pass has covered the keyspace; the emptiest buckets are among the rows by then.
func TestTopRefreshWithinBudget(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	const n = 10000
	fillBuckets(t, c, "tb:", n)
	ctx := context.Background()
	// Three empty buckets far apart in the keyspace.
	for _, k := range []string{"tb:00007", "tb:05003", "tb:09998"} {
		c.HSet(ctx, k, "tokens", "0")
	}
	st := bucket.NewStore(c)
	if _, err := st.Inspect(ctx, []string{"tb:00000"}, nil); err != nil { // loads the read script
		t.Fatal(err)
	}
	src := NewTopSource(st, TopParams{Match: "tb:*", Budget: 2000, Interval: time.Second})
	var snap tui.TopSnapshot
	for i := 0; i < 20; i++ {
		before := redistest.CommandCalls(t, c)
		var err error
		snap, err = src.Fetch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		after := redistest.CommandCalls(t, c)
		served := 0
		for _, name := range []string{"scan", "evalsha_ro", "time", "dbsize"} {
			served += after[name] - before[name]
		}
		if snap.Cost.Commands != served {
			t.Fatalf("refresh %d: counted %d commands, the server ran %d", i, snap.Cost.Commands, served)
		}
		if snap.Cost.Commands > 2000 {
			t.Fatalf("refresh %d: %d commands, over the budget of 2000", i, snap.Cost.Commands)
		}
		if len(snap.States) > 600 {
			t.Fatalf("refresh %d: %d rows kept, want at most 3 × 200", i, len(snap.States))
		}
		for _, s := range snap.States {
			if !strings.HasPrefix(s.Key, "tb:") || !s.Layout.Native {
				t.Fatalf("state %+v", s)
			}
		}
		if strings.Contains(snap.Cost.Detail, "(pass 2)") {
			break
		}
	}
	if !strings.Contains(snap.Cost.Detail, "(pass 2)") {
		t.Fatalf("no whole pass over %d keys in 20 refreshes: %q", n, snap.Cost.Detail)
	}
	kept := map[string]bool{}
	for _, s := range snap.States {
		kept[s.Key] = true
	}
	for _, k := range []string{"tb:00007", "tb:05003", "tb:09998"} {
		if !kept[k] {
			t.Errorf("empty bucket %s is not among the %d rows kept", k, len(snap.States))
		}
	}
}

// BenchmarkTopRefresh10k reports the time and Redis cost of one top refresh of 10,000
// buckets with no budget to speak of: go test ./cmd -run '^$' -bench TopRefresh
func BenchmarkTopRefresh10k(b *testing.B) {
	srv := redistest.Start(b)
	c := srv.Client(b)
	fillBuckets(b, c, "tb:", 10000)
	src := NewTopSource(bucket.NewStore(c), TopParams{Match: "tb:*", Budget: 1 << 30})
	var rt, cmds int
	for b.Loop() {
		snap, err := src.Fetch(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		rt, cmds = snap.Cost.RoundTrips, snap.Cost.Commands
	}
	b.ReportMetric(float64(rt), "roundtrips/op")
	b.ReportMetric(float64(cmds), "commands/op")
}

func TestTopSourceCountsOnlyItsOwnCommands(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	fillBuckets(t, c, "own:", 30)
	st := bucket.NewStore(c)
	src := NewTopSource(st, TopParams{Match: "own:*", PageSize: 10,
		Resolve: func(string) bucket.Target { return bucket.Target{Layout: &bucket.NativeLayout} }})
	if _, err := src.Fetch(context.Background()); err != nil { // loads the read script
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { // other traffic on the same client
		defer close(done)
		for ctx.Err() == nil {
			_, _ = st.Take(ctx, "own:00001", bucket.Spec{}, 0)
		}
	}()
	snap, err := src.Fetch(context.Background())
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	// 30 buckets kept and re-read, then a whole pass over the 30 keys: one read command
	// each time, on top of one command per round trip (the SCANs and each pipeline's TIME);
	// the Takes are not counted.
	if snap.Cost.Commands-snap.Cost.RoundTrips != 2*30 || len(snap.States) != 30 {
		t.Errorf("cost %+v for %d states", snap.Cost, len(snap.States))
	}
}

// TestTopResetRefillsTheBucket: top's r writes a native bucket full (its spec kept) and
// leaves the others as they are.
func TestTopResetRefillsTheBucket(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	fillBuckets(t, c, "rs:", 2)
	src := NewTopSource(bucket.NewStore(c), TopParams{Match: "rs:*", Addr: srv.Addr()})
	snap, err := src.Fetch(context.Background())
	if err != nil || len(snap.States) != 2 {
		t.Fatalf("%v %d", err, len(snap.States))
	}
	if err := src.Reset(context.Background(), snap.States[0]); err != nil {
		t.Fatal(err)
	}
	assertFull(t, c, snap.States[0].Key)
	if got, _ := bucket.NewStore(c).Inspect(context.Background(), []string{snap.States[1].Key}, func(string) bucket.Target { return bucket.Target{} }); len(got) != 1 || got[0].Tokens == 100 {
		t.Errorf("the other bucket changed: %+v", got)
	}
	bad := bucket.State{Key: "rs:list", Problem: "holds a list, not a bucket"}
	if err := src.Reset(context.Background(), bad); err == nil {
		t.Error("reset of a key that is not a bucket succeeded")
	}
	// A server that refuses writes: the message names the key, the server and the fix,
	// without the script's SHA1 and line, as 'bucketctl reset' says it.
	if err := c.ConfigSet(context.Background(), "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	err = src.Reset(context.Background(), snap.States[1])
	want := fmt.Sprintf("reset %q on %s", snap.States[1].Key, srv.Addr())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "min-replicas-to-write") ||
		strings.Contains(err.Error(), "script:") {
		t.Fatalf("reset on a server refusing writes: %v, want %q and the fix", err, want)
	}
}

func TestTopFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"top", "extra"},
		{"top", "--interval", "1ms"},
		{"top", "--page-size", "0"},
		{"top"}, // not a terminal
	} {
		r := run(t, "redis://127.0.0.1:1", args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, ExitUsage, r.errOut)
		}
	}
	if r := run(t, "redis://127.0.0.1:1", "top"); !strings.Contains(r.errOut, "needs a terminal") {
		t.Errorf("top piped: %q", r.errOut)
	}
	var got *TopOptions
	cmd := NewCmdTop(newTestFactory(t, &IOStreams{}, VersionInfo{}), func(o *TopOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--match", "rate:*", "--interval", "2s", "--page-size", "200"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Match != "rate:*" || got.Interval != 2*time.Second || got.PageSize != 200 {
		t.Errorf("options %+v", got)
	}
}
