package httplimit_test

import (
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
