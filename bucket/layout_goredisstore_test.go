package bucket_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/scripts"
)

// goRedisStore calls go-redisstore's script as its store.go Take does: now in ns, Tokens and
// Interval from the spec; the reply {max, tokens, next, ok}.
type goRedisStore struct {
	c      *redis.Client
	script *redis.Script
	sp     bucket.Spec
}

type goRedisStoreReply struct {
	ok     bool
	tokens int64 // left after the take, truncated (the reply is integers)
	next   int64 // ns
}

func (g goRedisStore) take(t *testing.T, key string, nowNS int64) goRedisStoreReply {
	t.Helper()
	v, err := g.script.Run(context.Background(), g.c, []string{key}, nowNS, uint64(g.sp.Capacity),
		apptest.GoRedisStoreInterval(g.sp.Capacity, g.sp.Rate).Nanoseconds()).Slice()
	if err != nil || len(v) != 4 {
		t.Fatalf("go-redisstore script: %v %v", v, err)
	}
	return goRedisStoreReply{ok: v[3] == int64(1), tokens: v[1].(int64), next: v[2].(int64)}
}

// TestGoRedisStoreOracle: over buckets the script itself leaves full, partly drained, empty,
// denied and refilled (its t and i written), checked by clocks behind and ahead of the one
// that wrote them and around each tick, bucketctl's check is the script's next decision;
// the level it sees is the script's; a denial's retry-after is the script's next tick
// within 1 µs, and waiting it (and 1 µs) is enough.
func TestGoRedisStoreOracle(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	layout := bucket.Presets["go-redisstore"]
	script := redis.NewScript(scripts.App("go-redisstore"))
	const key = "grs:oracle"
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 123456789, time.UTC).UnixNano()
	checked, denied := 0, 0
	for _, sp := range []bucket.Spec{
		{Capacity: 5, Rate: 0.25},          // Interval 20 s
		{Capacity: 3, Rate: 2},             // 1.5 s
		{Capacity: 7, Rate: 7 / 1.2345678}, // 1.2345678 s
	} {
		g := goRedisStore{c: c, script: script, sp: sp}
		iv := apptest.GoRedisStoreInterval(sp.Capacity, sp.Rate).Nanoseconds()
		capN := int(sp.Capacity)
		for _, st := range []struct {
			name  string
			takes []int64 // ns after t0
		}{
			{"missing", nil},
			{"full-1", []int64{0}},
			{"partly", []int64{0, 0}},
			{"empty", repeat(0, capN)},
			{"denied", repeat(0, capN+2)},
			{"refilled", append(repeat(0, capN), iv+iv/3)},
			{"refilled-empty", append(repeat(0, capN), repeat(2*iv+iv/3, capN)...)},
		} {
			c.Del(ctx, key)
			last := int64(0)
			for _, at := range st.takes {
				g.take(t, key, t0+at)
				last = at
			}
			c.Persist(ctx, key) // the decisions here, not the owner's TTL, are under test
			dump, _ := c.Dump(ctx, key).Result()
			restore := func() {
				c.Del(ctx, key)
				if dump != "" {
					if err := c.RestoreReplace(ctx, key, 0, dump).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			writer := t0 + last
			for _, off := range []int64{-5e9, -1e3, 0, 1e6, iv / 2, iv - 1e3, iv + 1e3, iv + iv/2, 2*iv + 3e3, 10 * iv} {
				at := (writer + off) / 1e3 * 1e3 // bucketctl's clock is whole µs
				restore()
				s := inspectGoRedisStore(t, c, key, layout, sp, at/1e3)
				res, err := s.Peek(1)
				if err != nil {
					t.Fatal(err)
				}
				app := g.take(t, key, at)
				checked++
				where := func() string {
					return st.name + " " + time.Duration(off).String() + " after the writer, spec " + fmtSpec(sp)
				}
				if app.ok != res.Allowed {
					t.Fatalf("%s: bucketctl allowed=%v (level %v), the script %v (left %d)", where(), res.Allowed, s.Tokens, app.ok, app.tokens)
				}
				if seen := float64(app.tokens); app.ok && seen+1 != s.Tokens || !app.ok && seen != s.Tokens {
					t.Fatalf("%s: level %v, the script saw %d", where(), s.Tokens, app.tokens)
				}
				if res.Allowed {
					continue
				}
				denied++
				// (A clock behind the last tick's is told the tick after its own: too soon.)
				wait := time.Duration(app.next - at)
				if d := res.RetryAfter - wait; off >= 0 && (d < -time.Microsecond || d > time.Microsecond) {
					t.Fatalf("%s: retry-after %v, the script's next tick in %v", where(), res.RetryAfter, wait)
				}
				restore()
				if !g.take(t, key, at+res.RetryAfter.Nanoseconds()+1e3).ok {
					t.Fatalf("%s: retry-after %v (and 1 µs) is not enough for the script", where(), res.RetryAfter)
				}
				restore()
				if g.take(t, key, at+res.RetryAfter.Nanoseconds()-1e3).ok {
					t.Fatalf("%s: retry-after %v is too long: the script allows 1 µs before", where(), res.RetryAfter)
				}
			}
		}
	}
	if denied < checked/5 {
		t.Fatalf("only %d denials in %d checks", denied, checked)
	}
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func fmtSpec(sp bucket.Spec) string { return num(sp.Capacity) + "@" + num(sp.Rate) + "/s" }

func inspectGoRedisStore(t *testing.T, c *redis.Client, key string, l bucket.Layout, sp bucket.Spec, nowUS int64) bucket.State {
	t.Helper()
	var opts []bucket.Option
	if nowUS != 0 {
		opts = append(opts, bucket.WithClientClock(func() time.Time { return time.UnixMicro(nowUS) }))
	}
	states, err := bucket.NewStore(c, opts...).Inspect(context.Background(), []string{key},
		func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: sp} })
	if err != nil || states[0].Problem != "" {
		t.Fatalf("%s: %v %s", key, err, states[0].Problem)
	}
	return states[0]
}

// TestGoRedisStoreReset: after reset --tokens N the script serves exactly N until its next
// tick, one interval after the reset (or after a later start a fast client wrote), with its
// t at 0, its m kept and its TTL (3 × whole seconds of the interval, a longer one kept);
// after a reset it serves a full bucket. The stored m and i (which Set writes, and the
// script keeps over its caller's defaults) are the bucket's spec.
func TestGoRedisStoreReset(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	layout := bucket.Presets["go-redisstore"]
	sp := bucket.Spec{Capacity: 5, Rate: 0.25} // 5 per 20 s
	g := goRedisStore{c: c, script: redis.NewScript(scripts.App("go-redisstore")), sp: sp}
	st := bucket.NewStore(c)
	iv := int64(20e9)
	serve := func(key string, at int64, n int) int { return serve2(t, g, key, at, n) }
	for _, skew := range []time.Duration{0, 5 * time.Second} {
		key := "grs:reset:" + skew.String()
		now := serverMicros(t, c) * 1e3
		fast := now + skew.Nanoseconds()
		serve(key, fast, 7) // drained by a client skew ahead
		if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Tokens: 2}); err != nil {
			t.Fatal(err)
		}
		h := c.HGetAll(ctx, key).Val()
		start, err := strconv.ParseFloat(h["s"], 64)
		if err != nil || h["k"] != "2" || h["t"] != "0" || h["m"] != "5" || (skew > 0) != (start == float64(fast)) || start < float64(now) {
			t.Fatalf("skew %v: reset --tokens 2 left %v (the fast client's start %d, the server's time %d)", skew, h, fast, now)
		}
		fast = int64(start) // its next tick is one interval after this start
		if ttl := c.TTL(ctx, key).Val(); ttl < 58*time.Second || ttl > 60*time.Second {
			t.Fatalf("skew %v: TTL %v, want the script's 60 s", skew, ttl)
		}
		// The fast client until the next tick after its start, then full.
		if got := serve(key, fast+iv-1e6, 4); got != 2 {
			t.Fatalf("skew %v: after reset --tokens 2 the script served %d", skew, got)
		}
		if got := serve(key, fast+iv+1e6, 7); got != 5 {
			t.Fatalf("skew %v: one interval after the reset the script served %d, want a full 5", skew, got)
		}
		if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Delete: true}); err != nil || c.Exists(ctx, key).Val() != 0 {
			t.Fatalf("reset: %v", err)
		}
		if got := serve(key, fast+iv+2e6, 7); got != 5 {
			t.Fatalf("after reset the script served %d, want 5", got)
		}
	}

	// A fast client (5 s ahead) whose tick is ahead of the server's clock: the reset starts
	// the next interval from that tick, so the fast client too reads N, not a refill.
	{
		g4 := goRedisStore{c: c, script: g.script, sp: bucket.Spec{Capacity: 4, Rate: 1}} // 4 per 4 s
		key := "grs:reset:tick-ahead"
		now := serverMicros(t, c) * 1e3
		serve2(t, g4, key, now-3e9, 1)
		serve2(t, g4, key, now+5e9, 5)                           // tick 2: s + 8 s, ahead of the server's clock
		read := inspectGoRedisStore(t, c, key, layout, g4.sp, 0) // as reset reads it first
		if _, err := st.ResetState(ctx, read, bucket.ResetTo{Tokens: 2}); err != nil {
			t.Fatal(err)
		}
		if got := serve2(t, g4, key, now+5e9, 4); got != 2 {
			t.Fatalf("a fast client whose tick was ahead got %d after reset --tokens 2 (%v)", got, c.HGetAll(ctx, key).Val())
		}
	}

	// A missing bucket reset to 0: denied until one interval after, then full.
	key := "grs:reset:zero"
	if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Tokens: 0}); err != nil {
		t.Fatal(err)
	}
	now := serverMicros(t, c) * 1e3
	if serve(key, now, 1) != 0 || serve(key, now+iv+1e6, 6) != 5 {
		t.Fatal("a bucket reset to 0 is not empty until its next tick, then full")
	}

	// After a refill the script keeps i: m and i are the spec, whatever the rule says.
	key = "grs:stored"
	serve(key, now, 5)
	serve(key, now+iv+1e6, 1)
	rule := bucket.Spec{Capacity: 10, Rate: 1}
	s := inspectGoRedisStore(t, c, key, layout, rule, 0)
	if s.Spec != sp || s.SpecSource != "bucket" || s.Tokens != 4 {
		t.Fatalf("stored m and i read as %+v (%s), %v tokens; want %+v from the bucket, 4", s.Spec, s.SpecSource, s.Tokens, sp)
	}

	// Undeclared, it is a guess: a reset refuses it.
	det, err := st.Inspect(ctx, []string{key}, nil)
	if err != nil || det[0].Layout.Name != "go-redisstore" || det[0].Guess == "" {
		t.Fatalf("detected %+v %v", det[0], err)
	}
	if _, err := st.ResetState(ctx, det[0], bucket.ResetTo{Delete: true}); !errors.Is(err, bucket.ErrUndeclared) || c.Exists(ctx, key).Val() != 1 {
		t.Fatalf("reset of a guess: %v", err)
	}

	// Below a 1 s interval the script's TTL is 0: it deletes the key, and every take is a
	// full bucket's.
	sub := goRedisStore{c: c, script: g.script, sp: bucket.Spec{Capacity: 2, Rate: 4}}
	if got := serve2(t, sub, "grs:sub", now, 5); got != 5 || c.Exists(ctx, "grs:sub").Val() != 0 {
		t.Fatalf("at a 0.5 s interval the script served %d of 5 and left the key: %v", got, c.Exists(ctx, "grs:sub").Val())
	}
}

// serve2 counts the takes the script serves of n at at.
func serve2(t *testing.T, g goRedisStore, key string, at int64, n int) int {
	got := 0
	for i := 0; i < n; i++ {
		if g.take(t, key, at).ok {
			got++
		}
	}
	return got
}
