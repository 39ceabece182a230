package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// hammerKeys writes, until the test ends: a native bucket hot (denying: capacity 5 at
// 1/s), a webman bucket web, and a counter (not a bucket) as fast as they go.
func hammerKeys(t *testing.T, c bucket.Client, hot, web, counter string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	st := bucket.NewStore(c)
	var webman apptest.App
	for _, a := range apptest.Apps {
		if a.Layout == "webman" {
			webman = a
		}
	}
	loops := []func() error{
		func() error { _, err := st.Take(ctx, hot, bucket.Spec{Capacity: 5, Rate: 1}, 1); return err },
		func() error { _, err := webman.Decide(ctx, c, web, 1e5, 1e5, time.Now()); return err },
		func() error { return c.Incr(ctx, counter).Err() },
	}
	for _, fn := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := fn(); err != nil && ctx.Err() == nil {
					t.Errorf("hammer: %v", err)
					return
				}
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func hotViews(t *testing.T, r result) []output.HotView {
	t.Helper()
	if r.code != ExitOK {
		t.Fatalf("list --hot: exit %d: %s", r.code, r.errOut)
	}
	var views []output.HotView
	if err := json.Unmarshal([]byte(r.out), &views); err != nil {
		t.Fatalf("list --hot -o json: %v\n%s", err, r.out)
	}
	return views
}

func checkHotViews(t *testing.T, views []output.HotView, hot, web string) {
	t.Helper()
	if len(views) < 2 {
		t.Fatalf("want the two hammered buckets, got %+v", views)
	}
	got := map[string]output.HotView{views[0].Key: views[0], views[1].Key: views[1]}
	h, okH := got[hot]
	w, okW := got[web]
	if !okH || !okW {
		t.Fatalf("want %s and %s first, got %+v", hot, web, views)
	}
	if h.Layout != "native" || h.RateFrom != "counters" || h.DecisionsPerSec <= 0 || h.DeniedPerSec == nil || *h.DeniedPerSec <= 0 {
		t.Errorf("native bucket: %+v", h)
	}
	if w.Layout != "webman" || w.RateFrom != "writes" || w.DeniedPerSec != nil || w.WritesSeen <= 0 {
		t.Errorf("webman bucket: %+v", w)
	}
	for _, v := range views {
		if v.RankedBy != "client-tracking" || v.Problem != "" {
			t.Errorf("row %+v", v)
		}
	}
}

// TestListHot: list --hot finds the hammered buckets, leaves the hammered counter out, and
// neither changes the server's configuration nor uses MONITOR or CONFIG.
func TestListHot(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	hammerKeys(t, c, "rl:hot", "rl:web", "views")
	before, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := redistest.CommandCalls(t, c)

	r := run(t, srv.URL(), "list", "--hot", "--for", "600ms", "-o", "json")
	views := hotViews(t, r)
	checkHotViews(t, views, "rl:hot", "rl:web")
	for _, v := range views {
		if v.Key == "views" {
			t.Errorf("a counter is not a bucket: %+v", v)
		}
	}
	if !strings.Contains(r.errOut, "client-tracking") {
		t.Errorf("stderr should say what ranked: %q", r.errOut)
	}

	after := redistest.CommandCalls(t, c)
	for _, name := range []string{"monitor", "config|set", "config|resetstat", "config|rewrite"} {
		if after[name] != calls[name] {
			t.Errorf("%s was called", name)
		}
	}
	now, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if now[k] != v {
			t.Errorf("config %s changed: %q -> %q", k, v, now[k])
		}
	}

	// --match narrows what is followed (PREFIX) and listed; the table names the columns.
	r = run(t, srv.URL(), "list", "--hot", "--for", "300ms", "--match", "rl:w*")
	if r.code != ExitOK || !strings.Contains(r.out, "DECISIONS/s") || !strings.Contains(r.out, "rl:web") || strings.Contains(r.out, "rl:hot") {
		t.Errorf("list --hot --match 'rl:w*': exit %d\n%s%s", r.code, r.out, r.errOut)
	}
}

func TestListHotCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client(t)
	hot := cl.KeyOnMaster(1, "rl:hot:")
	web := "{" + cl.KeyOnMaster(2, "rl:web:") + "}"
	hammerKeys(t, c, hot, web, cl.KeyOnMaster(0, "views:"))
	r := run(t, "", "--cluster", strings.Join(cl.Addrs(), ","), "list", "--hot", "--for", "700ms", "-o", "json")
	checkHotViews(t, hotViews(t, r), hot, web)
	if !strings.Contains(r.errOut, "3 masters") {
		t.Errorf("stderr should say 3 masters were followed: %q", r.errOut)
	}
}

func TestListHotRefusals(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACL("ops on >ops-pass ~* +@read +evalsha +eval +time +ping +hello",
		"hot >hot-pass "+aclReadOnly+" +client|id +client|tracking +subscribe &__redis__:invalidate"))
	setEnv(t, "REDISCLI_AUTH", "ops-pass")
	r := run(t, srv.URL(), "--user", "ops", "list", "--hot", "--for", "200ms")
	if r.code != ExitError {
		t.Fatalf("exit %d, want %d: %s", r.code, ExitError, r.errOut)
	}
	oneLine(t, r)
	if !strings.Contains(r.errOut, "+client|tracking") || !strings.Contains(r.errOut, "bucketctl top") {
		t.Errorf("the line should say what to grant and what to use instead: %q", r.errOut)
	}
	// The read-only user with the grants 'bucketctl help cluster' names follows writes.
	setEnv(t, "REDISCLI_AUTH", "hot-pass")
	if r := run(t, srv.URL(), "--user", "hot", "list", "--hot", "--for", "200ms"); r.code != ExitOK {
		t.Errorf("read-only user with the client tracking grants: exit %d %s", r.code, r.errOut)
	}
	for _, args := range [][]string{
		{"list", "--for", "2s"},
		{"list", "--hot", "--all"},
		{"list", "--hot", "--for", "10ms"},
	} {
		r := run(t, srv.URL(), args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, ExitUsage, r.errOut)
		}
		oneLine(t, r)
	}
}
