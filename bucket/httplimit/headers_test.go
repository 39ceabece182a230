package httplimit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
)

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
		n, problem := bucket.DecodeNative(e.rdb.Get(context.Background(), "rl:{user:alice}:user").Val())
		if problem != "" {
			t.Fatal(problem)
		}
		tok := n.Tokens
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
