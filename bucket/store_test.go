package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/scripts"
)

// fakeClock is a settable client clock for the script's client-clock mode.
type fakeClock struct{ us atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.UnixMicro(c.us.Load()) }
func (c *fakeClock) add(d time.Duration) { c.us.Add(d.Microseconds()) }
func newClock(start int64) *fakeClock    { c := &fakeClock{}; c.us.Store(start); return c }
func ctxT(t *testing.T) context.Context  { return context.Background() }
func spec(c, r float64) bucket.Spec      { return bucket.Spec{Capacity: c, Rate: r} }
func dump(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	v, err := c.Dump(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTakeCapacity10Rate5(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	clock := newClock(1_700_000_000_000_000)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now))
	ctx := ctxT(t)
	sp := spec(10, 5)
	for i := 0; i < 10; i++ {
		r, err := st.Take(ctx, "k", sp, 1)
		if err != nil || !r.Allowed {
			t.Fatalf("take %d: %+v %v", i+1, r, err)
		}
	}
	r, err := st.Take(ctx, "k", sp, 1)
	if err != nil || r.Allowed {
		t.Fatalf("11th take should be denied: %+v %v", r, err)
	}
	if r.RetryAfter != 200*time.Millisecond {
		t.Fatalf("retry-after %v, want 200ms", r.RetryAfter)
	}
	if r.ResetAfter != 2*time.Second {
		t.Fatalf("reset-after %v, want 2s", r.ResetAfter)
	}
	clock.add(time.Second)
	for i := 0; i < 5; i++ {
		if r, err := st.Take(ctx, "k", sp, 1); err != nil || !r.Allowed {
			t.Fatalf("after 1s, take %d: %+v %v", i+1, r, err)
		}
	}
	if r, err := st.Take(ctx, "k", sp, 1); err != nil || r.Allowed {
		t.Fatalf("after 1s, 6th take should be denied: %+v %v", r, err)
	}
	// The bucket describes itself and counts its decisions.
	if n := nativeOf(t, c, "k"); n.Capacity != 10 || n.Rate != 5 || n.Allowed != 15 || n.Denied != 2 {
		t.Fatalf("stored %+v", n)
	}
}

// TestTakeServerTime: on Redis TIME, each reply carries the server's time of its decision
// (within the TIME read around the call), and the model replayed at those times decides
// alike, to the token: the retry-after and the refill are the server clock's, whatever time
// the calls take on a loaded machine.
func TestTakeServerTime(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := ctxT(t)
	sp := spec(10, 5)
	var level bucket.Level
	exists := false
	decide := func(what string, cost float64, peek bool) bucket.Result {
		t.Helper()
		call := st.Take
		if peek {
			call = st.Peek
		}
		before := serverMicros(t, c)
		r, err := call(ctx, "k", sp, cost)
		after := serverMicros(t, c)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		at := r.At.UnixMicro()
		if at < before || at > after {
			t.Fatalf("%s: decided at %d, not within the server's TIME %d..%d", what, at, before, after)
		}
		next, want := sp.Take(level, exists, at, cost)
		if peek { // the level the decision finds, nothing taken
			tokens := sp.At(level, at).Tokens
			want.Remaining, want.RetryAfter, want.ResetAfter = tokens, sp.Wait(tokens, cost), sp.Wait(tokens, sp.Capacity)
		}
		if r.Allowed != want.Allowed || r.Remaining != want.Remaining || r.RetryAfter != want.RetryAfter || r.ResetAfter != want.ResetAfter {
			t.Fatalf("%s: script %+v, model at the server's time %+v", what, r, want)
		}
		if !peek {
			level, exists = next, true
		}
		return r
	}
	for i := 1; i <= 10; i++ {
		if r := decide(fmt.Sprintf("take %d", i), 1, false); !r.Allowed {
			t.Fatalf("take %d of a full bucket of 10 denied: %+v", i, r)
		}
	}
	// Takes outrun 5 a second, so one is denied soon, its retry-after the time to one token.
	var denied bucket.Result
	for i := 11; ; i++ {
		if i > 100 {
			t.Fatal("100 takes in a row allowed at 5 a second")
		}
		if denied = decide(fmt.Sprintf("take %d", i), 1, false); !denied.Allowed {
			break
		}
	}
	if denied.RetryAfter <= 0 || denied.RetryAfter > 200*time.Millisecond {
		t.Fatalf("denied with retry-after %v, want up to 200ms", denied.RetryAfter)
	}
	// Refill runs on the server's clock: the 5 tokens a request of cost 5 needs come at 5
	// a second, over 800 ms after the denial (Peek writes nothing, so polling moves nothing).
	var ready bucket.Result
	redistest.WaitFor(t, 10*time.Second, "5 tokens refilled", func() bool {
		ready = decide("peek cost 5", 5, true)
		return ready.Allowed
	})
	if took, need := ready.At.Sub(denied.At), sp.Wait(denied.Remaining, 5); took < need || need <= 800*time.Millisecond {
		t.Fatalf("5 tokens refilled %v after the denial at %v tokens, want %v", took, denied.Remaining, need)
	}
	for i := 1; i <= 5; i++ {
		if r := decide(fmt.Sprintf("take %d after refilling", i), 1, false); !r.Allowed {
			t.Fatalf("take %d after refilling denied: %+v", i, r)
		}
	}
	decide("take 6 after refilling", 1, false) // allowed only if 0.2 s passed: the model says
}

// TestScriptMatchesModel drives the script (client clock) and the Go model with the same
// random sequences — times that jump, stall and run backwards, costs from 0 to above
// capacity, capacity changes — and requires identical decisions and token levels.
func TestScriptMatchesModel(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	clock := newClock(1_700_000_000_000_000)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now))
	ctx := ctxT(t)
	for seq := 0; seq < 40; seq++ {
		rng := rand.New(rand.NewPCG(uint64(seq), 7))
		key := "prop"
		c.Del(ctx, key)
		var level bucket.Level
		exists := false
		sp := spec(float64(1+rng.IntN(50))+rng.Float64(), 0.1+rng.Float64()*30)
		for step := 0; step < 60; step++ {
			switch rng.IntN(10) {
			case 0:
				clock.add(-time.Duration(rng.IntN(500)) * time.Millisecond) // clock regression
			case 1:
				sp.Capacity = float64(1+rng.IntN(50)) + rng.Float64() // spec change
			default:
				clock.add(time.Duration(rng.ExpFloat64() * float64(200*time.Millisecond)))
			}
			cost := float64(rng.IntN(4))
			if rng.IntN(20) == 0 {
				cost = sp.Capacity + 1
			}
			if rng.IntN(5) == 0 {
				cost += rng.Float64()
			}
			now := clock.now().UnixMicro()
			wantLevel, want := sp.Take(level, exists, now, cost)
			if cost > sp.Capacity {
				// The Go side refuses it up front; the script denies it, writing nothing.
				before := dump(t, c, key)
				v, err := c.Eval(ctx, scripts.TokenBucket(), []string{key}, fmtF(sp.Capacity), fmtF(sp.Rate), fmtF(cost),
					strconv.FormatInt(now, 10)).Result()
				r, perr := bucket.NativeReply(v, sp, cost)
				if err != nil || perr != nil || r.Allowed || r.RetryAfter != -1 || want.RetryAfter != -1 || want.Allowed {
					t.Fatalf("seq %d step %d: cost above capacity: script %v %v, model %+v", seq, step, v, err, want)
				}
				if dump(t, c, key) != before {
					t.Fatalf("seq %d step %d: a cost above capacity changed the bucket", seq, step)
				}
				continue
			}
			got, err := st.Take(ctx, key, sp, cost)
			if err != nil {
				t.Fatalf("seq %d step %d: %v", seq, step, err)
			}
			if got.Allowed != want.Allowed || got.Remaining != want.Remaining ||
				got.RetryAfter != want.RetryAfter || got.ResetAfter != want.ResetAfter {
				t.Fatalf("seq %d step %d (spec %+v cost %v): script %+v, model %+v", seq, step, sp, cost, got, want)
			}
			level, exists = wantLevel, true
			{
				// The stored level is the model's, to the bit.
				n := nativeOf(t, c, key)
				if n.Tokens != level.Tokens {
					t.Fatalf("seq %d step %d: stored tokens %v, model %v", seq, step, n.Tokens, level.Tokens)
				}
				if int64(n.TS) != level.TS {
					t.Fatalf("seq %d step %d: stored ts %v, model %v", seq, step, n.TS, level.TS)
				}
				// The TTL covers the time to full plus the grace (60 s by default), less
				// the real time the sequence has taken since it was set (well under 5 s).
				if ttl := c.PTTL(ctx, key).Val(); ttl < got.ResetAfter+60*time.Second-5*time.Second {
					t.Fatalf("seq %d step %d: TTL %v, time to full %v + 60 s grace", seq, step, ttl, got.ResetAfter)
				}
			}
		}
	}
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func parse(t *testing.T, v any) float64 {
	t.Helper()
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return f
}

func TestPeekWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := ctxT(t)
	var level bucket.Level // the model's, at the server's times the replies carry
	for i := 0; i < 7; i++ {
		r, err := st.Take(ctx, "k", spec(10, 1), 1)
		if err != nil {
			t.Fatal(err)
		}
		level, _ = spec(10, 1).Take(level, i > 0, r.At.UnixMicro(), 1)
	}
	before := dump(t, c, "k")
	ttlBefore := c.PTTL(ctx, "k").Val()
	r, err := st.Peek(ctx, "k", bucket.Spec{}, 1)
	// 3 tokens left, refilled at 1 a second of the server's clock since.
	if want := spec(10, 1).At(level, r.At.UnixMicro()).Tokens; err != nil || !r.Allowed || r.Remaining < 3 || r.Remaining != want || r.Spec != spec(10, 1) {
		t.Fatalf("peek %+v %v, want %v tokens", r, err, want)
	}
	if r, err := st.Peek(ctx, "k", bucket.Spec{}, 5); err != nil || r.Allowed || r.RetryAfter <= 0 {
		t.Fatalf("peek cost 5: %+v %v", r, err)
	}
	if after := dump(t, c, "k"); after != before {
		t.Fatal("peek changed the bucket")
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl > ttlBefore {
		t.Fatalf("peek extended the TTL: %v > %v", ttl, ttlBefore)
	}
	if _, err := st.Peek(ctx, "missing", spec(10, 1), 1); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, "missing").Val(); n != 0 {
		t.Fatal("peek of a missing bucket created it")
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := ctxT(t)
	c.Set(ctx, "str", "hello", 0)
	c.HSet(ctx, "user:1", "name", "ann")
	c.HSet(ctx, "foreign", "tokens", "3", "last_refill", "1700000000.5")
	cases := []struct {
		name string
		key  string
		sp   bucket.Spec
		cost float64
		want error
	}{
		{"rate 0", "new", spec(10, 0), 1, bucket.ErrInvalid},
		{"negative capacity", "new", spec(-1, 5), 1, bucket.ErrInvalid},
		{"NaN capacity", "new", spec(math.NaN(), 5), 1, bucket.ErrInvalid},
		{"Inf rate", "new", spec(10, math.Inf(1)), 1, bucket.ErrInvalid},
		{"negative cost", "new", spec(10, 5), -1, bucket.ErrInvalid},
		{"cost above capacity", "new", spec(10, 5), 11, bucket.ErrInvalid},
		{"no spec, no bucket", "new", bucket.Spec{}, 1, bucket.ErrNoSpec},
		{"no spec, no key", "new", bucket.Spec{}, 1, bucket.ErrNoKey},
		{"string key", "str", spec(10, 5), 1, bucket.ErrWrongType},
		{"other hash", "user:1", spec(10, 5), 1, bucket.ErrWrongType},
		{"foreign bucket", "foreign", spec(10, 5), 1, bucket.ErrForeign},
	}
	for _, tc := range cases {
		before := dump(t, c, tc.key)
		_, err := st.Take(ctx, tc.key, tc.sp, tc.cost)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
		if after := dump(t, c, tc.key); after != before {
			t.Errorf("%s: key %s changed", tc.name, tc.key)
		}
	}
	// The script is the last line of defence for other callers: raw EVAL with bad
	// arguments is an error reply and writes nothing.
	// A clock or grace out of the one grammar or the stored ranges is refused too: a script
	// must never write a time its own identity check would then call corrupt, nor set the
	// level and then fail on the TTL. "existing" is a bucket that must stay as it is.
	if _, err := st.Take(ctx, "existing", spec(10, 5), 1); err != nil {
		t.Fatal(err)
	}
	existing := dump(t, c, "existing")
	for _, args := range [][]any{{"10", "0", "1"}, {"nan", "5", "1"}, {"10", "inf", "1"}, {"10", "5", "-1"}, {"x", "5", "1"},
		{"1e15", "0.001", "1"}, {"10", "5", "0x1"},
		{"10", "5", "1", "-5"}, {"10", "5", "1", "0x10"}, {"10", "5", "1", "1e18"}, {"10", "5", "1", " 5"},
		{"10", "5", "1", "", "take", "inf"}, {"10", "5", "1", "", "take", "-1000"}, {"10", "5", "1", "", "take", "1e300"},
		{"10", "5", "1", "", "take", "0.5"}} {
		for _, key := range []string{"raw", "existing"} {
			err := c.Eval(ctx, scripts.TokenBucket(), []string{key}, args...).Err()
			// A capacity that is no number at all raises Lua's arithmetic error (a lone
			// decision compares a given spec with the stored one without a call).
			lua := args[0] == "x" && err != nil && strings.Contains(err.Error(), "arithmetic on local 'cap_s'")
			if !lua && (err == nil || !strings.Contains(err.Error(), "bucketctl: ")) {
				t.Errorf("script on %s: %v gave %v, want a bucketctl error reply", key, args, err)
			}
		}
		if c.Exists(ctx, "raw").Val() != 0 {
			t.Fatalf("script wrote a bucket for %v", args)
		}
		if after := dump(t, c, "existing"); after != existing {
			t.Fatalf("script changed a bucket for %v", args)
		}
	}
	// Through the Store, a grace or a clock out of range is ErrInvalid, as bad specs are.
	for name, o := range map[string]bucket.Option{
		"negative grace": bucket.WithTTLGrace(-time.Second),
		"clock at zero":  bucket.WithClientClock(func() time.Time { return time.Time{} }),
	} {
		_, err := bucket.NewStore(c, o).Take(ctx, "existing", spec(10, 5), 1)
		if !errors.Is(err, bucket.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
		if after := dump(t, c, "existing"); after != existing {
			t.Fatalf("%s: the bucket changed", name)
		}
	}
}

func TestNoScriptRecovered(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := ctxT(t)
	if _, _, err := st.LoadScript(ctx); err != nil {
		t.Fatal(err)
	}
	c.ScriptFlush(ctx)
	if ok := c.ScriptExists(ctx, st.SHA()).Val(); ok[0] {
		t.Fatal("flush did not flush")
	}
	r, err := st.Take(ctx, "k", spec(3, 1), 1)
	if err != nil || !r.Allowed {
		t.Fatalf("take after SCRIPT FLUSH: %+v %v", r, err)
	}
	if v := nativeOf(t, c, "k").Allowed; v != 1 {
		t.Fatalf("the decision was applied %v times, want once", v)
	}
}

// TestConcurrentHotKey: 64 goroutines on one key with capacity 10, rate 10/s for 3 s are
// allowed capacity + rate × T, never more.
func TestConcurrentHotKey(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 64, MaxRetries: -1})
	defer c.Close()
	for _, mode := range []struct {
		name string
		st   *bucket.Store
	}{
		{"coalesced", bucket.NewStore(c)},
		{"direct", bucket.NewStore(c, bucket.WithCoalescing(0))},
	} {
		t.Run(mode.name, func(t *testing.T) {
			key := "hot:" + mode.name
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var allowed, total atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for g := 0; g < 64; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						r, err := mode.st.Take(ctx, key, spec(10, 10), 1)
						if err != nil {
							continue
						}
						total.Add(1)
						if r.Allowed {
							allowed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start).Seconds()
			most := 10 + 10*elapsed
			if a := float64(allowed.Load()); a > math.Floor(most)+1 || a < 10+10*2.5 {
				t.Fatalf("allowed %v of %d in %.2fs, want at most %.1f", a, total.Load(), elapsed, most)
			}
			// Every decision the server made was reported to a caller or lost with a
			// cancelled one: the counters can exceed the callers' count only by those.
			got := int64(nativeOf(t, c, key).Allowed)
			if got < allowed.Load() || got > int64(math.Floor(most))+1 {
				t.Fatalf("the bucket counted %d allowed, callers saw %d (max %.1f)", got, allowed.Load(), most)
			}
			t.Logf("allowed %d of %d in %.2fs (theoretical max %.1f)", allowed.Load(), total.Load(), elapsed, most)
		})
	}
}

func TestTTLAtLeastUntilFull(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c, bucket.WithTTLGrace(0))
	ctx := ctxT(t)
	r, err := st.Take(ctx, "k", spec(100, 2), 30)
	if err != nil {
		t.Fatal(err)
	}
	ttl := c.PTTL(ctx, "k").Val()
	if ttl < r.ResetAfter-50*time.Millisecond || ttl > r.ResetAfter+time.Second {
		t.Fatalf("TTL %v, want about the time to full %v", ttl, r.ResetAfter)
	}
}

// TestTTLCoversTimeToFull: on the server clock, after every take — allows that must extend
// the TTL, allows that find it still long enough, denies — the TTL covers the time to full
// plus the grace, and no take shortens it (a grace of 60 s, and of 2 s: every extension
// then has 1 s of headroom, a few allows of rate 1).
func TestTTLCoversTimeToFull(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := ctxT(t)
	for _, grace := range []time.Duration{60 * time.Second, 2 * time.Second} {
		st := bucket.NewStore(c, bucket.WithTTLGrace(grace))
		if grace == 60*time.Second {
			st = bucket.NewStore(c) // the default grace: no ARGV[6]
		}
		rng := rand.New(rand.NewPCG(uint64(grace), 1))
		key := "ttl:" + grace.String()
		extended, kept := 0, 0
		for i := 0; i < 300; i++ {
			before := c.PTTL(ctx, key).Val()
			r, err := st.Take(ctx, key, spec(500, 1), float64(rng.IntN(4)))
			if err != nil {
				t.Fatal(err)
			}
			ttl := c.PTTL(ctx, key).Val()
			if ttl < r.ResetAfter+grace-time.Second {
				t.Fatalf("grace %v take %d: TTL %v, time to full %v", grace, i, ttl, r.ResetAfter)
			}
			if before > 0 && ttl < before-time.Second {
				t.Fatalf("grace %v take %d: TTL shortened from %v to %v", grace, i, before, ttl)
			}
			if ttl > before+time.Second {
				extended++
			} else {
				kept++
			}
		}
		if extended < 2 || kept < 2 {
			t.Fatalf("grace %v: %d takes extended the TTL and %d kept it, want both paths", grace, extended, kept)
		}
	}
}

// TestDecisionIsTimeGetSet: a decision, allow or deny, is TIME, GET and one SET with its
// TTL (PX): no PTTL, no PEXPIRE, no second write that could be refused after the first.
func TestDecisionIsTimeGetSet(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := ctxT(t)
	const takes = 40
	st := bucket.NewStore(c, bucket.WithCoalescing(0))
	c.ConfigResetStat(ctx)
	for i := range takes {
		if _, err := st.Take(ctx, "busy", spec(20, 1), 1); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	calls := map[string]int{}
	for _, line := range strings.Split(c.Info(ctx, "commandstats").Val(), "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
			name, stats, _ := strings.Cut(rest, ":calls=")
			n, _ := strconv.Atoi(stats[:strings.IndexByte(stats, ',')])
			calls[name] = n
		}
	}
	for cmd, want := range map[string]int{"time": takes, "get": takes, "pttl": 0, "pexpire": 0, "hset": 0, "hgetall": 0} {
		if calls[cmd] != want {
			t.Errorf("%d takes called %s %d times, want %d (all: %v)", takes, cmd, calls[cmd], want, calls)
		}
	}
	// One write each: SET PX for the new bucket, then SETRANGE in place while its TTL stands.
	if calls["set"] != 1 || calls["setrange"] != takes-1 {
		t.Errorf("%d takes called set %d and setrange %d times, want 1 and %d", takes, calls["set"], calls["setrange"], takes-1)
	}
}
