package httplimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
)

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
