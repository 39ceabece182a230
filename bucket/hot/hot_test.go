package hot_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// hammer runs fn in a loop until the test ends, and waits for it then.
func hammer(t *testing.T, fn func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("hammer: %v", err)
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func webman(t *testing.T) apptest.App {
	for _, a := range apptest.Apps {
		if a.Layout == "webman" {
			return a
		}
	}
	t.Fatal("no webman app")
	return apptest.App{}
}

// hotKeyspace writes cold buckets and hammers: a native bucket (hotKey), a webman bucket
// (webKey and its :last_time), a counter and an application hash that are not buckets.
func hotKeyspace(t *testing.T, c bucket.Client, hotKey, webKey, counter, session string) {
	ctx := context.Background()
	st := bucket.NewStore(c)
	spec := bucket.Spec{Capacity: 5, Rate: 1}
	for _, k := range []string{"rl:cold:1", "rl:cold:2"} {
		if _, err := st.Take(ctx, k, spec, 1); err != nil {
			t.Fatal(err)
		}
	}
	web := webman(t)
	hammer(t, func(ctx context.Context) error { _, err := st.Take(ctx, hotKey, spec, 1); return err })
	hammer(t, func(ctx context.Context) error {
		_, err := web.Decide(ctx, c, webKey, 1e5, 1e5, time.Now())
		return err
	})
	hammer(t, func(ctx context.Context) error { return c.Incr(ctx, counter).Err() })
	hammer(t, func(ctx context.Context) error {
		return c.HSet(ctx, session, "user", "42", "seen", time.Now().UnixNano()).Err()
	})
}

func checkHot(t *testing.T, rep hot.Report, hotKey, webKey string) {
	t.Helper()
	if rep.Source != hot.SourceTracking {
		t.Errorf("source %q", rep.Source)
	}
	pos := map[string]int{}
	for i, b := range rep.Buckets {
		pos[b.State.Key] = i + 1
		if b.State.Problem != "" || !b.State.Exists {
			t.Errorf("%s listed but not a bucket: %q", b.State.Key, b.State.Problem)
		}
	}
	if pos[hotKey] == 0 || pos[hotKey] > 2 || pos[webKey] == 0 || pos[webKey] > 2 {
		t.Fatalf("want %s and %s first, got %+v", hotKey, webKey, rep.Buckets)
	}
	for _, b := range rep.Buckets {
		switch b.State.Key {
		case hotKey:
			if !b.Counted || b.PerSecond <= 0 || b.DeniedPerSecond <= 0 || b.State.Layout.Name != "native" {
				t.Errorf("hot native bucket: %+v", b)
			}
		case webKey:
			if b.Writes <= 0 || b.State.Layout.Name != "webman" || b.Counted {
				t.Errorf("webman bucket: %+v", b)
			}
		case "rl:cold:1", "rl:cold:2":
			t.Errorf("%s was not written during the observation, listed: %+v", b.State.Key, b)
		}
	}
	if rep.NotBuckets < 2 {
		t.Errorf("the counter and the hash should have been read and left out: %d", rep.NotBuckets)
	}
}

func TestHotBucketsStandalone(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	hotKeyspace(t, c, "rl:hot", "rl:web", "page:views", "session:9")
	st := bucket.NewStore(c)
	rep, err := hot.Buckets(context.Background(), st, hot.Query{For: 600 * time.Millisecond, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkHot(t, rep, "rl:hot", "rl:web")
	if rep.Masters != 1 || rep.Messages == 0 {
		t.Errorf("masters %d, messages %d", rep.Masters, rep.Messages)
	}
	// Tracking ends with the observation: no client is left tracking.
	redistest.WaitFor(t, 3*time.Second, "tracking to end", func() bool {
		list, err := c.ClientList(context.Background()).Result()
		return err == nil && !containsFlag(list, "t")
	})
}

// containsFlag says a CLIENT LIST line has flag in its flags field.
func containsFlag(list, flag string) bool {
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(v, flag) {
				return true
			}
		}
	}
	return false
}

func TestHotBucketsPrefixes(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	hotKeyspace(t, c, "rl:hot", "rl:web", "page:views", "session:9")
	st := bucket.NewStore(c)
	rep, err := hot.Buckets(context.Background(), st, hot.Query{For: 600 * time.Millisecond, Limit: 5,
		Options: hot.Options{Prefixes: []string{"rl:"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Buckets) != 2 || rep.NotBuckets != 0 {
		t.Fatalf("only the two rl: buckets are written under the prefix: %+v (not buckets %d)", rep.Buckets, rep.NotBuckets)
	}
}

func TestHotBucketsCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client(t)
	hotKey := cl.KeyOnMaster(0, "rl:hot:")
	web := "{" + cl.KeyOnMaster(2, "rl:web:") + "}"
	hotKeyspace(t, c, hotKey, web, cl.KeyOnMaster(1, "views:"), cl.KeyOnMaster(2, "session:"))
	st := bucket.NewStore(c)
	rep, err := hot.Buckets(context.Background(), st, hot.Query{For: 700 * time.Millisecond, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Masters != 3 {
		t.Errorf("masters %d, want 3", rep.Masters)
	}
	checkHot(t, rep, hotKey, web)
}

func TestHotBucketsNoPermission(t *testing.T) {
	srv := redistest.Start(t, redistest.WithACL("ops on >ops-pass ~* +@read +evalsha +eval +time +ping +hello"))
	opt := srv.Options()
	opt.Username, opt.Password = "ops", "ops-pass"
	c := redis.NewClient(opt)
	defer c.Close()
	_, err := hot.Buckets(context.Background(), bucket.NewStore(c), hot.Query{For: 200 * time.Millisecond})
	var he *hot.UnsupportedError
	if !errors.As(err, &he) || !he.NoPerm {
		t.Fatalf("want a HotUnsupportedError (NOPERM), got %v", err)
	}
	if msg := err.Error(); !containsAll(msg, srv.Addr(), "+client|tracking", "bucketctl top") {
		t.Errorf("message %q should name the server, the grant and what to use instead", msg)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestUnsupportedReasonForTop: top goes on without hot buckets and says why in its own
// terms; the command-line error names top as the way to go on, the view does not.
func TestUnsupportedReasonForTop(t *testing.T) {
	for _, e := range []*hot.UnsupportedError{
		{Addr: "127.0.0.1:6379", Err: errors.New("ERR unknown subcommand 'TRACKING'")},
		{Addr: "127.0.0.1:6379", NoPerm: true, Err: errors.New("NOPERM this user has no permissions to run the 'client|tracking' command")},
	} {
		if r := e.Reason(); strings.Contains(r, "bucketctl top") || !strings.Contains(r, "rows come from the scan") {
			t.Errorf("Reason() = %q", r)
		}
		if !strings.Contains(e.Error(), "bucketctl top") {
			t.Errorf("Error() = %q: the command line should be told to use top", e.Error())
		}
	}
}
