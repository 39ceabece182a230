package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
	"github.com/bucketctl/bucketctl/bucket/sandbox"
)

// A limiter with a user tier of 3 tokens refilled at one token every 10 s. The fixed
// clock (client-clock mode) only keeps the printed numbers exact: a real deployment leaves
// the Store on Redis time and the Limiter on time.Now.
func Example() {
	ctx := context.Background()
	sb, err := sandbox.Start(ctx, sandbox.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	rdb := redis.NewClient(&redis.Options{Addr: sb.Addr(), MaxRetries: -1})
	defer rdb.Close()

	now := func() time.Time { return time.Unix(1_800_000_000, 0) }
	lim, err := httplimit.New(bucket.NewStore(rdb, bucket.WithClientClock(now)), httplimit.Config{
		Partition: httplimit.FirstOf(httplimit.UserHeader("X-User-ID"), httplimit.ClientIP()),
		Tiers:     []httplimit.Tier{{Name: "user", Spec: bucket.Spec{Capacity: 3, Rate: 0.1}}},
		OnFailure: httplimit.FailLocal,
		Breaker:   httplimit.Breaker{Threshold: 5, Cooldown: 10 * time.Second},
		Now:       now,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	h := lim.Handler(app)

	for i := range 4 {
		req := httptest.NewRequest("GET", "/hello", nil)
		req.Header.Set("X-User-ID", "42")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if i == 0 {
			fmt.Println("RateLimit-Policy:", w.Header().Get("RateLimit-Policy"))
		}
		line := fmt.Sprintf("%d RateLimit: %s", w.Code, w.Header().Get("RateLimit"))
		if ra := w.Header().Get("Retry-After"); ra != "" {
			line += " Retry-After: " + ra
		}
		fmt.Println(line)
	}
	fmt.Println(rdb.Exists(ctx, "rl:{user:42}:user").Val(), "bucket: rl:{user:42}:user")
	// Output:
	// RateLimit-Policy: "user";q=3;w=30
	// 200 RateLimit: "user";r=2;t=10
	// 200 RateLimit: "user";r=1;t=20
	// 200 RateLimit: "user";r=0;t=30
	// 429 RateLimit: "user";r=0;t=30 Retry-After: 10
	// 1 bucket: rl:{user:42}:user
}

// Behind a load balancer at 10.0.0.0/8, the client is the first untrusted address from the
// right of X-Forwarded-For; whatever the client wrote further left is ignored.
func ExampleClientIP() {
	key := httplimit.ClientIP(netip.MustParsePrefix("10.0.0.0/8"))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000"
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 198.51.100.23, 10.9.8.7")
	fmt.Println(key(r))
	// Output: ip:198.51.100.23 true
}

// A route table of costs, matched like http.ServeMux patterns.
func ExampleNewRoutes() {
	routes, err := httplimit.NewRoutes(1, map[string]float64{
		"POST /reports":   10,
		"GET /items/{id}": 0.5,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, target := range []string{"/reports", "/items/7", "/health"} {
		method := "GET"
		if target == "/reports" {
			method = "POST"
		}
		r := httptest.NewRequest(method, target, nil)
		fmt.Printf("%s %s: cost %g, scope %q\n", method, target, routes.Cost(r), routes.Pattern(r))
	}
	// Output:
	// POST /reports: cost 10, scope "POST /reports"
	// GET /items/7: cost 0.5, scope "GET /items/{id}"
	// GET /health: cost 1, scope "*"
}
