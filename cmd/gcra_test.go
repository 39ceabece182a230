package cmd

// The GCRA libraries themselves are the oracles: buckets drained by go-redis/redis_rate and
// throttled/throttled are read by inspect and list, and reset by reset, in-process against a
// real redis-server.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// gcraLib is one bucket of one library, as the application drives it.
type gcraLib struct {
	name     string
	key      string // the Redis key
	capacity float64
	rate     float64
	// take asks the library for cost tokens and returns (allowed, the library's exact level
	// before the request, from its ResetAfter: capacity − ResetAfter × rate).
	take func(cost int) (bool, time.Duration)
	// flagsExtra are more flags for commands on the key (a declared --layout).
	flagsExtra []string
}

func (g gcraLib) level(resetAfter time.Duration) float64 {
	return g.capacity - resetAfter.Seconds()*g.rate
}

// flags are the spec flags of the bucket.
func (g gcraLib) flags() []string {
	return append([]string{"--capacity", fmt.Sprint(g.capacity), "--rate", fmt.Sprint(g.rate)}, g.flagsExtra...)
}

func redisRateLib(t *testing.T, rdb *redis.Client, name string, rate, burst int, period time.Duration) gcraLib {
	lim := redis_rate.NewLimiter(rdb)
	limit := redis_rate.Limit{Rate: rate, Burst: burst, Period: period}
	return gcraLib{name: "redis_rate", key: "rate:" + name, capacity: float64(burst), rate: float64(rate) / period.Seconds(),
		take: func(cost int) (bool, time.Duration) {
			r, err := lim.AllowN(context.Background(), name, limit, cost)
			if err != nil {
				t.Fatalf("redis_rate: %v", err)
			}
			return r.Allowed > 0 || (cost == 0 && r.RetryAfter == -1), r.ResetAfter
		}}
}

func throttledLib(t *testing.T, rdb *redis.Client, name string, count, maxBurst int, period time.Duration) gcraLib {
	st, err := goredisstore.NewCtx(rdb, "throttle:")
	if err != nil {
		t.Fatal(err)
	}
	lim, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{MaxRate: throttled.PerDuration(count, period), MaxBurst: maxBurst})
	if err != nil {
		t.Fatal(err)
	}
	return gcraLib{name: "throttled", key: "throttle:" + name, capacity: float64(maxBurst + 1), rate: float64(count) / period.Seconds(),
		take: func(cost int) (bool, time.Duration) {
			limited, r, err := lim.RateLimitCtx(context.Background(), name, cost)
			if err != nil {
				t.Fatalf("throttled: %v", err)
			}
			return !limited, r.ResetAfter
		}}
}

func inspectJSON(t *testing.T, url string, args ...string) []output.StateView {
	t.Helper()
	r := run(t, url, append([]string{"inspect", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("inspect %v: exit %d: %s", args, r.code, r.errOut)
	}
	var views []output.StateView
	if strings.HasPrefix(strings.TrimSpace(r.out), "{") {
		views = make([]output.StateView, 1)
		if err := json.Unmarshal([]byte(r.out), &views[0]); err != nil {
			t.Fatalf("inspect output %q: %v", r.out, err)
		}
		return views
	}
	if err := json.Unmarshal([]byte(r.out), &views); err != nil {
		t.Fatalf("inspect output %q: %v", r.out, err)
	}
	return views
}

// TestGCRAReadBetweenLibraryAnswers: a bucket drained by each library is detected without
// --layout, and the level inspect and list show lies between the library's own levels just
// before and just after the read.
func TestGCRAReadBetweenLibraryAnswers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	libs := []gcraLib{
		redisRateLib(t, rdb, "user:1", 5, 10, time.Second),
		throttledLib(t, rdb, "user:2", 5, 9, time.Second),
	}
	for _, g := range libs {
		for i := 0; i < 7; i++ {
			if ok, _ := g.take(1); !ok {
				t.Fatalf("%s: take %d denied while draining", g.name, i+1)
			}
		}
		for _, cmdName := range []string{"inspect", "list"} {
			_, before := g.take(0)
			var views []output.StateView
			if cmdName == "inspect" {
				views = inspectJSON(t, srv.URL(), append([]string{g.key}, g.flags()...)...)
			} else {
				r := run(t, srv.URL(), append([]string{"list", "--match", g.key, "-o", "json"}, g.flags()...)...)
				if r.code != 0 {
					t.Fatalf("list: exit %d: %s", r.code, r.errOut)
				}
				if err := json.Unmarshal([]byte(r.out), &views); err != nil {
					t.Fatalf("list output %q: %v", r.out, err)
				}
			}
			_, after := g.take(0)
			if len(views) != 1 || views[0].Tokens == nil {
				t.Fatalf("%s %s: want one bucket with tokens, got %+v", g.name, cmdName, views)
			}
			v := views[0]
			want := map[string]string{"redis_rate": "redis-rate", "throttled": "throttled"}[g.name]
			if v.Layout != want || !v.LayoutDetected {
				t.Fatalf("%s %s: layout %q detected %v, want %q detected", g.name, cmdName, v.Layout, v.LayoutDetected, want)
			}
			lo, hi := g.level(before), g.level(after)
			// JSON writes tokens to 3 decimals: the bounds widen by half of that.
			if *v.Tokens < lo-5e-4-1e-9 || *v.Tokens > hi+5e-4+1e-9 {
				t.Fatalf("%s %s: tokens %v not between the library's %v and %v", g.name, cmdName, *v.Tokens, lo, hi)
			}
			if v.AgeMS < 0 || v.AheadMS != 0 {
				t.Fatalf("%s %s: age %v ms, ahead %v ms: want age >= 0 and nothing ahead", g.name, cmdName, v.AgeMS, v.AheadMS)
			}
		}
	}
}

// TestGCRAResetTokensFiveThenLibraryTakesFive: reset --tokens 5 writes the TAT the library
// reads as 5 tokens: it then allows exactly 5 requests; a plain delete refills.
func TestGCRAResetTokensFiveThenLibraryTakesFive(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	libs := []gcraLib{
		redisRateLib(t, rdb, "api:1", 6, 10, time.Minute),
		throttledLib(t, rdb, "api:2", 6, 9, time.Minute),
	}
	for _, g := range libs {
		g.take(3) // the key exists, with 7 left
		// A bare number is a bucket only where its layout is declared: without --layout the
		// reset is refused (exit 2, one line saying how to declare it) and nothing changes.
		before := dumpKey(t, rdb, g.key)
		layout := map[string]string{"redis_rate": "redis-rate", "throttled": "throttled"}[g.name]
		for _, args := range [][]string{{"reset", g.key, "--tokens", "5", "--yes"}, {"reset", g.key, "--yes"}} {
			r := run(t, srv.URL(), append(args, g.flags()...)...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, "--layout "+layout) || strings.Count(r.errOut, "\n") != 1 {
				t.Fatalf("%s: %v without a declared layout: exit %d: %q", g.name, args, r.code, r.errOut)
			}
		}
		if dumpKey(t, rdb, g.key) != before {
			t.Fatalf("%s: an undeclared reset changed the library's key", g.name)
		}
		g.flagsExtra = []string{"--layout", layout}
		r := run(t, srv.URL(), append([]string{"reset", g.key, "--tokens", "5", "--yes"}, g.flags()...)...)
		if r.code != 0 {
			t.Fatalf("%s: reset --tokens 5: exit %d: %s", g.name, r.code, r.errOut)
		}
		n := 0
		for ok, _ := g.take(1); ok; ok, _ = g.take(1) {
			n++
			if n > 10 {
				break
			}
		}
		if n != 5 {
			t.Fatalf("%s: after reset --tokens 5 the library allowed %d", g.name, n)
		}
		if r := run(t, srv.URL(), append([]string{"reset", g.key, "--yes"}, g.flags()...)...); r.code != 0 {
			t.Fatalf("%s: reset: exit %d: %s", g.name, r.code, r.errOut)
		}
		if rdb.Exists(context.Background(), g.key).Val() != 0 {
			t.Fatalf("%s: reset left the key", g.name)
		}
	}
}

// TestGCRACounterIsNeverABucket: an application's plain numbers (counters, timestamps of
// either library's magnitude without its TTL) are not detected as GCRA buckets and are left
// byte for byte by reset --match '*'; --layout does not make them buckets either (both
// libraries always set a TTL tied to the TAT).
func TestGCRACounterIsNeverABucket(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	now := time.Now()
	plain := map[string]string{
		"hits:today":       "12345",
		"rate:lookalike":   "300000000.5",                             // redis_rate's magnitude, no TTL
		"throttle:counter": fmt.Sprint(now.Add(time.Hour).UnixNano()), // throttled's, TTL far off
		"seen:at":          fmt.Sprint(now.UnixNano()),
	}
	for k, v := range plain {
		if err := rdb.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Expire(ctx, "throttle:counter", 10*time.Second)
	dumps := map[string]string{}
	for k := range plain {
		dumps[k] = dumpKey(t, rdb, k)
	}
	views := inspectJSON(t, srv.URL(), "--match", "*", "--all")
	if len(views) != len(plain) {
		t.Fatalf("inspect --all: want %d keys, got %+v", len(plain), views)
	}
	for _, v := range views {
		if !strings.HasPrefix(v.Problem, "not a bucket") {
			t.Fatalf("%s read as a bucket: %+v", v.Key, v)
		}
	}
	r := run(t, srv.URL(), "reset", "--match", "*", "--yes")
	if r.code != 0 {
		t.Fatalf("reset --match '*': exit %d: %s", r.code, r.errOut)
	}
	for k, d := range dumps {
		if got := dumpKey(t, rdb, k); got != d {
			t.Fatalf("reset changed %s", k)
		}
	}
	for key, layout := range map[string]string{"rate:lookalike": "redis-rate", "hits:today": "throttled", "seen:at": "throttled", "throttle:counter": "throttled"} {
		r = run(t, srv.URL(), "inspect", key, "--layout", layout, "--capacity", "10", "--rate", "1")
		if r.code != ExitError || !strings.Contains(r.errOut, "not a bucket") {
			t.Fatalf("%s with --layout %s: exit %d, %q", key, layout, r.code, r.errOut)
		}
	}
	r = run(t, srv.URL(), "inspect", "rate:lookalike", "--layout", "redis-rate")
	if !strings.Contains(r.errOut, "a redis-rate bucket always has a TTL; this string has none (a counter?)") {
		t.Fatalf("rate:lookalike with --layout redis-rate: exit %d, %q", r.code, r.errOut)
	}
}

// TestGCRACheckDecidesAsTheLibrary: check on a drained bucket is denied (exit 4) with the
// library's retry-after, and allowed once the library allows.
func TestGCRACheckDecidesAsTheLibrary(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	libs := []gcraLib{
		redisRateLib(t, rdb, "chk:1", 6, 3, time.Minute),
		throttledLib(t, rdb, "chk:2", 6, 2, time.Minute),
	}
	for _, g := range libs {
		// A missing bucket would be allowed, and is no bucket: exit 6.
		if r := run(t, srv.URL(), append([]string{"check", g.key}, g.flags()...)...); r.code != ExitNoKey || !strings.HasPrefix(r.out, "allowed") {
			t.Fatalf("%s: check on a missing bucket: exit %d: %s%s", g.name, r.code, r.out, r.errOut)
		}
		g.take(3)
		r := run(t, srv.URL(), append([]string{"check", g.key, "-o", "json"}, g.flags()...)...)
		if r.code != ExitDenied {
			t.Fatalf("%s: check on a drained bucket: exit %d, want %d: %s %s", g.name, r.code, ExitDenied, r.out, r.errOut)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(r.out), &v); err != nil {
			t.Fatal(err)
		}
		ms, _ := v["retry_after_ms"].(float64)
		if ms < 9000 || ms > 10000 {
			t.Fatalf("%s: retry_after_ms %v, want ~10 s (one token at 6/min): %s", g.name, ms, r.out)
		}
		if ok, _ := g.take(1); ok {
			t.Fatalf("%s: the library allowed what check denied", g.name)
		}
	}
}
