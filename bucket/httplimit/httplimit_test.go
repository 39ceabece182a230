package httplimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// fakeClock is the clock of the Store (client-clock mode) and of the Limiter.
type fakeClock struct{ us atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.us.Store(1_800_000_000_123_456)
	return c
}
func (c *fakeClock) now() time.Time          { return time.UnixMicro(c.us.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.us.Add(d.Microseconds()) }

// recorder keeps what the Limiter's hooks report.
type recorder struct {
	mu          sync.Mutex
	decisions   []httplimit.Decision
	errs        []error
	transitions []string
}

func (r *recorder) hook(cfg *httplimit.Config) {
	cfg.OnDecision = func(_ *http.Request, d httplimit.Decision) {
		r.mu.Lock()
		r.decisions = append(r.decisions, d)
		r.mu.Unlock()
	}
	cfg.OnError = func(_ *http.Request, err error) {
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
	}
	cfg.OnBreaker = func(from, to httplimit.BreakerState) {
		r.mu.Lock()
		r.transitions = append(r.transitions, from.String()+">"+to.String())
		r.mu.Unlock()
	}
}

func (r *recorder) last() httplimit.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.decisions[len(r.decisions)-1]
}

func (r *recorder) counts() (errs int, transitions string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs), strings.Join(r.transitions, " ")
}

type env struct {
	srv    *redistest.Server
	rdb    *redis.Client
	calls  *redistest.Counter
	clock  *fakeClock
	store  *bucket.Store
	rec    *recorder
	lim    *httplimit.Limiter
	h      http.Handler
	served atomic.Int64 // requests that reached the application handler
}

// newEnv starts a redis-server and a Limiter over it, on a fake client clock.
func newEnv(t *testing.T, cfg httplimit.Config) *env {
	t.Helper()
	e := &env{srv: redistest.Start(t), calls: &redistest.Counter{}, clock: newFakeClock(), rec: &recorder{}}
	o := e.srv.Options()
	o.MaxRetries = -1
	o.DialTimeout = time.Second
	o.ContextTimeoutEnabled = true // Config.Timeout
	e.rdb = redis.NewClient(o)
	t.Cleanup(func() { _ = e.rdb.Close() })
	e.rdb.AddHook(e.calls)
	e.store = bucket.NewStore(e.rdb, bucket.WithClientClock(e.clock.now))
	cfg.Now = e.clock.now
	e.rec.hook(&cfg)
	lim, err := httplimit.New(e.store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.lim = lim
	e.h = lim.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.served.Add(1)
		_, _ = io.WriteString(w, "ok\n")
	}))
	return e
}

func (e *env) do(method, path, user string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	if user != "" {
		req.Header.Set("X-User", user)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return w
}

func ceilSec(d time.Duration) int64 { return int64(math.Ceil(d.Seconds())) }

// checkHeaders checks the rate-limit fields of a response against the Store's result.
func checkHeaders(t *testing.T, h http.Header, d httplimit.Decision, now time.Time) {
	t.Helper()
	var items []string
	for _, tr := range d.Result.Tiers {
		items = append(items, fmt.Sprintf(`"%s";r=%d;t=%d`, tr.Name, int64(math.Floor(tr.Remaining)), ceilSec(tr.ResetAfter)))
	}
	if got, want := h.Get("RateLimit"), strings.Join(items, ", "); got != want {
		t.Fatalf("RateLimit = %q, want %q", got, want)
	}
	// The legacy fields describe the tier closest to denying.
	b := d.Result.Tiers[0]
	for _, tr := range d.Result.Tiers[1:] {
		if d.Result.Allowed && math.Floor(tr.Remaining) < math.Floor(b.Remaining) || !d.Result.Allowed && tr.RetryAfter > b.RetryAfter {
			b = tr
		}
	}
	want := map[string]string{
		"X-RateLimit-Limit":     strconv.FormatFloat(b.Spec.Capacity, 'f', -1, 64),
		"X-RateLimit-Remaining": strconv.Itoa(int(math.Floor(b.Remaining))),
		"X-RateLimit-Reset":     strconv.FormatInt(int64(math.Ceil(float64(now.Add(b.ResetAfter).UnixMicro())/1e6)), 10),
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Fatalf("%s = %q, want %q (tier %s: %+v)", k, got, v, b.Name, b.Result)
		}
	}
}

// TestHeadersOnEveryResponse checks the fields of allowed and refused responses, over a
// real HTTP server, against the Store's result and the Redis hash.
func TestHeadersOnEveryResponse(t *testing.T) {
	routes, err := httplimit.NewRoutes(1, map[string]float64{"POST /reports": 2, "GET /items/{id}": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, httplimit.Config{
		Partition: httplimit.UserHeader("X-User"),
		Tiers: []httplimit.Tier{
			{Name: "user", Spec: bucket.Spec{Capacity: 4, Rate: 0.5}},
			{Name: "route", Spec: bucket.Spec{Capacity: 3, Rate: 0.25}, Scope: routes.Pattern, Cost: routes.Cost},
		},
		OnFailure: httplimit.FailClosed,
	})
	ts := httptest.NewServer(e.h)
	defer ts.Close()
	const policy = `"user";q=4;w=8, "route";q=3;w=12`

	type step struct {
		method, path string
		advance      time.Duration
		status       int
	}
	steps := []step{
		{"POST", "/reports", 0, 200},                      // user 3, route(POST /reports) 1
		{"POST", "/reports", 0, 429},                      // route lacks 2: denied by route
		{"GET", "/items/7", 0, 200},                       // user 2, route(GET /items/{id}) 2.5
		{"GET", "/items/8", 300 * time.Millisecond, 200},  // user 2.15 -> 1.15, route 2.575 -> 2.075
		{"GET", "/other", 0, 200},                         // user 0.15, route(*) 2
		{"GET", "/other", 0, 429},                         // user lacks 1: denied by user
		{"POST", "/reports", 4 * time.Second, 200},        // user 2.15 -> 1.15, route 2.075 -> 0.075
		{"GET", "/items/9", 1500 * time.Millisecond, 200}, // user 1.9 -> 0.9, route 3 -> 2.5
	}
	for i, s := range steps {
		e.clock.advance(s.advance)
		req, _ := http.NewRequest(s.method, ts.URL+s.path, nil)
		req.Header.Set("X-User", "alice")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.status {
			t.Fatalf("step %d %s %s: status %d, want %d (%s)", i, s.method, s.path, resp.StatusCode, s.status, body)
		}
		d := e.rec.last()
		if d.Source != httplimit.SourceRedis || d.Err != nil || d.Partition != "user:alice" {
			t.Fatalf("step %d: decision %+v", i, d)
		}
		if got := resp.Header.Get("RateLimit-Policy"); got != policy {
			t.Fatalf("step %d: RateLimit-Policy = %q, want %q", i, got, policy)
		}
		checkHeaders(t, resp.Header, d, e.clock.now())
		// The user tier's header agrees with what Redis stores.
		tok, err := e.rdb.HGet(context.Background(), "rl:{user:alice}:user", "tokens").Float64()
		if err != nil {
			t.Fatal(err)
		}
		if r := fmt.Sprintf(`"user";r=%d;`, int64(tok)); !strings.HasPrefix(resp.Header.Get("RateLimit"), r) {
			t.Fatalf("step %d: RateLimit %q, but Redis holds %v tokens for the user", i, resp.Header.Get("RateLimit"), tok)
		}
		if s.status == 429 {
			var p map[string]any
			if err := json.Unmarshal(body, &p); err != nil || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("step %d: 429 body %q (%s): %v", i, body, resp.Header.Get("Content-Type"), err)
			}
			by, _ := d.Result.DeniedBy()
			if vp, _ := p["violated-policies"].([]any); len(vp) != 1 || vp[0] != by.Name {
				t.Fatalf("step %d: violated-policies %v, want [%s]", i, p["violated-policies"], by.Name)
			}
			if ra := resp.Header.Get("Retry-After"); ra != strconv.FormatInt(ceilSec(d.Result.RetryAfter()), 10) || fmt.Sprint(p["retry-after"]) != ra {
				t.Fatalf("step %d: Retry-After %q, body %v, result wait %v", i, ra, p["retry-after"], d.Result.RetryAfter())
			}
		}
	}
	for _, k := range []string{"rl:{user:alice}:route:POST /reports", "rl:{user:alice}:route:GET /items/{id}", "rl:{user:alice}:route:*"} {
		if n, _ := e.rdb.Exists(context.Background(), k).Result(); n != 1 {
			t.Errorf("no bucket %q", k)
		}
	}
	if got := e.served.Load(); got != 6 {
		t.Fatalf("handler served %d requests, want 6", got)
	}
}

// TestRetryAfterNeverEarly checks Retry-After is the true wait rounded up: a retry after it
// succeeds, one a second earlier is still refused.
func TestRetryAfterNeverEarly(t *testing.T) {
	for _, rate := range []float64{0.3, 0.7, 2.5, 40} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			spec := bucket.Spec{Capacity: 2, Rate: rate}
			e := newEnv(t, httplimit.Config{
				Partition: httplimit.UserHeader("X-User"),
				Tiers:     []httplimit.Tier{{Name: "user", Spec: spec}},
				Cost:      func(*http.Request) float64 { return 1.5 },
				OnFailure: httplimit.FailOpen,
			})
			e.clock.advance(123 * time.Millisecond)
			if w := e.do("GET", "/", "bob"); w.Code != 200 {
				t.Fatalf("first request: %d", w.Code)
			}
			w := e.do("GET", "/", "bob")
			if w.Code != 429 {
				t.Fatalf("second request: %d, want 429", w.Code)
			}
			// 0.5 tokens left, 1.5 needed: the true wait is 1/rate seconds.
			trueWait := 1 / rate
			ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
			if err != nil || float64(ra) < trueWait || float64(ra) >= trueWait+1 {
				t.Fatalf("Retry-After %q for a true wait of %.3fs: want the wait rounded up", w.Header().Get("Retry-After"), trueWait)
			}
			if ra > 1 {
				e.clock.advance(time.Duration(ra-1) * time.Second)
				if w := e.do("GET", "/", "bob"); w.Code != 429 {
					t.Fatalf("retry 1 s before Retry-After: %d, want 429", w.Code)
				}
				e.clock.advance(time.Second)
			} else {
				e.clock.advance(time.Duration(ra) * time.Second)
			}
			if w := e.do("GET", "/", "bob"); w.Code != 200 {
				t.Fatalf("retry after Retry-After (%ds): %d, want 200", ra, w.Code)
			}
		})
	}
}

// TestFailurePolicies kills the redis-server and checks each policy answers as configured.
func TestFailurePolicies(t *testing.T) {
	spec := bucket.Spec{Capacity: 2, Rate: 0.1}
	cases := []struct {
		name   string
		policy httplimit.FailurePolicy
		closed int
		source httplimit.Source
		codes  []int // for three requests after the kill
		served int64
	}{
		{"open", httplimit.FailOpen, 0, httplimit.SourceFailOpen, []int{200, 200, 200}, 3},
		{"closed", httplimit.FailClosed, 0, httplimit.SourceFailClosed, []int{503, 503, 503}, 0},
		{"closed-429", httplimit.FailClosed, 429, httplimit.SourceFailClosed, []int{429, 429, 429}, 0},
		{"local", httplimit.FailLocal, 0, httplimit.SourceLocal, []int{200, 200, 429}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, httplimit.Config{
				Partition:    httplimit.UserHeader("X-User"),
				Tiers:        []httplimit.Tier{{Name: "user", Spec: spec}},
				OnFailure:    c.policy,
				ClosedStatus: c.closed,
				Breaker:      httplimit.Breaker{Threshold: 100},
			})
			// Redis decides while it is up: the user's bucket is drained there.
			for range 2 {
				e.do("GET", "/", "carol")
			}
			if w := e.do("GET", "/", "carol"); w.Code != 429 || e.rec.last().Source != httplimit.SourceRedis {
				t.Fatalf("with Redis up: %d from %v, want 429 from Redis", w.Code, e.rec.last().Source)
			}
			e.served.Store(0)
			e.srv.Kill()
			for i, want := range c.codes {
				w := e.do("GET", "/", "carol")
				d := e.rec.last()
				if w.Code != want || d.Source != c.source || d.Err == nil || errors.Is(d.Err, httplimit.ErrCircuitOpen) {
					t.Fatalf("request %d after the kill: %d from %v (err %v), want %d from %v with the Redis error", i, w.Code, d.Source, d.Err, want, c.source)
				}
				if w.Header().Get("RateLimit-Policy") != `"user";q=2;w=20` {
					t.Fatalf("RateLimit-Policy %q", w.Header().Get("RateLimit-Policy"))
				}
				hasRL := w.Header().Get("RateLimit") != ""
				if hasRL != (c.source == httplimit.SourceLocal) {
					t.Fatalf("RateLimit field %q: want it exactly when local buckets decide", w.Header().Get("RateLimit"))
				}
				switch {
				case c.source == httplimit.SourceLocal:
					checkHeaders(t, w.Header(), d, e.clock.now())
					if want == 429 && w.Header().Get("Retry-After") != "10" { // 1 token at 0.1/s
						t.Fatalf("local 429 Retry-After %q, want 10", w.Header().Get("Retry-After"))
					}
				case c.source == httplimit.SourceFailClosed:
					if ra, _ := strconv.Atoi(w.Header().Get("Retry-After")); ra < 1 || !strings.Contains(w.Body.String(), `"status":`+strconv.Itoa(want)) {
						t.Fatalf("closed: Retry-After %q body %s", w.Header().Get("Retry-After"), w.Body)
					}
				}
			}
			if got := e.served.Load(); got != c.served {
				t.Fatalf("handler served %d requests after the kill, want %d", got, c.served)
			}
			if n, _ := e.rec.counts(); n != 3 {
				t.Fatalf("OnError called %d times after the kill, want 3", n)
			}
		})
	}
}

// TestLocalShareHoldsACost: with Local.Scale 0.25 a tier of capacity 2 has a local share
// of 0.5, less than a request's cost of 2. While Redis is down such a request is still
// decided (allowed once, then 429 with a real Retry-After), not refused as one that can
// never be allowed.
func TestLocalShareHoldsACost(t *testing.T) {
	e := newEnv(t, httplimit.Config{
		Partition: httplimit.UserHeader("X-User"),
		Tiers:     []httplimit.Tier{{Name: "user", Spec: bucket.Spec{Capacity: 2, Rate: 0.1}}},
		Cost:      func(*http.Request) float64 { return 2 },
		OnFailure: httplimit.FailLocal,
		Local:     httplimit.Local{Scale: 0.25},
		Breaker:   httplimit.Breaker{Threshold: 100},
	})
	e.srv.Kill()
	if w := e.do("GET", "/", "dave"); w.Code != 200 || e.rec.last().Source != httplimit.SourceLocal {
		t.Fatalf("first request, Redis down: %d from %v, want 200 from the local share", w.Code, e.rec.last().Source)
	}
	w := e.do("GET", "/", "dave")
	// 2 tokens at 0.1 × 0.25 = 0.025 per second.
	if w.Code != 429 || w.Header().Get("Retry-After") != "80" || strings.Contains(w.Body.String(), "never") {
		t.Fatalf("second request: %d, Retry-After %q, body %s; want 429 after 80 s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
}

// TestBreakerOpensAndRecovers checks that after Threshold errors Redis is not called during
// the cool-down, that a failed probe opens the breaker again, and that a probe after a
// restart closes it.
func TestBreakerOpensAndRecovers(t *testing.T) {
	e := newEnv(t, httplimit.Config{
		Partition: httplimit.UserHeader("X-User"),
		Tiers:     []httplimit.Tier{{Name: "user", Spec: bucket.Spec{Capacity: 100, Rate: 1}}},
		OnFailure: httplimit.FailLocal,
		Breaker:   httplimit.Breaker{Threshold: 3, Cooldown: 30 * time.Second},
	})
	if w := e.do("GET", "/", "dave"); w.Code != 200 || e.rec.last().Source != httplimit.SourceRedis {
		t.Fatalf("with Redis up: %d from %v", w.Code, e.rec.last().Source)
	}
	e.srv.Kill()
	for i := range 3 {
		before := e.calls.Commands.Load()
		if w := e.do("GET", "/", "dave"); w.Code != 200 {
			t.Fatalf("failure %d: %d, want 200 from the local bucket", i, w.Code)
		}
		d := e.rec.last()
		if d.Source != httplimit.SourceLocal || errors.Is(d.Err, httplimit.ErrCircuitOpen) || e.calls.Commands.Load() == before {
			t.Fatalf("failure %d: %v (err %v), Redis calls %d -> %d: want a failed Redis call", i, d.Source, d.Err, before, e.calls.Commands.Load())
		}
	}
	if st := e.lim.BreakerState(); st != httplimit.Open {
		t.Fatalf("after 3 failures the breaker is %v, want open", st)
	}
	before := e.calls.Commands.Load()
	for i := range 10 {
		e.clock.advance(2 * time.Second) // 20 s of the 30 s cool-down
		w := e.do("GET", "/", "dave")
		if d := e.rec.last(); w.Code != 200 || d.Source != httplimit.SourceLocal || !errors.Is(d.Err, httplimit.ErrCircuitOpen) {
			t.Fatalf("cool-down request %d: %d from %v (err %v)", i, w.Code, d.Source, d.Err)
		}
	}
	if after := e.calls.Commands.Load(); after != before {
		t.Fatalf("Redis called %d times during the cool-down", after-before)
	}
	// The cool-down ends; the probe fails (Redis still down): open again.
	e.clock.advance(10 * time.Second)
	e.do("GET", "/", "dave")
	if e.calls.Commands.Load() == before || e.lim.BreakerState() != httplimit.Open {
		t.Fatalf("probe: calls %d -> %d, breaker %v: want one call and open again", before, e.calls.Commands.Load(), e.lim.BreakerState())
	}
	before = e.calls.Commands.Load()
	e.do("GET", "/", "dave")
	if e.calls.Commands.Load() != before {
		t.Fatal("Redis called right after a failed probe")
	}

	e.srv.Restart(t)
	e.clock.advance(30 * time.Second)
	w := e.do("GET", "/", "dave")
	if d := e.rec.last(); w.Code != 200 || d.Source != httplimit.SourceRedis || d.Err != nil {
		t.Fatalf("probe after the restart: %d from %v (err %v)", w.Code, d.Source, d.Err)
	}
	if st := e.lim.BreakerState(); st != httplimit.Closed {
		t.Fatalf("after a good probe the breaker is %v, want closed", st)
	}
	before = e.calls.Commands.Load()
	if e.do("GET", "/", "dave"); e.rec.last().Source != httplimit.SourceRedis || e.calls.Commands.Load() == before {
		t.Fatal("the closed breaker does not call Redis")
	}
	errs, transitions := e.rec.counts()
	if want := "closed>open open>half-open half-open>open open>half-open half-open>closed"; transitions != want {
		t.Fatalf("breaker transitions %q, want %q", transitions, want)
	}
	if errs != 4 { // three failures and the failed probe; never the skipped calls
		t.Fatalf("OnError called %d times, want 4", errs)
	}
}

// TestCallerErrorsDoNotOpenBreaker checks a key of another type answers 500 without
// counting as a Redis outage.
func TestCallerErrorsDoNotOpenBreaker(t *testing.T) {
	e := newEnv(t, httplimit.Config{
		Partition: httplimit.UserHeader("X-User"),
		Tiers:     []httplimit.Tier{{Name: "user", Spec: bucket.Spec{Capacity: 5, Rate: 1}}},
		OnFailure: httplimit.FailOpen,
		Breaker:   httplimit.Breaker{Threshold: 2},
	})
	if err := e.rdb.Set(context.Background(), "rl:{user:erin}:user", "not a bucket", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		w := e.do("GET", "/", "erin")
		d := e.rec.last()
		if w.Code != 500 || d.Source != httplimit.SourceRefused || !errors.Is(d.Err, bucket.ErrWrongType) {
			t.Fatalf("%d from %v (err %v), want 500 refused with ErrWrongType", w.Code, d.Source, d.Err)
		}
	}
	if st := e.lim.BreakerState(); st != httplimit.Closed {
		t.Fatalf("breaker %v after caller errors, want closed", st)
	}
	// A cost beyond capacity can never pass: 429 without Retry-After, Redis not called.
	before := e.calls.Commands.Load()
	big := httplimit.Config{
		Partition: httplimit.UserHeader("X-User"),
		Tiers:     []httplimit.Tier{{Name: "user", Spec: bucket.Spec{Capacity: 5, Rate: 1}, Cost: func(*http.Request) float64 { return 6 }}},
		OnFailure: httplimit.FailOpen,
	}
	lim, err := httplimit.New(e.store, big)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	lim.Handler(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 429 || w.Header().Get("Retry-After") != "" || !strings.Contains(w.Body.String(), "never") || e.calls.Commands.Load() != before {
		t.Fatalf("cost over capacity: %d, Retry-After %q, body %s, Redis calls %d", w.Code, w.Header().Get("Retry-After"), w.Body, e.calls.Commands.Load()-before)
	}
}

func TestNewValidates(t *testing.T) {
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ok := httplimit.Config{
		Partition: httplimit.ClientIP(),
		Tiers:     []httplimit.Tier{{Name: "ip", Spec: bucket.Spec{Capacity: 10, Rate: 1}}},
		OnFailure: httplimit.FailClosed,
	}
	if _, err := httplimit.New(st, ok); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for name, mut := range map[string]func(*httplimit.Config){
		"no failure policy": func(c *httplimit.Config) { c.OnFailure = 0 },
		"no partition":      func(c *httplimit.Config) { c.Partition = nil },
		"no tiers":          func(c *httplimit.Config) { c.Tiers = nil },
		"bad name": func(c *httplimit.Config) {
			c.Tiers = []httplimit.Tier{{Name: `a"b`, Spec: bucket.Spec{Capacity: 1, Rate: 1}}}
		},
		"bad spec": func(c *httplimit.Config) { c.Tiers = []httplimit.Tier{{Name: "a", Spec: bucket.Spec{Capacity: 1}}} },
		"duplicate names": func(c *httplimit.Config) {
			c.Tiers = append(c.Tiers, c.Tiers[0])
		},
		"closed status 500": func(c *httplimit.Config) { c.ClosedStatus = 500 },
		"negative scale":    func(c *httplimit.Config) { c.Local.Scale = -1 },
		"negative timeout":  func(c *httplimit.Config) { c.Timeout = -time.Second },
		"brace in prefix":   func(c *httplimit.Config) { c.Prefix = "app{x}:" },
	} {
		c := ok
		mut(&c)
		if _, err := httplimit.New(st, c); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := httplimit.New(nil, ok); err == nil {
		t.Error("New accepted a nil Store")
	}
}

// TestTimeoutAndAnonymous checks a Redis call slower than Timeout counts as a failure and
// the failure policy answers, and that a request without identity is charged to the shared
// "anonymous" partition.
func TestTimeoutAndAnonymous(t *testing.T) {
	e := newEnv(t, httplimit.Config{
		Partition: httplimit.UserHeader("X-User"),
		Tiers:     []httplimit.Tier{{Name: "user", Spec: bucket.Spec{Capacity: 5, Rate: 1}}},
		OnFailure: httplimit.FailOpen,
		Timeout:   100 * time.Millisecond,
	})
	if w := e.do("GET", "/", ""); w.Code != 200 || e.rec.last().Partition != "anonymous" {
		t.Fatalf("anonymous request: %d, partition %q", w.Code, e.rec.last().Partition)
	}
	if n, _ := e.rdb.Exists(context.Background(), "rl:{anonymous}:user").Result(); n != 1 {
		t.Fatal("no bucket rl:{anonymous}:user")
	}

	// A second connection blocks the server for a second.
	admin := e.srv.Client(t)
	slept := make(chan error, 1)
	go func() { slept <- admin.Do(context.Background(), "DEBUG", "SLEEP", "1").Err() }()
	time.Sleep(200 * time.Millisecond) // let DEBUG SLEEP reach the server first
	start := time.Now()
	w := e.do("GET", "/", "frank")
	took := time.Since(start)
	d := e.rec.last()
	if w.Code != 200 || d.Source != httplimit.SourceFailOpen || d.Err == nil {
		t.Fatalf("slow Redis: %d from %v (err %v), want fail-open with the timeout", w.Code, d.Source, d.Err)
	}
	if took >= 900*time.Millisecond {
		t.Fatalf("the request waited %v for a server blocked 1 s: Timeout not applied", took)
	}
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	if n, _ := e.rec.counts(); n != 1 {
		t.Fatalf("OnError called %d times, want 1", n)
	}
}
