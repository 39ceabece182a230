package bucket_test

import (
	"context"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

const casesPerLayout = 250

// fidelityCase is one random state in the corners an operator meets: stored times ahead of
// the clock, second boundaries, near-empty and full buckets, costs around capacity.
type fidelityCase struct {
	spec   bucket.Spec
	stored bucket.Level
	exists bool
	now    int64
	cost   float64
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// randomCase draws a case at about base (µs). The stored time is at the layout's own
// resolution.
func randomCase(r *rand.Rand, o oracle, base int64) fidelityCase {
	var c fidelityCase
	c.spec.Capacity = pick(r, 1, 2, 5, 10, 20, 100, 0.5+r.Float64()*30)
	c.spec.Rate = pick(r, 0.5, 1, 2.5, 10, 33.3, 0.1+r.Float64()*50)
	if o.fixedCost {
		c.spec.Capacity = pick(r, 1, 1.5, 2, 5, 10, 0.5+r.Float64()*3)
	}
	if o.layout.Name == "traefik" { // its burst is an integer, at least 1
		c.spec.Capacity = math.Max(1, math.Round(c.spec.Capacity))
	}
	// now, often next to a second boundary.
	c.now = base + r.Int63n(20e6)
	if r.Intn(3) == 0 {
		c.now = c.now - c.now%1e6 + pick(r, int64(0), 1, 999, 1000, 999_000, 999_999)
	}
	// The stored time: now, a little or long ago, or ahead (a fast client).
	sec := int64(1e6)
	back := pick(r, int64(0), 1, 1000, 999_999, sec, 3*sec/2, int64(r.Float64()*2*c.spec.Capacity/c.spec.Rate*1e6), 3600*sec,
		-1000, -50_000, -sec, -4_200_000, -5*sec, -r.Int63n(6e6))
	c.stored.TS = c.now - back
	switch o.layout.Name {
	case "go-bench", "upstash", "upstash-10s":
		c.stored.TS -= ((c.stored.TS % 1000) + 1000) % 1000
	case "spring", "spring-cloud-gateway":
		c.stored.TS -= ((c.stored.TS % sec) + sec) % sec
	}
	c.cost = pick(r, 1.0, 0.5, 0, c.spec.Capacity, c.spec.Capacity+1e-9, c.spec.Capacity+0.5, 1.5*c.spec.Capacity, r.Float64()*c.spec.Capacity)
	if o.fixedCost {
		c.cost = 1
	}
	c.stored.Tokens = pick(r, 0, 1e-3, c.cost, c.cost-1e-9, c.cost+1e-9, c.spec.Capacity, c.spec.Capacity-1e-3, 0.5*c.cost,
		r.Float64()*c.spec.Capacity, r.Float64()*c.spec.Capacity)
	if o.layout.Name == "traefik" && r.Intn(2) == 0 {
		// Traefik serves a deficit it can wait out (up to a token at 1/s): denials lie below.
		c.stored.Tokens = pick(r, 0, 1e-3, r.Float64()*0.5)
	}
	c.stored.Tokens = math.Max(0, c.stored.Tokens)
	c.exists = r.Intn(20) != 0
	return c
}

// inspectAt reads the bucket through bucketctl's read path with the clock at now (µs; 0:
// the server's TIME).
func inspectAt(t testing.TB, c *redis.Client, key string, o oracle, sp bucket.Spec, now int64) bucket.State {
	t.Helper()
	var opts []bucket.Option
	if now != 0 {
		opts = append(opts, bucket.WithClientClock(func() time.Time { return time.UnixMicro(now) }))
	}
	l := o.layout
	states, err := bucket.NewStore(c, opts...).Inspect(context.Background(), []string{key},
		func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: sp} })
	if err != nil {
		t.Fatal(err)
	}
	if states[0].Problem != "" {
		t.Fatalf("%s: %s", key, states[0].Problem)
	}
	return states[0]
}

// TestFidelityClientClock: for every layout whose application passes its own clock (and
// the native script in its client-clock mode), over random states in the corners, bucketctl's
// check agrees with the application's next decision; waiting its retry-after is enough for
// the application and one microsecond less is not; the level is the application's (within
// 1% of capacity); and the retry-after the application reports is the one bucketctl says
// it will report.
func TestFidelityClientClock(t *testing.T) {
	fidelitySeed := cornerSeed(t) // a new one each run, logged; replay with BUCKETCTL_FIDELITY_SEED
	srv := redistest.Start(t)
	c := srv.Client(t)
	base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixMicro()
	for name, o := range oracles(t) {
		if o.serverClock {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewSource(fidelitySeed))
			key := "fid:" + name
			ahead, denied := 0, 0
			// Past casesPerLayout, cases go on (up to four times as many) until the corners
			// are covered: a seed that draws few of them still tests them.
			covered := func() bool { return ahead >= casesPerLayout/5 && denied >= casesPerLayout/5 }
			for i := 0; i < casesPerLayout || (!covered() && i < 4*casesPerLayout); i++ {
				tc := randomCase(r, o, base)
				fail := func(format string, args ...any) {
					t.Helper()
					t.Fatalf("seed %d case %d %+v: "+format, append([]any{fidelitySeed, i, tc}, args...)...)
				}
				o.write(t, c, key, tc.spec, tc.stored, tc.exists)
				s := inspectAt(t, c, key, o, tc.spec, tc.now)
				res, err := s.Peek(tc.cost)
				if err != nil {
					fail("peek: %v", err)
				}
				d := o.layout.Decide(tc.spec, s.Stored, s.Exists, s.Now, tc.cost)
				if d.Result != res {
					fail("State.Peek %+v and Layout.Decide %+v differ", res, d.Result)
				}
				if s.Ahead > 0 {
					ahead++
				}
				app := o.run(t, c, key, tc.spec, tc.now, tc.cost)
				if app.allowed != res.Allowed {
					fail("bucketctl allowed=%v (level %v), the application %v (level %v)", res.Allowed, s.Tokens, app.allowed, app.level)
				}
				if app.levelKnown && math.Abs(app.level-s.Tokens) > 0.01*tc.spec.Capacity {
					fail("level %v, the application saw %v", s.Tokens, app.level)
				}
				if app.reports != d.AppReports || (app.reports && app.retry != d.AppRetryAfter) {
					fail("the application reported retry-after %v (%v), bucketctl said it would report %v (%v)",
						app.retry, app.reports, d.AppRetryAfter, d.AppReports)
				}
				if res.Allowed {
					continue
				}
				denied++
				switch wait := res.RetryAfter; {
				case wait < 0:
					if tc.cost <= tc.spec.Capacity {
						fail("never, for a cost within capacity")
					}
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					if o.run(t, c, key, tc.spec, tc.now+3600e6, tc.cost).allowed {
						fail("never, but the application allowed an hour later")
					}
				case wait == 0:
					fail("denied with retry-after 0")
				default:
					us := wait.Microseconds()
					if time.Duration(us)*time.Microsecond != wait || (tc.now+us)%o.layout.Step().Microseconds() != 0 {
						fail("retry-after %v does not end on one of the application's steps (%v)", wait, o.layout.Step())
					}
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					if !o.run(t, c, key, tc.spec, tc.now+us, tc.cost).allowed {
						fail("retry-after %v is not enough for the application", wait)
					}
					o.write(t, c, key, tc.spec, tc.stored, tc.exists)
					if o.run(t, c, key, tc.spec, tc.now+us-1, tc.cost).allowed {
						fail("retry-after %v is too long: the application allows 1µs earlier", wait)
					}
				}
			}
			if !covered() {
				t.Fatalf("seed %d: only %d states ahead and %d denials in %d: the corners are not covered", fidelitySeed, ahead, denied, 4*casesPerLayout)
			}
		})
	}
}

func serverMicros(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro()
}

// TestFidelitySpring: Spring reads Redis TIME in whole seconds, so its clock cannot be
// chosen. States are written relative to the server's second read just before; a case whose
// second turned while it ran is drawn again. Waiting is replaced by its exact equivalent
// for a whole-second algorithm: the stored time moved back by the whole seconds waited.
func TestFidelitySpring(t *testing.T) {
	fidelitySeed := cornerSeed(t) // a new one each run, logged; replay with BUCKETCTL_FIDELITY_SEED
	srv := redistest.Start(t)
	c := srv.Client(t)
	o := oracles(t)["spring"]
	r := rand.New(rand.NewSource(fidelitySeed))
	const key = "fid:spring"
	const sec = int64(1e6)
	// sameSecond runs fn and reports whether the server's second stayed the same throughout.
	sameSecond := func(fn func()) bool {
		before := serverMicros(t, c)
		fn()
		return floorDiv(before, sec) == floorDiv(serverMicros(t, c), sec)
	}
	// runShifted writes the case's state moved back by shift and runs the application.
	runShifted := func(tc fidelityCase, shift int64) (allowed, ok bool) {
		lv := tc.stored
		lv.TS -= shift
		o.write(t, c, key, tc.spec, lv, tc.exists)
		ok = sameSecond(func() { allowed = o.run(t, c, key, tc.spec, 0, tc.cost).allowed })
		return allowed, ok
	}
	redrawn, ahead, denied := 0, 0, 0
	for i := 0; i < casesPerLayout; {
		if redrawn > casesPerLayout {
			t.Fatalf("seed %d: %d cases redrawn: the server's second keeps turning", fidelitySeed, redrawn)
		}
		// Start a case no later than 950 ms into the server's second, so that one case (a
		// few round trips, slower under -race) rarely straddles a second's turn.
		for serverMicros(t, c)%sec > 950_000 {
		}
		tc := randomCase(r, o, serverMicros(t, c))
		tc.stored.TS += floorDiv(serverMicros(t, c), sec)*sec - floorDiv(tc.now, sec)*sec
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d case %d %+v: "+format, append([]any{fidelitySeed, i, tc}, args...)...)
		}
		o.write(t, c, key, tc.spec, tc.stored, tc.exists)
		var s bucket.State
		var app appRun
		if !sameSecond(func() {
			s = inspectAt(t, c, key, o, tc.spec, 0)
			app = o.run(t, c, key, tc.spec, 0, tc.cost)
		}) {
			redrawn++
			continue
		}
		tc.now = s.Now
		res, err := s.Peek(tc.cost)
		if err != nil {
			fail("peek: %v", err)
		}
		if s.Ahead > 0 {
			ahead++
		}
		if app.allowed != res.Allowed {
			fail("bucketctl allowed=%v (level %v), the application %v (level %v)", res.Allowed, s.Tokens, app.allowed, app.level)
		}
		if math.Abs(app.level-s.Tokens) > 0.01*tc.spec.Capacity {
			fail("level %v, the application saw %v", s.Tokens, app.level)
		}
		if !res.Allowed {
			denied++
			wait := res.RetryAfter.Microseconds()
			if res.RetryAfter < 0 {
				wait = -1
			}
			if wait == 0 || (wait < 0 && tc.cost <= tc.spec.Capacity) || (wait > 0 && (tc.now+wait)%sec != 0) {
				fail("retry-after %v: want the wait to a whole second of the server's clock", res.RetryAfter)
			}
			// The seconds waited: from this second to the one the wait ends in.
			k := floorDiv(tc.now+wait, sec) - floorDiv(tc.now, sec)
			if wait < 0 {
				k = 3600
			}
			got, ok1 := runShifted(tc, k*sec)
			before, ok2 := runShifted(tc, (k-1)*sec)
			if !ok1 || !ok2 {
				redrawn++
				continue
			}
			if got != (wait > 0) {
				fail("retry-after %v: after %d whole seconds the application allowed=%v", res.RetryAfter, k, got)
			}
			if wait > 0 && before {
				fail("retry-after %v is a second too long: the application allows after %d", res.RetryAfter, k-1)
			}
		}
		i++
	}
	if ahead < casesPerLayout/5 || denied < casesPerLayout/5 {
		t.Fatalf("seed %d: only %d states ahead and %d denials in %d", fidelitySeed, ahead, denied, casesPerLayout)
	}
}

// TestFidelityNativeServerTime: the native script on Redis TIME. The script's clock reads
// between the two server times taken around it; a case is compared when bucketctl decides
// alike at both (so the script must too), and the retry-after is enough: the state moved
// back by it is allowed.
func TestFidelityNativeServerTime(t *testing.T) {
	fidelitySeed := cornerSeed(t) // a new one each run, logged; replay with BUCKETCTL_FIDELITY_SEED
	srv := redistest.Start(t)
	c := srv.Client(t)
	o := oracles(t)["native"]
	o.args = func(k string, sp bucket.Spec, _ int64, cost float64) ([]string, []any) {
		return []string{k}, []any{num(sp.Capacity), num(sp.Rate), num(cost), "", "peek"}
	}
	r := rand.New(rand.NewSource(fidelitySeed))
	const key = "fid:native-time"
	compared := 0
	for i := 0; i < casesPerLayout; i++ {
		tc := randomCase(r, o, 0)
		tc.stored.TS += serverMicros(t, c) - tc.now
		o.write(t, c, key, tc.spec, tc.stored, tc.exists)
		s := inspectAt(t, c, key, o, tc.spec, 0)
		app := o.run(t, c, key, tc.spec, 0, tc.cost)
		after := serverMicros(t, c)
		res, _ := s.Peek(tc.cost)
		if o.layout.Decide(tc.spec, s.Stored, s.Exists, after, tc.cost).Allowed != res.Allowed {
			continue // the level crossed the cost while the case ran
		}
		compared++
		if app.allowed != res.Allowed {
			t.Fatalf("seed %d case %d %+v: bucketctl allowed=%v (level %v), the script %v", fidelitySeed, i, tc, res.Allowed, s.Tokens, app.allowed)
		}
		if !res.Allowed && res.RetryAfter > 0 {
			lv := tc.stored
			lv.TS -= res.RetryAfter.Microseconds()
			o.write(t, c, key, tc.spec, lv, true)
			if tc.exists && !o.run(t, c, key, tc.spec, 0, tc.cost).allowed {
				t.Fatalf("seed %d case %d %+v: retry-after %v is not enough", fidelitySeed, i, tc, res.RetryAfter)
			}
		}
	}
	if compared < casesPerLayout*9/10 {
		t.Fatalf("seed %d: only %d of %d cases compared", fidelitySeed, compared, casesPerLayout)
	}
}
