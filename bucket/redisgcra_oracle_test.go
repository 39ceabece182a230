package bucket_test

// The oracle of the redis-gcra preset: rwz/redis-gcra's own script
// (scripts/third_party/redis-gcra/perform_gcra_ratelimit.lua, verbatim) on a real
// redis-server, called as the gem calls it (lib/redis-gcra.rb: KEYS the key, ARGV burst,
// rate, period, cost; "-1" read as none, other durations with to_f).

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// gem is RedisGCRA.limit for one limit.
type gem struct {
	rdb                 *redis.Client
	script              *redis.Script
	burst, rate, period int
}

type gemResult struct {
	limited                bool
	remaining              int64
	retryAfter, resetAfter time.Duration // -1: nil
}

func newGem(t *testing.T, rdb *redis.Client, burst, rate, period int) gem {
	t.Helper()
	src, err := os.ReadFile("../scripts/third_party/redis-gcra/perform_gcra_ratelimit.lua")
	if err != nil {
		t.Fatal(err)
	}
	return gem{rdb: rdb, script: redis.NewScript(string(src)), burst: burst, rate: rate, period: period}
}

func (g gem) spec() bucket.Spec {
	return bucket.Spec{Capacity: float64(g.burst), Rate: float64(g.rate) / float64(g.period)}
}

func (g gem) limit(t *testing.T, key string, cost int) gemResult {
	t.Helper()
	v, err := g.script.Run(context.Background(), g.rdb, []string{key}, g.burst, g.rate, g.period, cost).Slice()
	if err != nil {
		t.Fatalf("redis-gcra: %v", err)
	}
	dur := func(s any) time.Duration {
		if s.(string) == "-1" {
			return -1
		}
		f, err := strconv.ParseFloat(s.(string), 64)
		if err != nil {
			t.Fatalf("redis-gcra replied %q", s)
		}
		return time.Duration(f * float64(time.Second))
	}
	return gemResult{v[0].(int64) == 1, v[1].(int64), dur(v[2]), dur(v[3])}
}

// shiftTATBy moves the stored TAT by d, keeping the TTL: what the script writes when the
// server's clock reads d later (its EX is relative), or what waiting -d does.
func shiftTATBy(t *testing.T, rdb *redis.Client, key string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	v, err := rdb.Get(ctx, key).Result()
	if err == redis.Nil {
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, key, strconv.FormatFloat(f+d.Seconds(), 'f', -1, 64), redis.KeepTTL).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRedisGCRAOracle: buckets the script writes full, partly drained, empty and in debt
// (drained under a higher burst, decided under the lower one), at server clocks 40 ms ahead
// and behind, read by bucketctl: its check agrees with the script's next decision; the
// retry-after it reports as the script's is the script's (within the time between the
// read and the call), and its true wait, half an interval shorter by the script's
// rounding, is when the script allows.
func TestRedisGCRAOracle(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rng := seed(t)
	l := bucket.Presets["redis-gcra"]
	kinds := []string{"full", "drained", "empty", "debt"}
	var denied, debt, waits int
	for i := range 96 {
		kind, skew := kinds[i%4], []time.Duration{0, 40 * time.Millisecond, -40 * time.Millisecond}[i/4%3]
		burst, rate, period := 1+rng.IntN(15), 1+rng.IntN(10), []int{60, 600, 3600}[rng.IntN(3)]
		old := burst
		if kind == "debt" {
			old = burst + 1 + rng.IntN(10)
		}
		key := fmt.Sprintf("gcra:%d", i)
		writer := newGem(t, rdb, old, rate, period)
		takes := map[string]int{"drained": rng.IntN(burst + 1), "empty": burst, "debt": old}[kind]
		for range takes {
			if r := writer.limit(t, key, 1); r.limited {
				t.Fatalf("%s: take denied while draining: %+v", key, r)
			}
		}
		shiftTATBy(t, rdb, key, skew)
		g := newGem(t, rdb, burst, rate, period)
		spec := g.spec()
		for _, cost := range []int{1, 2, burst, burst + 1} {
			what := fmt.Sprintf("%s (%s, skew %s, %d/%ds burst %d) cost %d", key, kind, skew, rate, period, burst, cost)
			keep := keepState(t, rdb, []string{key})
			start := time.Now()
			states, err := bucket.NewStore(rdb).Inspect(ctx, []string{key}, func(string) bucket.Target {
				return bucket.Target{Layout: &l, Spec: spec}
			})
			if err != nil || states[0].Problem != "" {
				t.Fatalf("%s: %v %+v", what, err, states)
			}
			s := states[0]
			d := s.Decide(float64(cost))
			r := g.limit(t, key, cost)
			between := time.Since(start) + time.Microsecond
			if d.Allowed == r.limited {
				t.Fatalf("%s: bucketctl allowed=%v (level %v), redis-gcra %+v", what, d.Allowed, d.Remaining, r)
			}
			if s.Ahead > 0 {
				debt++
			}
			keep()
			if !r.limited {
				continue
			}
			denied++
			if diff := d.AppRetryAfter - r.retryAfter; diff < -time.Microsecond || diff > between {
				t.Fatalf("%s: app retry-after %v, redis-gcra's %v (read %v before)", what, d.AppRetryAfter, r.retryAfter, between)
			}
			switch {
			case cost > burst:
				if d.RetryAfter != -1 {
					t.Fatalf("%s: above capacity: retry-after %v, want never", what, d.RetryAfter)
				}
			case d.RetryByExpiry:
				// Written with a clock ahead, the key expires before its TAT: then the
				// script, finding no key, allows.
				if d.RetryAfter > r.retryAfter+between || d.RetryAfter > s.TTL+time.Millisecond {
					t.Fatalf("%s: retry-after %v by the expiry (TTL %v), redis-gcra's %v", what, d.RetryAfter, s.TTL, r.retryAfter)
				}
				rdb.Del(ctx, key)
				if g.limit(t, key, cost).limited {
					t.Fatalf("%s: the script denies once the key is gone", what)
				}
				keep()
			default:
				half := time.Duration(float64(period) / float64(rate) / 2 * float64(time.Second))
				if diff := d.AppRetryAfter - half - d.RetryAfter; diff < -time.Microsecond || diff > time.Microsecond {
					t.Fatalf("%s: true wait %v, the script's %v less half an interval (%v)", what, d.RetryAfter, d.AppRetryAfter, half)
				}
				// Waiting the true wait (the TAT that much earlier) lets the script allow;
				// 200 ms less does not.
				waits++
				shiftTATBy(t, rdb, key, -(d.RetryAfter - 200*time.Millisecond))
				if !g.limit(t, key, cost).limited {
					t.Fatalf("%s: the script allows 200 ms before bucketctl's wait of %v", what, d.RetryAfter)
				}
				keep()
				shiftTATBy(t, rdb, key, -d.RetryAfter)
				if g.limit(t, key, cost).limited {
					t.Fatalf("%s: the script still denies after bucketctl's wait of %v", what, d.RetryAfter)
				}
				keep()
			}
		}
	}
	t.Logf("%d denied (%d waits checked), %d decisions on a TAT past a full window", denied, waits, debt)
	if denied < 60 || debt < 15 || waits < 20 {
		t.Fatalf("the states are not covered: %d denied, %d waits, %d in debt", denied, waits, debt)
	}
}

// TestRedisGCRAOracleReset: after a reset (through the reset script, the layout declared)
// to N tokens the script allows floor(N + 0.5) requests of 1, its rounding (N for a whole
// N), and after a reset to full burst; bucketctl reads N right after; the TTL is the
// script's EX ceil(time to full).
func TestRedisGCRAOracleReset(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rng := seed(t)
	l := bucket.Presets["redis-gcra"]
	st := bucket.NewStore(rdb)
	for i := range 32 {
		g := newGem(t, rdb, 1+rng.IntN(15), 1+rng.IntN(10), []int{60, 3600}[i%2])
		spec := g.spec()
		key := fmt.Sprintf("gcra:reset:%d", i)
		for range rng.IntN(g.burst + 2) {
			g.limit(t, key, 1)
		}
		shiftTATBy(t, rdb, key, []time.Duration{0, 40 * time.Millisecond, -40 * time.Millisecond}[i%3])
		n := float64(rng.IntN(g.burst + 1))
		if i%2 == 1 {
			n = math.Min(spec.Capacity, math.Round(rng.Float64()*spec.Capacity*4)/4)
		}
		to := bucket.ResetTo{Tokens: n}
		if i%5 == 4 {
			to, n = bucket.ResetTo{Delete: true}, spec.Capacity
		}
		out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: key, Layout: l, Spec: spec, To: to, Declared: true}})
		if err != nil || (out[0] != bucket.ResetDone && out[0] != bucket.ResetCreated && !(n == spec.Capacity && out[0] == bucket.ResetMissing)) {
			t.Fatalf("%s: reset to %+v: %v %v", key, to, out, err)
		}
		states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: spec} })
		if err != nil || states[0].Problem != "" || states[0].Tokens < n || states[0].Tokens > n+spec.Rate*0.1 {
			t.Fatalf("%s: after a reset to %v bucketctl reads %+v (%v)", key, n, states, err)
		}
		if s := states[0]; s.Exists {
			wait := time.Duration(s.TAT.Unix - s.Now*1000)
			if want := time.Duration(math.Ceil(wait.Seconds())) * time.Second; s.TTL > want || s.TTL < want-100*time.Millisecond {
				t.Fatalf("%s: reset to %v: PTTL %v for a TAT %v away, want EX %v", key, n, s.TTL, wait, want)
			}
		}
		got := 0
		for ; got <= g.burst; got++ {
			if g.limit(t, key, 1).limited {
				break
			}
		}
		if want := int(math.Floor(n + 0.5)); got != want {
			t.Fatalf("%s: after a reset to %v redis-gcra allowed %d, want %d", key, n, got, want)
		}
	}
}
