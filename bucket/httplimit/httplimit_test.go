package httplimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

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
	awake := redistest.Stall(t, e.srv.Addr(), "1")
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
	awake()
	if n, _ := e.rec.counts(); n != 1 {
		t.Fatalf("OnError called %d times, want 1", n)
	}
}
