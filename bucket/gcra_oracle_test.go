package bucket_test

// The GCRA libraries themselves are the oracles here: go-redis/redis_rate v10 and
// throttled/throttled v2 (store/goredisstore.v9) drive buckets in a real redis-server,
// and bucketctl's reading, predictions and resets must agree with their answers.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// answer is one library reply, in the shape both libraries share.
type answer struct {
	allowed               bool
	remaining             int
	retryAfter, resetAfer time.Duration
}

// gcraOracle is one bucket of one library: its layout, spec, Redis key and a way to ask it.
type gcraOracle struct {
	what   string
	layout bucket.Layout
	spec   bucket.Spec
	key    string // the Redis key
	take   func(cost int) answer
}

// tokens is the library's own exact level, from its cost-0 answer: ResetAfter is
// TAT − now there in both libraries (and 0 for a full bucket).
func (o gcraOracle) tokens(a answer) float64 {
	return o.spec.Capacity - a.resetAfer.Seconds()*o.spec.Rate
}

var periods = []time.Duration{time.Second, time.Minute, time.Hour}

func redisRateOracle(t *testing.T, rdb *redis.Client, name string, rate, burst int, period time.Duration) gcraOracle {
	lim := redis_rate.NewLimiter(rdb)
	limit := redis_rate.Limit{Rate: rate, Burst: burst, Period: period}
	return gcraOracle{
		what:   fmt.Sprintf("redis_rate %v", limit),
		layout: bucket.Presets["redis-rate"], spec: bucket.RedisRateSpec(rate, burst, period),
		key: "rate:" + name,
		take: func(cost int) answer {
			t.Helper()
			r, err := lim.AllowN(context.Background(), name, limit, cost)
			if err != nil {
				t.Fatalf("redis_rate AllowN: %v", err)
			}
			return answer{r.RetryAfter == -1, r.Remaining, r.RetryAfter, r.ResetAfter}
		},
	}
}

// gcraOracles are the GCRA presets' oracles, by preset name: the library itself, on a
// bucket of rate per period with burst (count, MaxBurst for throttled).
var gcraOracles = map[string]func(t *testing.T, rdb *redis.Client, name string, rate, burst int, period time.Duration) gcraOracle{
	"redis-rate": redisRateOracle,
	"throttled":  throttledOracle,
}

const throttledPrefix = "throttle:"

// throttledOracle is a throttled bucket. Its spec is the one an operator writes in a rule
// (capacity MaxBurst+1, rate count/period); ThrottledSpec gives the same bucket.
func throttledOracle(t *testing.T, rdb *redis.Client, name string, count, maxBurst int, period time.Duration) gcraOracle {
	st, err := goredisstore.NewCtx(rdb, throttledPrefix)
	if err != nil {
		t.Fatal(err)
	}
	lim, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{MaxRate: throttled.PerDuration(count, period), MaxBurst: maxBurst})
	if err != nil {
		t.Fatal(err)
	}
	l := bucket.Presets["throttled"]
	l.KeyPrefix = throttledPrefix
	return gcraOracle{
		what:   fmt.Sprintf("throttled %d/%s burst %d", count, period, maxBurst),
		layout: l, spec: bucket.Spec{Capacity: float64(maxBurst + 1), Rate: float64(count) / period.Seconds()},
		key: throttledPrefix + name,
		take: func(cost int) answer {
			t.Helper()
			limited, r, err := lim.RateLimitCtx(context.Background(), name, cost)
			if err != nil {
				t.Fatalf("throttled RateLimitCtx: %v", err)
			}
			return answer{!limited, r.Remaining, r.RetryAfter, r.ResetAfter}
		},
	}
}

// randomOracles makes n buckets of each library with random specs; slow keeps the refill
// during one test step far below a token (at most 100 tokens an hour).
func randomOracles(t *testing.T, rdb *redis.Client, rng *rand.Rand, n int, slow bool) []gcraOracle {
	var out []gcraOracle
	for i := range n {
		p := periods[rng.IntN(len(periods))]
		if slow {
			p = time.Hour
		}
		out = append(out,
			redisRateOracle(t, rdb, fmt.Sprintf("%s-rr-%d", t.Name(), i), 1+rng.IntN(100), 1+rng.IntN(40), p),
			throttledOracle(t, rdb, fmt.Sprintf("%s-th-%d", t.Name(), i), 1+rng.IntN(100), rng.IntN(40), p))
	}
	return out
}

// raw is one pipelined read, the way the read path reads a gcra key.
type raw struct {
	value  string
	exists bool
	pttl   time.Duration
	now    time.Time
}

func readRaw(t *testing.T, rdb *redis.Client, key string) raw {
	t.Helper()
	ctx := context.Background()
	pipe := rdb.Pipeline()
	tm, get, pttl := pipe.Time(ctx), pipe.Get(ctx, key), pipe.PTTL(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	v, err := get.Result()
	return raw{value: v, exists: err == nil, pttl: pttl.Val(), now: tm.Val()}
}

func (o gcraOracle) state(t *testing.T, r raw) bucket.GCRAReading {
	t.Helper()
	st, err := bucket.GCRAState(o.layout, o.spec, o.key, r.value, r.exists, r.pttl, r.now)
	if err != nil {
		t.Fatalf("%s: GCRAState: %v", o.what, err)
	}
	if st.Fit != bucket.SureGCRA {
		t.Fatalf("%s: value %q (PTTL %s) written by the library is not detected as sure: %s", o.what, r.value, r.pttl, st.Reason)
	}
	return st
}

func (o gcraOracle) drain(t *testing.T, k int) {
	t.Helper()
	for j := range k {
		if a := o.take(1); !a.allowed {
			t.Fatalf("%s: take %d of %d denied while draining: %+v", o.what, j+1, k, a)
		}
	}
}

func seed(t *testing.T) *rand.Rand {
	s := uint64(time.Now().UnixNano())
	t.Logf("seed %d", s)
	return rand.New(rand.NewPCG(s, 15))
}

// A bucket drained by the library reads, between the library's own answers just before
// and just after the read, at a level within its rounding; so does the library's Remaining.
func TestGCRAReadBetweenLibraryAnswers(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	rng := seed(t)
	const tol = 1e-6
	for _, o := range randomOracles(t, rdb, rng, 25, false) {
		k := rng.IntN(int(o.spec.Capacity) + 1)
		o.drain(t, k)
		before := o.take(0)
		r := readRaw(t, rdb, o.key)
		st := o.state(t, r)
		after := o.take(0)
		lo, hi := o.tokens(before), o.tokens(after)
		if st.Tokens < lo-tol || st.Tokens > hi+tol {
			t.Errorf("%s drained by %d: bucketctl reads %v tokens, the library %v before and %v after", o.what, k, st.Tokens, lo, hi)
		}
		if f := int(math.Floor(st.Tokens + tol)); f < before.remaining {
			t.Errorf("%s drained by %d: %v tokens, but the library said %d remaining before", o.what, k, st.Tokens, before.remaining)
		}
		if f := int(math.Floor(st.Tokens - tol)); f > after.remaining {
			t.Errorf("%s drained by %d: %v tokens, but the library said %d remaining after", o.what, k, st.Tokens, after.remaining)
		}
		if st.AheadOfServer() {
			t.Errorf("%s: a bucket the library wrote reads as ahead of the server by %s", o.what, st.Ahead)
		}
		var tat *bucket.TAT
		if r.exists {
			tat = &st.TAT
		}
		d, err := o.layout.GCRADecide(o.spec, tat, r.now, 0)
		if err != nil {
			t.Fatal(err)
		}
		if d.Remaining < before.remaining || d.Remaining > after.remaining || !d.Allowed {
			t.Errorf("%s: predicted %+v for cost 0, the library said %+v before and %+v after", o.what, d, before, after)
		}
	}
}

// A fresh bucket's Remaining is the library's for every rate of 1-100 per minute or hour and
// burst of 1-40: its emission_interval is period / rate, which 1 / (rate/period) misses by
// an ulp for some, and Remaining then truncates one lower.
func TestGCRAFreshRemainingMatchesLibrary(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, period := range periods[1:] {
		for rate := 1; rate <= 100; rate++ {
			for burst := 1; burst <= 40; burst++ {
				o := redisRateOracle(t, rdb, "fresh", rate, burst, period)
				d, err := o.layout.GCRADecide(o.spec, nil, now, 0)
				if err != nil {
					t.Fatal(err)
				}
				if got := o.take(0); d.Remaining != got.remaining {
					t.Errorf("%s, fresh bucket: predicted %d remaining, the library said %d", o.what, d.Remaining, got.remaining)
				}
			}
		}
	}
}

// With slow rates (nothing refills a whole token during a step), the predicted answer to
// a request is the library's answer: decision and Remaining exactly, durations within the
// time between the read and the library's call, the written TAT and TTL too.
func TestGCRADecideMatchesLibrary(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	rng := seed(t)
	for _, o := range randomOracles(t, rdb, rng, 20, true) {
		capacity := int(o.spec.Capacity)
		if rng.IntN(2) == 0 {
			o.drain(t, rng.IntN(capacity+1))
		} else {
			// A fractional level, so that the library's truncation of Remaining shows.
			setLevel(t, rdb, o, rng.Float64()*o.spec.Capacity)
		}
		r := readRaw(t, rdb, o.key)
		var tat *bucket.TAT
		if r.exists {
			st := o.state(t, r)
			tat = &st.TAT
		}
		cost := rng.IntN(capacity + 2) // up to capacity+1: never allowed
		want, err := o.layout.GCRADecide(o.spec, tat, r.now, cost)
		if err != nil {
			t.Fatal(err)
		}
		got := o.take(cost)
		w := readRaw(t, rdb, o.key)
		elapsed := w.now.Sub(r.now) + time.Microsecond
		if got.allowed != want.Allowed || got.remaining != want.Remaining {
			t.Fatalf("%s cost %d: predicted %+v, the library answered %+v", o.what, cost, want, got)
		}
		within := func(what string, pred, lib time.Duration) {
			if pred == -1 || lib == -1 {
				if pred != lib {
					t.Errorf("%s cost %d: %s predicted %s, library %s", o.what, cost, what, pred, lib)
				}
				return
			}
			if d := pred - lib; d < -2 || d > elapsed {
				t.Errorf("%s cost %d: %s predicted %s, library %s (read %s before the call)", o.what, cost, what, pred, lib, elapsed)
			}
		}
		within("RetryAfter", want.RetryAfter, got.retryAfter)
		within("ResetAfter", want.ResetAfter, got.resetAfer)
		if !want.Write || !got.allowed {
			continue
		}
		written, err := o.layout.ParseTAT(w.value)
		if err != nil {
			t.Fatalf("%s: the library wrote %q: %v", o.what, w.value, err)
		}
		d := time.Duration(written.Unix - want.NewTAT.Unix)
		if tat != nil && tat.Unix > r.now.UnixNano() && d != 0 {
			t.Errorf("%s cost %d: predicted TAT %d, the library wrote %d", o.what, cost, want.NewTAT.Unix, written.Unix)
		}
		if d < -time.Microsecond || d > elapsed {
			t.Errorf("%s cost %d: predicted TAT %d, the library wrote %d", o.what, cost, want.NewTAT.Unix, written.Unix)
		}
		// The library's now lies between the two reads: its TTL lies between the TTLs
		// predicted for both, and PTTL at the second read is a little below it (at most
		// 100 ms on a loaded machine: the time between the call and the read).
		late, err := o.layout.GCRADecide(o.spec, tat, w.now, cost)
		if err != nil {
			t.Fatal(err)
		}
		if w.pttl > want.TTL || w.pttl < min(late.TTL, want.TTL)-100*time.Millisecond {
			t.Errorf("%s cost %d: predicted TTL %s (%s at the second read), the library set %s", o.what, cost, want.TTL, late.TTL, w.pttl)
		}
	}
}

// writeGCRAReset applies a GCRAWrite with plain commands: SET value EX ttl, or DEL.
func writeGCRAReset(t *testing.T, rdb *redis.Client, key string, w bucket.GCRAWrite) {
	t.Helper()
	ctx := context.Background()
	var err error
	if w.Delete {
		err = rdb.Del(ctx, key).Err()
	} else {
		err = rdb.Set(ctx, key, w.Value, w.TTL).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// takeAll takes cost 1 until the library denies, and returns how many it allowed.
func (o gcraOracle) takeAll(t *testing.T) int {
	t.Helper()
	for n := 0; n <= int(o.spec.Capacity)+1; n++ {
		if !o.take(1).allowed {
			return n
		}
	}
	t.Fatalf("%s: the library never denied", o.what)
	return 0
}

// setLevel writes the TAT that leaves tokens at the server's now.
func setLevel(t *testing.T, rdb *redis.Client, o gcraOracle, tokens float64) bucket.GCRAWrite {
	t.Helper()
	now := readRaw(t, rdb, o.key).now
	w, err := o.layout.GCRAReset(o.spec, tokens, now)
	if err != nil {
		t.Fatal(err)
	}
	writeGCRAReset(t, rdb, o.key, w)
	return w
}

func resetAndCount(t *testing.T, rdb *redis.Client, o gcraOracle, tokens float64) {
	t.Helper()
	w := setLevel(t, rdb, o, tokens)
	r := readRaw(t, rdb, o.key)
	st := o.state(t, r)
	// The read comes a few ms after the write (more on a loaded machine): allow the refill of
	// up to 100 ms at the spec's rate on top of the exact level.
	if st.Tokens < tokens || st.Tokens > tokens+1e-6+o.spec.Rate*0.1 {
		t.Errorf("%s: reset to %v (%q, TTL %s) reads %v tokens", o.what, tokens, w.Value, w.TTL, st.Tokens)
	}
	if !w.Delete && r.pttl != w.TTL {
		// The TTL is whole seconds, as the library sets it: PTTL right after is that exactly
		// or a little less (up to 100 ms on a loaded machine).
		if r.pttl < w.TTL-100*time.Millisecond || r.pttl > w.TTL {
			t.Errorf("%s: reset wrote TTL %s, PTTL is %s", o.what, w.TTL, r.pttl)
		}
	}
	if !w.Delete {
		// A cost-0 call re-sets the TTL the library's own way (both libraries write on it):
		// it must be the TTL the reset wrote, as it runs within a few ms of it.
		// Its TTL lies between the one predicted for the reset's now and for this read.
		o.take(0)
		r2 := readRaw(t, rdb, o.key)
		late, err := o.layout.GCRADecide(o.spec, &w.TAT, r2.now, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r2.pttl > w.TTL || r2.pttl < min(late.TTL, w.TTL)-100*time.Millisecond {
			t.Errorf("%s: reset to %v wrote TTL %s, the library set %s", o.what, tokens, w.TTL, r2.pttl)
		}
	}
	if got := o.takeAll(t); got != int(math.Floor(tokens)) {
		t.Errorf("%s: after a reset to %v tokens (%q, TTL %s) the library allowed %d", o.what, tokens, w.Value, w.TTL, got)
	}
}

// After `reset --tokens 5` the library takes exactly 5 and then denies.
func TestGCRAResetFiveLetsTheLibraryTakeFive(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, o := range []gcraOracle{
		redisRateOracle(t, rdb, "api:user:7", 10, 20, time.Minute),
		throttledOracle(t, rdb, "api:user:7", 10, 19, time.Minute),
	} {
		o.drain(t, 17)
		resetAndCount(t, rdb, o, 5)
	}
}

// Property: for random specs and levels (whole, fractional, empty, full), the library
// allows exactly floor(N) after a reset to N.
func TestGCRAResetPropertyExactlyN(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	rng := seed(t)
	for i, o := range randomOracles(t, rdb, rng, 20, true) {
		capacity := o.spec.Capacity
		o.drain(t, rng.IntN(int(capacity)+1))
		var n float64
		switch i % 4 {
		case 0:
			n = float64(rng.IntN(int(capacity) + 1))
		case 1:
			n = math.Round(rng.Float64()*capacity*100) / 100
		case 2:
			n = 0
		default:
			n = capacity
		}
		resetAndCount(t, rdb, o, n)
	}
}

// The libraries' own number formats, checked against what they write: redis_rate a
// decimal of seconds since 2017 with a fraction, throttled a canonical integer of ns.
func TestGCRALibraryValueFormats(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	rr := redisRateOracle(t, rdb, "fmt", 1, 5, time.Hour)
	th := throttledOracle(t, rdb, "fmt", 1, 4, time.Hour)
	rr.drain(t, 2)
	th.drain(t, 2)
	v := readRaw(t, rdb, rr.key)
	f, err := strconv.ParseFloat(v.value, 64)
	since2017 := float64(v.now.Unix() - 1483228800)
	if err != nil || f < since2017 || f > since2017+2*3600+1 {
		t.Errorf("redis_rate wrote %q at %d s since 2017", v.value, int64(since2017))
	}
	v = readRaw(t, rdb, th.key)
	n, err := strconv.ParseInt(v.value, 10, 64)
	if err != nil || n < v.now.UnixNano() || n > v.now.Add(2*time.Hour+time.Second).UnixNano() {
		t.Errorf("throttled wrote %q at %d ns", v.value, v.now.UnixNano())
	}
	for _, o := range []gcraOracle{rr, th} {
		r := readRaw(t, rdb, o.key)
		t.Logf("%s wrote %q, PTTL %s", o.what, r.value, r.pttl)
		if l, fit, why := bucket.DetectGCRA(o.key, r.value, r.pttl, r.now); fit != bucket.SureGCRA || l.Library != o.layout.Library {
			t.Errorf("%s: %q detected as %q (%s): %s", o.what, r.value, l.Name, fit, why)
		}
	}
}
