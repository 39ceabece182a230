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
)

// fillBuckets writes n native buckets key:00000... and a few other keys, pipelined.
func fillBuckets(tb testing.TB, c *redis.Client, prefix string, n int) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UnixMicro()
	for start := 0; start < n; start += 1000 {
		pipe := c.Pipeline()
		for i := start; i < min(n, start+1000); i++ {
			pipe.HSet(ctx, fmt.Sprintf("%s%05d", prefix, i), "tokens", strconv.Itoa(i%100), "ts", now,
				"capacity", "100", "rate", "10", "allowed", i, "denied", 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		c.Set(ctx, fmt.Sprintf("other:%d", i), "x", 0)
	}
}

// commandCalls reads INFO commandstats: calls per command.
func commandCalls(tb testing.TB, c *redis.Client) map[string]int {
	tb.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	calls := map[string]int{}
	for _, l := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				calls[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.Atoi(v)
			}
		}
	}
	return calls
}

// TestTopRefreshCost10k measures one top refresh over 10,000 buckets on a real server and
// checks the count against the server's own command statistics: round trips are the SCAN
// pages plus one pipeline per page of buckets, and nothing else.
func TestTopRefreshCost10k(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	const n, page = 10000, 1000
	fillBuckets(t, c, "tb:", n)
	src := NewTopSource(bucket.NewStore(c), TopParams{Match: "tb:*", PageSize: page})
	ctx := context.Background()
	if _, err := src.Fetch(ctx); err != nil { // warm the connection pool
		t.Fatal(err)
	}
	before := commandCalls(t, c)
	snap, err := src.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := commandCalls(t, c)

	if len(snap.States) != n {
		t.Fatalf("%d states, want %d", len(snap.States), n)
	}
	for _, s := range snap.States {
		if !strings.HasPrefix(s.Key, "tb:") || !s.Layout.Native || s.Spec.Capacity != 100 {
			t.Fatalf("state %+v", s)
		}
	}
	served := 0
	for name, calls := range after {
		if name != "info" {
			served += calls - before[name]
		}
	}
	scans := after["scan"] - before["scan"]
	pipelines := (n + page - 1) / page
	if snap.Cost.Commands != served {
		t.Errorf("counted %d commands, the server ran %d", snap.Cost.Commands, served)
	}
	// Each key: TYPE, PTTL, HGETALL and two GETs (its layout is detected); TIME per pipeline.
	if want := scans + pipelines + 5*n; snap.Cost.Commands != want {
		t.Errorf("%d commands, want %d SCANs + %d TIMEs + 5 per bucket = %d", snap.Cost.Commands, scans, pipelines, want)
	}
	if want := scans + pipelines; snap.Cost.RoundTrips != want {
		t.Errorf("%d round trips, want %d SCAN pages + %d read pipelines = %d", snap.Cost.RoundTrips, scans, pipelines, want)
	}
	if scans < n/page || scans > 2*n/page+1 {
		t.Errorf("%d SCAN pages for %d keys at COUNT %d", scans, n+50, page)
	}
	if !strings.Contains(snap.Cost.Detail, fmt.Sprintf("%d SCAN pages, %d read pipelines", scans, pipelines)) {
		t.Errorf("detail %q", snap.Cost.Detail)
	}
	t.Logf("one refresh of %d buckets: %d round trips, %d commands, %s", n, snap.Cost.RoundTrips, snap.Cost.Commands, snap.Took)
}

// BenchmarkTopRefresh10k reports the time and Redis cost of one top refresh of 10,000
// buckets: go test ./cmd -run '^$' -bench TopRefresh
func BenchmarkTopRefresh10k(b *testing.B) {
	srv := redistest.Start(b)
	c := srv.Client(b)
	fillBuckets(b, c, "tb:", 10000)
	src := NewTopSource(bucket.NewStore(c), TopParams{Match: "tb:*"})
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
	srv := redistest.Start(t)
	c := srv.Client(t)
	fillBuckets(t, c, "own:", 30)
	st := bucket.NewStore(c)
	src := NewTopSource(st, TopParams{Match: "own:*", PageSize: 10,
		Resolve: func(string) bucket.Target { return bucket.Target{Layout: &bucket.NativeLayout} }})
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
	// 30 buckets of a known hash layout: TYPE, PTTL and HGETALL each, on top of one command
	// per round trip (the SCANs and each pipeline's TIME); the Takes are not counted.
	if snap.Cost.Commands-snap.Cost.RoundTrips != 3*30 || len(snap.States) != 30 {
		t.Errorf("cost %+v for %d states", snap.Cost, len(snap.States))
	}
}

func TestTopResetDeletesTheBucket(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	fillBuckets(t, c, "rs:", 2)
	src := NewTopSource(bucket.NewStore(c), TopParams{Match: "rs:*"})
	snap, err := src.Fetch(context.Background())
	if err != nil || len(snap.States) != 2 {
		t.Fatalf("%v %d", err, len(snap.States))
	}
	if err := src.Reset(context.Background(), snap.States[0]); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(context.Background(), snap.States[0].Key, snap.States[1].Key).Val(); n != 1 {
		t.Errorf("%d of the two buckets exist after resetting one, want 1", n)
	}
	bad := bucket.State{Key: "rs:list", Problem: "holds a list, not a bucket"}
	if err := src.Reset(context.Background(), bad); err == nil {
		t.Error("reset of a key that is not a bucket succeeded")
	}
}

func TestTopFlags(t *testing.T) {
	isolate(t)
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
	cmd := NewCmdTop(NewFactory(&IOStreams{}, VersionInfo{}), func(o *TopOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--match", "rate:*", "--interval", "2s", "--page-size", "200"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Match != "rate:*" || got.Interval != 2*time.Second || got.PageSize != 200 {
		t.Errorf("options %+v", got)
	}
}
