package bucket_test

// The oracle of the redis-cell preset: brandur/redis-cell's rate limiter, a Redis module in
// Rust, ported here line by line from scripts/third_party/redis-cell (mod.rs, store.rs,
// lib.rs; comments cite file:line) and run over a real redis-server as its store. The port
// takes its clock as an argument, so bucketctl's check is compared with it at the very
// instant of bucketctl's read, and a bucket is written at clocks ahead and behind.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// cellLimiter is RateLimiter (mod.rs:59-73) built by CL.THROTTLE (lib.rs:54-62) over
// InternalRedisStore (store.rs:159-234), its store a real server.
type cellLimiter struct {
	rdb                     *redis.Client
	delayVariationTolerance int64 // ns
	emissionInterval        int64 // ns
	limit                   int64
}

// newCellLimiter is lib.rs:55-62: Rate::per_period(count, Duration::seconds(period)) and
// RateLimiter::new with RateQuota{max_burst, max_rate}.
func newCellLimiter(rdb *redis.Client, maxBurst, count, period int64) cellLimiter {
	ns := period * 1e9 // mod.rs:33 period.whole_nanoseconds()
	var p int64        // mod.rs:36-40: zero for n == 0 or ns == 0
	if count != 0 && ns != 0 {
		p = int64(float64(ns) / float64(count)) // mod.rs:42 ((ns as f64) / (n as f64)) as i64
	}
	return cellLimiter{rdb: rdb,
		delayVariationTolerance: p * (maxBurst + 1), // mod.rs:78-80
		emissionInterval:        p,                  // mod.rs:81
		limit:                   maxBurst + 1,       // mod.rs:82
	}
}

// cellReply is RateLimitResult (mod.rs:52-57), throttled (limited), and the integers
// CL.THROTTLE replies (lib.rs:82-87).
type cellReply struct {
	limited                          bool
	limit, remaining                 int64
	retryAfter, resetAfter           time.Duration // RateLimitResult's
	replyRetryAfter, replyResetAfter int64         // lib.rs:69-76, seconds
}

// rateLimit is RateLimiter::rate_limit (mod.rs:97-237) with the store's now replaced by now.
func (c cellLimiter) rateLimit(t *testing.T, key string, quantity int64, now time.Time) cellReply {
	t.Helper()
	ctx := context.Background()
	rlc := cellReply{limit: c.limit, retryAfter: -time.Second, resetAfter: -time.Second} // mod.rs:102-107
	if c.emissionInterval == 0 {                                                         // mod.rs:109-111
		t.Fatal("Zero rates are not supported")
	}
	increment := c.emissionInterval * quantity // mod.rs:113-115
	var ttl int64                              // mod.rs:123
	for i := 0; ; i++ {                        // mod.rs:133-134
		// mod.rs:139 get_with_time: store.rs:207-211, GET parsed as u64 (unwrap).
		tatVal, err := c.rdb.Get(ctx, key).Result()
		exists := err == nil
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		nowNs := now.UnixNano()
		tat := nowNs // mod.rs:141-142
		var old uint64
		if exists {
			if old, err = strconv.ParseUint(tatVal, 10, 64); err != nil {
				t.Fatalf("redis-cell would panic reading %q: %v", tatVal, err)
			}
			tat = int64(old) // mod.rs:143 from_nanoseconds
		}
		var newTat int64 // mod.rs:153-157
		if nowNs > tat {
			newTat = nowNs + increment
		} else {
			newTat = tat + increment
		}
		allowAt := newTat - c.delayVariationTolerance // mod.rs:167
		diff := nowNs - allowAt                       // mod.rs:168
		if diff < 0 {                                 // mod.rs:175
			if increment <= c.delayVariationTolerance { // mod.rs:182-184
				rlc.retryAfter = time.Duration(-diff)
			}
			rlc.limited = true // mod.rs:186
			ttl = tat - nowNs  // mod.rs:187
			break
		}
		newTatNs := uint64(newTat) // mod.rs:191
		ttl = newTat - nowNs       // mod.rs:192
		var updated bool           // mod.rs:200-210
		if exists {
			updated = c.compareAndSwapWithTTL(t, key, old, newTatNs, ttl)
		} else {
			updated = c.setIfNotExistsWithTTL(t, key, newTatNs, ttl)
		}
		if updated { // mod.rs:212-215
			rlc.limited = false
			break
		}
		if i+1 > 5 { // mod.rs:217-224, MAX_CAS_ATTEMPTS
			t.Fatal("Failed to update rate limit after 5 attempts")
		}
	}
	next := c.delayVariationTolerance - ttl // mod.rs:227
	if next > -c.emissionInterval {         // mod.rs:228-232: whole_microseconds, f64, as i64
		rlc.remaining = int64(float64(next/1000) / float64(c.emissionInterval/1000))
	}
	rlc.resetAfter = time.Duration(ttl) // mod.rs:233
	rlc.replyRetryAfter = cellReplySeconds(rlc.retryAfter)
	rlc.replyResetAfter = cellReplySeconds(rlc.resetAfter)
	return rlc
}

// cellReplySeconds is lib.rs:69-76: as_seconds_f64() as i64, plus 1 when
// subsec_milliseconds() > 0.
func cellReplySeconds(d time.Duration) int64 {
	s := int64(d.Seconds())
	if (d%time.Second)/time.Millisecond > 0 {
		s++
	}
	return s
}

// compareAndSwapWithTTL is store.rs:170-199; set_expire is src/redis/mod.rs:346-354,
// whole milliseconds through RedisModule_SetExpire (0: expired at once, as PEXPIRE 0).
func (c cellLimiter) compareAndSwapWithTTL(t *testing.T, key string, old, new uint64, ttl int64) bool {
	ctx := context.Background()
	s, err := c.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return false // store.rs:196-197
	}
	if err != nil {
		t.Fatal(err)
	}
	if n, perr := strconv.ParseUint(s, 10, 64); s == "" || perr != nil || n != old { // store.rs:184
		return false
	}
	c.rdb.Set(ctx, key, strconv.FormatUint(new, 10), redis.KeepTTL)  // store.rs:186
	c.rdb.PExpire(ctx, key, time.Duration(ttl/1e6)*time.Millisecond) // store.rs:187
	return true
}

// setIfNotExistsWithTTL is store.rs:218-233: the TTL is set whether or not it wrote.
func (c cellLimiter) setIfNotExistsWithTTL(t *testing.T, key string, value uint64, ttl int64) bool {
	ctx := context.Background()
	n, err := c.rdb.Exists(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	res := n == 0
	if res { // store.rs:225-227
		c.rdb.Set(ctx, key, strconv.FormatUint(value, 10), redis.KeepTTL)
	}
	c.rdb.PExpire(ctx, key, time.Duration(ttl/1e6)*time.Millisecond) // store.rs:231
	return res
}

// cellSpec is a rule's spec for CL.THROTTLE key max_burst count period.
func cellSpec(maxBurst, count, period int64) bucket.Spec {
	return bucket.Spec{Capacity: float64(maxBurst + 1), Rate: float64(count) / float64(period)}
}

// TestRedisCellOracle: buckets the module writes full, partly drained, empty and in debt
// (drained under a higher max_burst, decided under the lower one), at clocks 40 ms ahead and
// behind the server's, read by bucketctl and decided by both at the instant of the read:
// allowed alike, Remaining alike, the exact retry-after alike (or the key's expiry, up to
// the millisecond its TTL truncates, before it), the reply's whole seconds alike.
func TestRedisCellOracle(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rng := seed(t)
	l := bucket.Presets["redis-cell"]
	kinds := []string{"full", "drained", "empty", "debt"}
	var denied, debt int
	for i := range 120 {
		kind, skew := kinds[i%4], []time.Duration{0, 40 * time.Millisecond, -40 * time.Millisecond}[i/4%3]
		maxBurst, count := int64(rng.IntN(15)), int64(1+rng.IntN(10))
		period := []int64{60, 600, 3600}[rng.IntN(3)]
		old := maxBurst
		if kind == "debt" {
			old = maxBurst + 1 + int64(rng.IntN(10))
		}
		key := fmt.Sprintf("cell:%d", i)
		writer := newCellLimiter(rdb, old, count, period)
		var takes int64
		switch kind {
		case "drained":
			takes = rng.Int64N(maxBurst + 1)
		case "empty":
			takes = maxBurst + 1
		case "debt":
			takes = old + 1
		}
		for range takes {
			if r := writer.rateLimit(t, key, 1, serverNow(t, rdb).Add(skew)); r.limited {
				t.Fatalf("%s: take denied while draining: %+v", key, r)
			}
		}
		spec := cellSpec(maxBurst, count, period)
		lim := newCellLimiter(rdb, maxBurst, count, period)
		for _, cost := range []int64{1, 2, maxBurst + 1, maxBurst + 2} {
			keep := keepState(t, rdb, []string{key})
			states, err := bucket.NewStore(rdb).Inspect(ctx, []string{key}, func(string) bucket.Target {
				return bucket.Target{Layout: &l, Spec: spec}
			})
			if err != nil || states[0].Problem != "" {
				t.Fatalf("%s (%s, skew %s): %v %+v", key, kind, skew, err, states)
			}
			s := states[0]
			d := s.Decide(float64(cost))
			at := time.UnixMicro(s.Now)
			r := lim.rateLimit(t, key, cost, at)
			what := fmt.Sprintf("%s (%s, skew %s, %d/%ds burst %d) cost %d", key, kind, skew, count, period, maxBurst, cost)
			if d.Allowed == r.limited {
				t.Fatalf("%s: bucketctl allowed=%v (level %v), redis-cell %+v", what, d.Allowed, d.Remaining, r)
			}
			var tat *bucket.TAT
			if s.Exists {
				tat = s.TAT
			}
			p, _ := l.GCRADecide(spec, tat, at, int(cost))
			if int64(p.Remaining) != r.remaining || p.ResetAfter != r.resetAfter {
				t.Fatalf("%s: predicted %+v, redis-cell %+v", what, p, r)
			}
			if s.Ahead > 0 {
				debt++
			}
			if !r.limited {
				keep()
				continue
			}
			denied++
			switch {
			case cost > maxBurst+1:
				if d.RetryAfter != -1 || d.AppRetryAfter != -1 || r.replyRetryAfter != -1 {
					t.Fatalf("%s: above capacity: bucketctl %v (app %v), redis-cell %+v", what, d.RetryAfter, d.AppRetryAfter, r)
				}
			case d.RetryByExpiry:
				// The key's TTL is the wait truncated to whole ms, from a clock up to skew
				// ahead: it expires first, and the module, finding no key, allows. PTTL and
				// the server's clock count whole ms: a few ms more.
				if gap := r.retryAfter - d.RetryAfter; gap < 0 || gap > max(0, skew)+5*time.Millisecond {
					t.Fatalf("%s: retry-after %v by the expiry, redis-cell's wait %v", what, d.RetryAfter, r.retryAfter)
				}
			case d.RetryAfter != r.retryAfter:
				t.Fatalf("%s: retry-after %v, redis-cell's %v", what, d.RetryAfter, r.retryAfter)
			}
			if cost <= maxBurst+1 && d.AppRetryAfter != time.Duration(r.replyRetryAfter)*time.Second {
				t.Fatalf("%s: app retry-after %v, CL.THROTTLE replies %d s", what, d.AppRetryAfter, r.replyRetryAfter)
			}
			keep()
		}
	}
	t.Logf("%d denied, %d decisions on a TAT past a full window", denied, debt)
	if denied < 60 || debt < 20 {
		t.Fatalf("the states are not covered: %d denied, %d in debt", denied, debt)
	}
}

// TestRedisCellOracleReset: after a reset (through the reset script, the layout declared)
// to N tokens the module allows exactly N requests of 1, and after a reset to full
// max_burst+1; bucketctl reads N right after, and the TTL is the module's own rule.
func TestRedisCellOracleReset(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rng := seed(t)
	l := bucket.Presets["redis-cell"]
	st := bucket.NewStore(rdb)
	for i := range 24 {
		maxBurst, count, period := int64(1+rng.IntN(15)), int64(1+rng.IntN(10)), []int64{60, 3600}[i%2]
		key := fmt.Sprintf("cell:reset:%d", i)
		lim := newCellLimiter(rdb, maxBurst, count, period)
		spec := cellSpec(maxBurst, count, period)
		for range rng.Int64N(maxBurst + 2) {
			lim.rateLimit(t, key, 1, serverNow(t, rdb).Add([]time.Duration{0, 40 * time.Millisecond, -40 * time.Millisecond}[i%3]))
		}
		n := float64(rng.Int64N(maxBurst + 2))
		to := bucket.ResetTo{Tokens: n}
		if i%4 == 3 {
			to, n = bucket.ResetTo{Delete: true}, spec.Capacity
		}
		out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: key, Layout: l, Spec: spec, To: to, Declared: true}})
		if err != nil || (out[0] != bucket.ResetDone && out[0] != bucket.ResetCreated && !(n == spec.Capacity && out[0] == bucket.ResetMissing)) {
			t.Fatalf("%s: reset to %+v: %v %v", key, to, out, err)
		}
		if pttl := rdb.PTTL(ctx, key).Val(); n < spec.Capacity {
			v, _ := rdb.Get(ctx, key).Result()
			tat, err := l.ParseTAT(v)
			wait := time.Duration(tat.Unix - serverNow(t, rdb).UnixNano())
			// The TTL is the wait in whole ms from the TIME the reset read; its SET comes
			// a few ms later (up to 100 ms on a loaded machine), and so does this read.
			if err != nil || pttl > wait+100*time.Millisecond || pttl < wait-100*time.Millisecond {
				t.Fatalf("%s: reset to %v wrote %q (%v), PTTL %v for a TAT %v away", key, n, v, err, pttl, wait)
			}
		}
		states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: spec} })
		if err != nil || states[0].Problem != "" || states[0].Tokens < n || states[0].Tokens > n+spec.Rate*0.1 {
			t.Fatalf("%s: after a reset to %v bucketctl reads %+v (%v)", key, n, states, err)
		}
		got := 0
		for ; got <= int(spec.Capacity); got++ {
			if lim.rateLimit(t, key, 1, serverNow(t, rdb)).limited {
				break
			}
		}
		if got != int(math.Floor(n)) {
			t.Fatalf("%s: after a reset to %v redis-cell allowed %d", key, n, got)
		}
	}
}
