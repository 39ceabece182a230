package bucket_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// seedEnv replays the random states of the corner tests: BUCKETCTL_FIDELITY_SEED=<seed>, as
// printed by a failure.
const seedEnv = "BUCKETCTL_FIDELITY_SEED"

// cornerSeed is the seed of a corner test: the one in seedEnv, or a new one each run. It is
// logged, so that a failure prints it with the way to replay it.
func cornerSeed(t *testing.T) int64 {
	t.Helper()
	s := time.Now().UnixNano()
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: not an integer", seedEnv, v)
		}
		s = n
	}
	t.Logf("seed %d (replay with %s=%d)", s, seedEnv, s)
	return s
}

// slack is how far bucketctl's retry-after may be from the application's: 50 ms.
const slack = 50 * time.Millisecond

// keepState snapshots a bucket's keys (DUMP) and restores them exactly, TTL included.
func keepState(t testing.TB, c *redis.Client, keys []string) func() {
	t.Helper()
	ctx := context.Background()
	type saved struct {
		dump string
		ttl  time.Duration
	}
	var all []saved
	for _, k := range keys {
		d, err := c.Dump(ctx, k).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		all = append(all, saved{d, c.PTTL(ctx, k).Val()})
	}
	return func() {
		t.Helper()
		for i, k := range keys {
			c.Del(ctx, k)
			if all[i].dump == "" {
				continue
			}
			ttl := all[i].ttl
			if ttl < 0 {
				ttl = 0
			}
			if err := c.RestoreReplace(ctx, k, ttl, all[i].dump).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestFidelityCorners: the states an incident produces, for every application that passes
// its own clock (and the native script in its client-clock mode), each state on a key of its
// own in one server: stored times ahead of and behind the server's clock, TTLs shorter than
// the wait, costs around capacity, and resets of buckets written ahead. For each, bucketctl's
// one decision (State.Decide) is the application's own script's:
//   - allowed alike, at the level the application sees, on the server's clock and, where the
//     stored time is ahead, on the writer's clock (Decision.Writer);
//   - a retry-after that is enough for the application and not more than 50 ms too long:
//     where the key's TTL ends the wait it is the expiry (RetryByExpiry), after which the
//     application, finding no key, allows;
//   - time to full never past the key's expiry; ahead reported exactly where the stored time
//     is ahead;
//   - after a reset to N, the level the application reads right after it, on its clock (the
//     server's, and the writer's where it was ahead), is what ResetReads says.
func TestFidelityCorners(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	seed := cornerSeed(t)
	base := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).UnixMicro()
	const states = 120
	all := oracles(t)
	var names []string
	for name, o := range all {
		if !o.serverClock {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		o := all[name]
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			var ahead, behind, byExpiry, resets, aheadResets, denied int
			// A seed that happens to draw too few of a corner draws on (up to three times as
			// many states) rather than failing for the draw.
			covered := func() bool {
				return ahead >= states/5 && behind >= states/5 && denied >= states/10 && byExpiry >= 2 && resets >= states/8 && aheadResets >= 3
			}
			for i := 0; i < states || (!covered() && i < 3*states); i++ {
				tc := randomCase(r, o, base)
				key := fmt.Sprintf("corner:%s:%d", name, i)
				keys := o.layout.Keys(key)
				fail := func(format string, args ...any) {
					t.Helper()
					t.Fatalf("seed %d (replay: %s=%d) state %d %+v: "+format, append([]any{seed, seedEnv, seed, i, tc}, args...)...)
				}
				// A TTL on half the buckets, often shorter than the refill. It counts down in
				// real time: it is set for bucketctl's read only (at least 200 ms, so the key is
				// there then); the application runs on the state without it, its expiry
				// played by deleting the keys.
				var ttl time.Duration
				if tc.exists && r.Intn(2) == 0 {
					ttl = shortTTL(r, o.layout.Decide(tc.spec, tc.stored, true, tc.now, tc.cost), tc.spec)
				}
				write := func() {
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					if ttl > 0 {
						for _, k := range keys {
							c.PExpire(ctx, k, ttl)
						}
					}
				}
				write()
				s := inspectAt(t, c, key, o, tc.spec, tc.now)
				d := s.Decide(tc.cost)
				if tc.exists && !s.Exists {
					fail("the key expired before it was read")
				}
				o.write(t, c, key, tc.spec, tc.stored, tc.exists) // without the TTL (above)
				if res, err := s.Peek(tc.cost); err != nil || res != d.Result {
					fail("Peek %+v (%v) is not Decide %+v", res, err, d.Result)
				}
				// The stored time ahead of the server's, reported exactly (to the layout's unit).
				switch {
				case tc.exists && s.Stored.TS > tc.now:
					ahead++
					if s.Ahead <= 0 || d.Ahead != s.Ahead || s.Ahead != time.Duration(s.Stored.TS-tc.now)*time.Microsecond {
						fail("stored %v ahead of now %v: Ahead %v, decision's %v", s.Stored.TS, tc.now, s.Ahead, d.Ahead)
					}
				case tc.exists && tc.stored.TS < tc.now:
					behind++
					if s.Ahead != 0 {
						fail("stored time behind now, but Ahead %v", s.Ahead)
					}
				}
				// Time to full never past the key's expiry.
				if s.TTL >= 0 && (d.ResetAfter > s.TTL || s.TimeToFull() > s.TTL) {
					fail("time to full %v past the key's TTL %v", d.ResetAfter, s.TTL)
				}
				// The application, on the server's clock.
				app := o.run(t, c, key, tc.spec, tc.now, tc.cost)
				if app.allowed != d.Allowed {
					fail("bucketctl allowed=%v (level %v), the application %v (level %v)", d.Allowed, d.Remaining, app.allowed, app.level)
				}
				if app.levelKnown && math.Abs(app.level-d.Remaining) > 0.01*tc.spec.Capacity {
					fail("level %v, the application saw %v", d.Remaining, app.level)
				}
				checkWait := func(clock string, at int64, w bucket.Decision) {
					t.Helper()
					if w.Allowed || w.RetryAfter < 0 {
						if w.RetryAfter < 0 && tc.cost <= tc.spec.Capacity {
							fail("%s clock: never, for a cost within capacity", clock)
						}
						return
					}
					wait := w.RetryAfter.Microseconds()
					if w.RetryByExpiry {
						byExpiry++
						if w.RetryAfter > s.TTL+time.Millisecond || s.TTL < 0 {
							fail("%s clock: retry-after %v by expiry, past the TTL %v", clock, w.RetryAfter, s.TTL)
						}
						// The key is gone then: the application starts a full bucket.
						c.Del(ctx, keys...)
						if !o.run(t, c, key, tc.spec, at+wait, tc.cost).allowed {
							fail("%s clock: retry-after %v (the key's expiry): the application denies a missing bucket", clock, w.RetryAfter)
						}
						// Before it, with the key there, the application still denies.
						o.write(t, c, key, tc.spec, tc.stored, tc.exists)
						if early := wait - slack.Microseconds(); early > 0 && o.run(t, c, key, tc.spec, at+early, tc.cost).allowed {
							fail("%s clock: retry-after %v by expiry, but the application allows 50 ms earlier", clock, w.RetryAfter)
						}
						return
					}
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					if !o.run(t, c, key, tc.spec, at+wait, tc.cost).allowed {
						fail("%s clock: retry-after %v is not enough for the application", clock, w.RetryAfter)
					}
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					if o.run(t, c, key, tc.spec, at+wait-slack.Microseconds(), tc.cost).allowed && wait > slack.Microseconds() {
						fail("%s clock: retry-after %v is more than 50 ms too long", clock, w.RetryAfter)
					}
				}
				if !d.Allowed {
					denied++
				}
				checkWait("server", tc.now, d)
				// On the writer's clock, for a client-clock application written ahead.
				if o.layout.ClientClock() && tc.exists && s.Stored.TS > tc.now {
					if d.Writer == nil {
						fail("stored time ahead, but no decision on the writer's clock")
					}
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					wa := o.run(t, c, key, tc.spec, s.Stored.TS, tc.cost)
					if wa.allowed != d.Writer.Allowed {
						fail("writer's clock: bucketctl allowed=%v, the application %v", d.Writer.Allowed, wa.allowed)
					}
					checkWait("writer's", s.Stored.TS, *d.Writer)
				} else if d.Writer != nil {
					fail("a decision on the writer's clock where the stored time is not ahead")
				}

				// A reset to N of a third of the buckets: what the application reads right after.
				if r.Intn(3) != 0 || o.fixedCost && tc.spec.Capacity < 1 {
					continue
				}
				o.write(t, c, key, tc.spec, tc.stored, tc.exists)
				s = inspectAt(t, c, key, o, tc.spec, tc.now)
				n := pick(r, 0, tc.spec.Capacity, math.Floor(r.Float64()*tc.spec.Capacity*100)/100) // never above capacity
				st := bucket.NewStore(c, bucket.WithClientClock(func() time.Time { return time.UnixMicro(tc.now) }))
				out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: key, Layout: o.layout, Spec: tc.spec, To: bucket.ResetTo{Tokens: n}, Read: &s, Declared: true}})
				if err != nil || (out[0] != bucket.ResetDone && out[0] != bucket.ResetCreated) {
					fail("reset to %v: %v %v", n, out, err)
				}
				resets++
				server, writer, differs := o.layout.ResetReads(tc.spec, s.Stored, s.Exists, tc.now, n)
				restore := keepState(t, c, keys)
				readAt := func(clock string, at int64, want float64) {
					t.Helper()
					restore()
					got := o.run(t, c, key, tc.spec, at, 0)
					// Webman takes 1 and writes only when it allows: its level is known then.
					if o.fixedCost && !got.levelKnown {
						if want >= 1 {
							fail("after a reset to %v, %s clock: bucketctl says %v, the application denies", n, clock, want)
						}
						return
					}
					// The application's rounding: times in six decimals of seconds, ms.
					if math.Abs(got.level-want) > 2e-6*tc.spec.Rate+1e-9*tc.spec.Capacity+1e-12 {
						fail("after a reset to %v, %s clock: bucketctl says the application reads %v, it reads %v", n, clock, want, got.level)
					}
				}
				readAt("server", tc.now, server)
				if s.Exists && s.Stored.TS > tc.now {
					aheadResets++
					if o.layout.ClientClock() {
						readAt("writer's", s.Stored.TS, writer)
					}
				} else if differs {
					fail("reset: a writer's reading where the stored time is not ahead")
				}
			}
			t.Logf("%s: %d states: %d ahead, %d behind, %d denied, %d waits ended by expiry, %d resets (%d of buckets written ahead)",
				name, states, ahead, behind, denied, byExpiry, resets, aheadResets)
			if !covered() {
				t.Fatalf("seed %d: the corners are not covered", seed)
			}
		})
	}
}

// TestFidelitySpringCorners: Spring reads the server's TIME in whole seconds, so its states
// are written relative to the server's second (a case whose second turned while it ran is
// drawn again), with stored times ahead of and behind it and TTLs often shorter than the
// wait. bucketctl's decision is Spring's: allowed alike at Spring's level; time to full
// never past the key's expiry; a wait the expiry ends is the expiry, after which Spring,
// finding no key, allows; ahead reported where the stored second is ahead.
func TestFidelitySpringCorners(t *testing.T) { serverSecondCorners(t, "spring") }

// TestFidelitySpringCloudGatewayCorners: the same for Spring Cloud Gateway's script, which
// reads TIME in whole seconds too, in its two keys.
func TestFidelitySpringCloudGatewayCorners(t *testing.T) {
	serverSecondCorners(t, "spring-cloud-gateway")
}

func serverSecondCorners(t *testing.T, name string) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	o := oracles(t)[name]
	seed := cornerSeed(t)
	r := rand.New(rand.NewSource(seed))
	const sec = int64(1e6)
	const states = 120
	sameSecond := func(fn func()) bool {
		before := serverMicros(t, c)
		fn()
		return floorDiv(before, sec) == floorDiv(serverMicros(t, c), sec)
	}
	var redrawn, ahead, byExpiry, denied int
	covered := func() bool { return ahead >= states/8 && denied >= states/10 && byExpiry >= 2 }
	for i := 0; i < states || (!covered() && i < 3*states); {
		if redrawn > states {
			t.Fatalf("seed %d: %d cases redrawn: the server's second keeps turning", seed, redrawn)
		}
		for serverMicros(t, c)%sec > 900_000 {
		}
		tc := randomCase(r, o, serverMicros(t, c))
		tc.stored.TS += floorDiv(serverMicros(t, c), sec)*sec - floorDiv(tc.now, sec)*sec
		key := o.bucket(fmt.Sprintf("corner:%s:%d", name, i))
		keys := o.layout.Keys(key)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d (replay: %s=%d) state %d %+v: "+format, append([]any{seed, seedEnv, seed, i, tc}, args...)...)
		}
		var ttl time.Duration
		if tc.exists && r.Intn(2) == 0 {
			ttl = shortTTL(r, o.layout.Decide(tc.spec, tc.stored, true, tc.now, tc.cost), tc.spec)
		}
		o.write(t, c, key, tc.spec, tc.stored, tc.exists)
		if ttl > 0 {
			for _, k := range keys {
				c.PExpire(ctx, k, ttl)
			}
		}
		var s bucket.State
		var d bucket.Decision
		var app appRun
		if !sameSecond(func() {
			s = inspectAt(t, c, key, o, tc.spec, 0)
			d = s.Decide(tc.cost)
			app = o.run(t, c, key, tc.spec, 0, tc.cost)
		}) {
			redrawn++
			continue
		}
		if app.allowed != d.Allowed || app.levelKnown && math.Abs(app.level-d.Remaining) > 0.01*tc.spec.Capacity {
			fail("bucketctl allowed=%v (level %v), %s %v (level %v)", d.Allowed, d.Remaining, name, app.allowed, app.level)
		}
		if s.Exists && s.Stored.TS > s.Now {
			ahead++
			if d.Ahead != time.Duration(s.Stored.TS-s.Now)*time.Microsecond {
				fail("stored %v ahead of %v: ahead %v", s.Stored.TS, s.Now, d.Ahead)
			}
		}
		if s.TTL >= 0 && (d.ResetAfter > s.TTL || s.TimeToFull() > s.TTL) {
			fail("time to full %v past the key's TTL %v", d.ResetAfter, s.TTL)
		}
		if !d.Allowed {
			denied++
		}
		if !d.Allowed && d.RetryByExpiry {
			byExpiry++
			if d.RetryAfter > s.TTL+time.Millisecond {
				fail("retry-after %v by expiry, past the TTL %v", d.RetryAfter, s.TTL)
			}
			c.Del(ctx, keys...) // what the expiry does
			if !o.run(t, c, key, tc.spec, 0, tc.cost).allowed {
				fail("retry-after %v (the key's expiry): %s denies a missing bucket", d.RetryAfter, name)
			}
		}
		i++
	}
	t.Logf("%s: %d states: %d ahead, %d denied, %d waits ended by expiry, %d redrawn", name, states, ahead, denied, byExpiry, redrawn)
	if !covered() {
		t.Fatalf("seed %d: the corners are not covered", seed)
	}
}

// shortTTL is a TTL of at least 200 ms (the key is still there when bucketctl reads it),
// usually shorter than the wait of the decision d (the model's, before any TTL), so that
// the key's expiry often ends it; otherwise shorter than the refill to full.
func shortTTL(r *rand.Rand, d bucket.Decision, sp bucket.Spec) time.Duration {
	const least = 200 * time.Millisecond
	if !d.Allowed && d.RetryAfter > least+10*time.Millisecond && r.Intn(3) != 0 {
		return least + time.Duration(r.Int63n(int64(d.RetryAfter-least)))
	}
	return least + time.Duration(r.Int63n(int64(sp.Capacity/sp.Rate*float64(time.Second))+1))
}
