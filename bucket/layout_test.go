package bucket_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

func decide(t *testing.T, app apptest.App, c *redis.Client, key string, capacity, rate float64, now time.Time) bool {
	t.Helper()
	ok, err := app.Decide(context.Background(), c, key, capacity, rate, now)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func serverNow(t *testing.T, c *redis.Client) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// TestForeignLayouts: buckets written by each application's own algorithm are inspected
// with the right level (refilled to now, within 1%), detected without a rule, and after a
// reset the application's next decisions see a full bucket, or exactly N tokens.
func TestForeignLayouts(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := context.Background()
	const capacity, rate = 20.0, 2.0
	sp := bucket.Spec{Capacity: capacity, Rate: rate}
	for _, app := range apptest.Apps {
		t.Run(app.Layout, func(t *testing.T) {
			key := app.Key("app:" + app.Layout)
			layout := bucket.Presets[app.Layout]
			// 12 decisions now (from full): 8 tokens left at the app's time.
			start := serverNow(t, c)
			if app.ClientClock {
				start = start.Add(-3 * time.Second) // the app's clock: 3 s ago
			}
			for i := 0; i < 12; i++ {
				if !decide(t, app, c, key, capacity, rate, start) {
					t.Fatalf("decision %d denied", i+1)
				}
			}
			// Expected level from the application's own stored time, refilled to the server's now.
			states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &layout, Spec: sp} })
			if err != nil {
				t.Fatal(err)
			}
			s := states[0]
			if s.Problem != "" || !s.Exists || s.Layout.Name != app.Layout {
				t.Fatalf("state %+v", s)
			}
			// The application refills at its own time resolution (whole seconds of Redis TIME
			// for Spring and Spring Cloud Gateway), so its stored level is 8 plus whole
			// refills, and so is what it sees next.
			stored := s.Stored.Tokens
			if extra := (stored - 8) / rate; stored < 8 || (app.ClientClock && stored != 8) || extra != math.Trunc(extra) {
				t.Fatalf("stored tokens %v, want 8 (server clock: 8 + whole seconds × rate)", stored)
			}
			elapsed := float64(layout.Quantize(s.Now)-s.Stored.TS) / 1e6
			want := math.Min(capacity, stored+elapsed*rate)
			if app.Layout == "go-redisstore" && elapsed < capacity/rate {
				want = stored // full again only at each whole interval (capacity/rate, 10 s) since its start
			}
			if math.Abs(s.Tokens-want) > 0.01*want {
				t.Fatalf("tokens %v (stored %v), want %v (+ %.3fs × %v)", s.Tokens, stored, want, elapsed, rate)
			}
			if app.ClientClock && (elapsed < 2.9 || elapsed > 10) {
				t.Fatalf("stored time read as %.3fs ago, want about 3s: wrong time unit", elapsed)
			}

			// Detection without a rule names the layout.
			det, err := st.Inspect(ctx, []string{key}, nil)
			if err != nil || det[0].Layout.Name != app.Layout || !det[0].Detected {
				t.Fatalf("detected %+v %v", det[0], err)
			}

			// Reset to exactly 5 tokens, in the layout's own units: the app's next decisions
			// see 5 (a tiny rate keeps refill out of the count).
			if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Tokens: 5}); err != nil {
				t.Fatal(err)
			}
			got := 0
			now := serverNow(t, c)
			for i := 0; i < 8; i++ {
				if decide(t, app, c, key, capacity, 0.0001, now) {
					got++
				}
			}
			if got != 5 {
				t.Fatalf("after reset to 5 the app allowed %d", got)
			}

			// Reset (delete): the app sees a full bucket: capacity decisions allowed.
			if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Delete: true}); err != nil {
				t.Fatal(err)
			}
			for _, k := range layout.Keys(key) {
				if c.Exists(ctx, k).Val() != 0 {
					t.Fatalf("%s left after reset", k)
				}
			}
			got = 0
			now = serverNow(t, c)
			for i := 0; i < int(capacity)+2; i++ {
				if decide(t, app, c, key, capacity, 0.0001, now) {
					got++
				}
			}
			if got != int(capacity) {
				t.Fatalf("after reset the app allowed %d, want a full bucket's %v", got, capacity)
			}
		})
	}
}

// TestNotABucketNeverChanged: keys of other types, or hashes of no known layout, are
// reported as such and refused by reset.
func TestNotABucketNeverChanged(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := context.Background()
	c.RPush(ctx, "alist", "a", "b")
	c.HSet(ctx, "profile", "name", "ann", "age", "40")
	c.Set(ctx, "plain", "hello", 0)
	states, err := st.Inspect(ctx, []string{"alist", "profile", "plain"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Problem == "" {
			t.Errorf("%s: no problem reported: %+v", s.Key, s)
		}
	}
	before := map[string]string{}
	for _, k := range []string{"alist", "profile", "plain"} {
		before[k] = dump(t, c, k)
	}
	for _, k := range []string{"alist", "profile", "plain"} {
		for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 3}} {
			layout := bucket.NativeLayout
			if k == "plain" {
				layout = bucket.Presets["express"]
			}
			if k == "alist" && to.Delete {
				layout = bucket.Presets["webman"]
			}
			for _, sp := range []bucket.Spec{{}, {Capacity: 10, Rate: 1}} {
				if _, err := st.Reset(ctx, k, layout, sp, to); err == nil {
					t.Errorf("reset of %s (%s, %+v, spec %+v) succeeded", k, layout.Name, to, sp)
				}
			}
		}
	}
	for k, v := range before {
		if dump(t, c, k) != v {
			t.Errorf("%s changed", k)
		}
	}
}

func seedBuckets(t testing.TB, c *redis.Client, n int) {
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < n; i++ {
		pipe.HSet(ctx, fmt.Sprintf("many:%05d", i), "tokens", "3", "last_refill", "1700000000.5")
		if i%1000 == 999 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// inspectAll is what `inspect --match` and `list` do: SCAN pages, one pipelined read each.
func inspectAll(ctx context.Context, st *bucket.Store, pattern string) (int, error) {
	n := 0
	_, err := scan.States(ctx, st, scan.Options{Match: pattern}, func(states []bucket.State) error {
		n += len(states)
		return nil
	})
	return n, err
}

// TestInspectManyRoundTrips: 10,000 buckets matched by a pattern are read in SCAN pages plus
// one pipelined round trip per page.
func TestInspectManyRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedBuckets(t, c, 10000)
	st := bucket.NewStore(c)
	// The first read of a server loads the read script (NOSCRIPT: that page is read again).
	if _, err := st.Inspect(context.Background(), []string{"many:00000"}, nil); err != nil {
		t.Fatal(err)
	}
	rt := &redistest.Counter{}
	c.AddHook(rt)
	n, err := inspectAll(context.Background(), st, "many:*")
	if err != nil || n != 10000 {
		t.Fatalf("inspected %d: %v", n, err)
	}
	// SCAN with COUNT 500 over 10,000 keys: about 20 pages (Redis may return a few more),
	// each one SCAN and one pipeline.
	if calls := rt.RoundTrips.Load(); calls < 40 || calls > 2*30 {
		t.Fatalf("%d round trips for 10,000 buckets, want 2 per SCAN page (about 40)", calls)
	}
	// One read command per key, plus SCAN and TIME per page.
	if cmds := rt.Commands.Load(); cmds < 10000 || cmds > 10000+2*30 {
		t.Fatalf("%d commands for 10,000 buckets, want one per bucket plus two per page", cmds)
	}
}

// BenchmarkInspectMatch10k: SCAN + pipelined inspect of 10,000 buckets; reports round trips
// and commands per full pass.
func BenchmarkInspectMatch10k(b *testing.B) {
	srv := redistest.Start(b)
	c := srv.Client(b)
	seedBuckets(b, c, 10000)
	rt := &redistest.Counter{}
	c.AddHook(rt)
	st := bucket.NewStore(c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := inspectAll(context.Background(), st, "many:*"); err != nil || n != 10000 {
			b.Fatalf("%d %v", n, err)
		}
	}
	b.ReportMetric(float64(rt.RoundTrips.Load())/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(rt.Commands.Load())/float64(b.N), "commands/op")
}
