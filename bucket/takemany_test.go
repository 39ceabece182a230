package bucket_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// counters reads a native bucket's decision counters.
func counters(t *testing.T, c *redis.Client, key string) (allowed, denied int64) {
	t.Helper()
	n := nativeOf(t, c, key)
	return int64(n.Allowed), int64(n.Denied)
}

// TakeMany applies its decisions in order, each as Take would: the model replays them.
func TestTakeManyMatchesTheModel(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	clock := newClock(1_700_000_000_000_000)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now))
	sp := spec(3, 1)
	keys := []string{"a", "a", "b", "a", "a", "b"}
	levels := map[string]bucket.Level{}
	exists := map[string]bool{}
	out := make([]bucket.Result, len(keys))
	for round := range 3 {
		if err := st.TakeMany(ctxT(t), keys, sp, 1, out); err != nil {
			t.Fatal(err)
		}
		now := clock.now().UnixMicro()
		for i, k := range keys {
			var want bucket.Result
			levels[k], want = sp.Take(levels[k], exists[k], now, 1)
			exists[k] = true
			if out[i] != want {
				t.Fatalf("round %d, decision %d (%s): got %+v, the model says %+v", round, i, k, out[i], want)
			}
		}
		clock.add(1500 * time.Millisecond)
	}
	if a, d := counters(t, c, "a"); a+d != 12 {
		t.Fatalf("key a counted %d allowed + %d denied, want 12 decisions", a, d)
	}
}

// NOSCRIPT proves nothing ran: TakeMany loads the script and re-sends, and every decision
// is applied exactly once.
func TestTakeManyReloadsTheScriptOnNoScript(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	if err := c.ScriptFlush(ctxT(t)).Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{"k", "k", "k", "k"}
	out := make([]bucket.Result, len(keys))
	if err := st.TakeMany(ctxT(t), keys, spec(100, 1), 1, out); err != nil {
		t.Fatalf("TakeMany after SCRIPT FLUSH: %v", err)
	}
	for i, r := range out {
		if !r.Allowed || r.Remaining < 95 || r.Remaining > 100-float64(i+1)+0.01 {
			t.Fatalf("decision %d: %+v", i, r)
		}
	}
	if a, d := counters(t, c, "k"); a != 4 || d != 0 {
		t.Fatalf("counters allowed=%d denied=%d, want 4 and 0: each decision applied once", a, d)
	}
	ok, err := c.ScriptExists(ctxT(t), st.SHA()).Result()
	if err != nil || !ok[0] {
		t.Fatalf("script not loaded after NOSCRIPT: %v %v", ok, err)
	}
}

// A key that is not a bucket fails its own decision; the others are made.
func TestTakeManyReportsFailuresPerKey(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	if err := c.Set(ctxT(t), "str", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{"ok1", "str", "ok2"}
	out := make([]bucket.Result, len(keys))
	err := st.TakeMany(ctxT(t), keys, spec(5, 1), 1, out)
	var be *bucket.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("want a *BatchError, got %T %v", err, err)
	}
	if !errors.Is(be.Errs[1], bucket.ErrWrongType) || be.Errs[0] != nil || be.Errs[2] != nil {
		t.Fatalf("per-key errors %v, want only keys[1] to fail with ErrWrongType", be.Errs)
	}
	if !errors.Is(err, bucket.ErrWrongType) {
		t.Fatalf("errors.Is through the batch: %v", err)
	}
	if !out[0].Allowed || !out[2].Allowed || out[0].Remaining != 4 {
		t.Fatalf("the good keys were not decided: %+v", out)
	}
	if err := st.TakeMany(ctxT(t), keys, spec(5, 1), 1, out[:1]); !errors.Is(err, bucket.ErrInvalid) {
		t.Fatalf("a short out slice: %v, want ErrInvalid", err)
	}
}

// After a timeout TakeMany does not re-send: the server runs each command it received
// once, late, and no more.
func TestTakeManyNeverResendsAfterATimeout(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	o := srv.Options()
	o.ReadTimeout, o.MaxRetries = 150*time.Millisecond, -1
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	st := bucket.NewStore(c)
	if _, _, err := st.LoadScript(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	awake := redistest.Stall(t, srv.Addr(), "0.6")
	keys := []string{"k", "k", "k"}
	out := make([]bucket.Result, len(keys))
	err := st.TakeMany(ctxT(t), keys, spec(10, 1), 1, out)
	if err == nil {
		t.Fatal("TakeMany against a sleeping server returned no error")
	}
	awake()
	// The server runs the commands it read once it wakes, maybe after answering others:
	// wait for them, then a round trip of the same client (a second copy would have been
	// written before it), then make sure no second copy ran.
	redistest.WaitFor(t, 2*time.Second, "the three decisions read before the stall to run", func() bool {
		a, _ := counters(t, admin, "k")
		return a >= 3
	})
	if err := c.Ping(ctxT(t)).Err(); err != nil {
		t.Fatal(err)
	}
	if a, d := counters(t, admin, "k"); a != 3 || d != 0 {
		t.Fatalf("counters allowed=%d denied=%d after the timeout, want 3 and 0: sent once, run once", a, d)
	}
}

// The hot path's allocations, one goroutine: one decision with Take against sixteen with
// TakeMany.
//
//	go test -run '^$' -bench 'TakeMany' -benchmem ./bucket/
func BenchmarkTakeMany(b *testing.B) {
	srv := redistest.Start(b)
	st := bucket.NewStore(srv.Client(b))
	if _, _, err := st.LoadScript(context.Background()); err != nil {
		b.Fatal(err)
	}
	sp := spec(1e15, 1e15)
	b.Run("Take", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := st.Take(context.Background(), "bench", sp, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("TakeMany16", func(b *testing.B) {
		keys := make([]string, 16)
		for i := range keys {
			keys[i] = "bench"
		}
		out := make([]bucket.Result, len(keys))
		b.ReportAllocs()
		for range b.N {
			if err := st.TakeMany(context.Background(), keys, sp, 1, out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/decision")
	})
}
