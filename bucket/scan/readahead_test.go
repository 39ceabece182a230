package scan_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/bucket/slot"
	"github.com/bucketctl/bucketctl/scripts"
)

// seedMixed writes n keys under prefix: native buckets and express hashes in runs of run,
// so that a page is mostly native or mostly not, and a key that is no bucket every 7th.
func seedMixed(t *testing.T, c redis.Cmdable, prefix string, n, run int) {
	t.Helper()
	ctx := context.Background()
	now := float64(time.Now().UnixMicro())
	pipe := c.Pipeline()
	for i := range n {
		k := fmt.Sprintf("%s%05d", prefix, i)
		switch {
		case i%7 == 3:
			pipe.RPush(ctx, k, "x")
		case (i/run)%2 == 0:
			pipe.Set(ctx, k, bucket.EncodeNative(bucket.NativeValues{Tokens: 3, TS: now, Capacity: 10, Rate: 1}), time.Hour)
		default:
			pipe.HSet(ctx, k, "tokens", "2", "last_refill", "1700000000")
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// walk reads every page with Next, as the sequential scan does.
func walk(t *testing.T, st *bucket.Store, o scan.Options) ([]string, scan.Stats) {
	t.Helper()
	ctx := context.Background()
	sc, err := scan.New(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for {
		page, err := sc.Next(ctx)
		if errors.Is(err, scan.ErrEnd) {
			return keys, sc.Stats()
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			keys = append(keys, s.Key)
		}
	}
}

func ahead(t *testing.T, st *bucket.Store, o scan.Options) ([]string, scan.Stats) {
	t.Helper()
	var keys []string
	stats, err := scan.States(context.Background(), st, o, func(page []bucket.State) error {
		for _, s := range page {
			keys = append(keys, s.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, stats
}

func sameWalk(t *testing.T, what string, a []string, as scan.Stats, w []string, ws scan.Stats) {
	t.Helper()
	if len(a) == 0 || !slices.Equal(a, w) {
		t.Errorf("%s: read ahead %d keys, walked %d, same order: %v", what, len(a), len(w), slices.Equal(a, w))
	}
	as.DBSize, ws.DBSize = 0, 0
	if as != ws || !as.Done {
		t.Errorf("%s: read ahead %+v\n walked %+v", what, as, ws)
	}
}

// TestReadAheadMixedKeyspaceSameWalk: on a keyspace of native buckets and other keys, an
// unlimited States hands on the same keys in the same order, with the same stats (commands
// and round trips too), as the walk with Next; standalone and on a Cluster of 3 masters.
func TestReadAheadMixedKeyspaceSameWalk(t *testing.T) {
	t.Parallel()
	o := scan.Options{Match: "m:*", Count: 40}
	check := func(what string, c redis.UniversalClient) {
		seedMixed(t, c, "m:", 1500, 60)
		// Each walk with a Store of its own, the read script loaded first.
		if err := c.ScriptLoad(context.Background(), scripts.Read).Err(); err != nil {
			t.Fatal(err)
		}
		a, w := bucket.NewStore(c), bucket.NewStore(c)
		ak, as := ahead(t, a, o)
		wk, ws := walk(t, w, o)
		sameWalk(t, what, ak, as, wk, ws)
	}
	check("standalone", redistest.Start(t).Client(t))
	check("cluster", redistest.StartCluster(t, 3, 0).Client(t))
}

// scanGoroutines are the goroutines of a scan still running.
func scanGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "bucket/scan.(*Scanner)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func noScanLeft(t *testing.T) {
	t.Helper()
	redistest.WaitFor(t, 5*time.Second, "the scan's goroutines to end", func() bool { return scanGoroutines() == "" })
}

// TestReadAheadEndsItsGoroutines: States that stops (ErrStop, an error of fn, a cancelled
// context, a dropped connection) leaves no goroutine of its scan running, and hands on a
// prefix of the walk's keys, none skipped. Not parallel: it counts the package's goroutines.
func TestReadAheadEndsItsGoroutines(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedMixed(t, c, "g:", 3000, 100)
	o := scan.Options{Match: "g:*", Count: 50}
	want, _ := walk(t, bucket.NewStore(c), o)
	noScanLeft(t)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		stop func(page int, cancel func()) error
		want error
	}{
		{"ErrStop", func(p int, _ func()) error {
			if p == 3 {
				return scan.ErrStop
			}
			return nil
		}, nil},
		{"fn error", func(p int, _ func()) error {
			if p == 3 {
				return boom
			}
			return nil
		}, boom},
		{"cancel", func(p int, cancel func()) error {
			if p == 3 {
				cancel()
			}
			return nil
		}, context.Canceled},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var got []string
		n := 0
		_, err := scan.States(ctx, bucket.NewStore(c), o, func(page []bucket.State) error {
			n++
			for _, s := range page {
				got = append(got, s.Key)
			}
			return tc.stop(n, cancel)
		})
		cancel()
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: States returned %v, want %v", tc.name, err, tc.want)
		}
		if n != 3 || len(got) == 0 || !slices.Equal(got, want[:len(got)]) {
			t.Errorf("%s: %d pages, %d keys handed on, a prefix of the walk: %v", tc.name, n, len(got), slices.Equal(got, want[:min(len(got), len(want))]))
		}
		noScanLeft(t)
	}
	for _, match := range []string{"evalsha_ro", "scan"} {
		p := redistest.StartProxy(t, srv.Addr())
		p.Arm(redistest.Rule{Match: match, Skip: 4, Fault: redistest.Drop})
		pc := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 5 * time.Second})
		var got []string
		stats, err := scan.States(context.Background(), bucket.NewStore(pc), o, func(page []bucket.State) error {
			for _, s := range page {
				got = append(got, s.Key)
			}
			return nil
		})
		if err == nil || !p.Fired() || stats.Done {
			t.Errorf("%s dropped: States returned %v (fired %v), stats %+v", match, err, p.Fired(), stats)
		}
		if !slices.Equal(got, want[:min(len(got), len(want))]) || len(got) >= len(want) {
			t.Errorf("%s dropped: %d keys handed on, not a prefix of the walk's %d", match, len(got), len(want))
		}
		noScanLeft(t)
		_ = pc.Close()
	}
}

// TestReadAheadHeldReplyTimesOut: a read whose reply never comes fails the scan at the
// client's read timeout, though the other reader's page came back.
func TestReadAheadHeldReplyTimesOut(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedMixed(t, c, "h:", 2000, 2000)
	o := scan.Options{Match: "h:*", Count: 50}
	for _, match := range []string{"getrange", "scan"} {
		p := redistest.StartProxy(t, srv.Addr())
		p.Arm(redistest.Rule{Match: match, Skip: 3, Fault: redistest.Hold})
		pc := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
		_, err := scan.States(context.Background(), bucket.NewStore(pc), o, func([]bucket.State) error { return nil })
		if err == nil || !p.Fired() {
			t.Errorf("%s held: States returned %v (fired %v)", match, err, p.Fired())
		}
		p.Release()
		noScanLeft(t)
		_ = pc.Close()
	}
}

// TestReadAheadSlotMovesMidScan: a slot that moves to another master while an unlimited
// States reads a Cluster (its reads then meet MOVED) fails nothing and hands on every key
// outside that slot once.
func TestReadAheadSlotMovesMidScan(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client(t)
	ctx := context.Background()
	seedMixed(t, c, "k:", 900, 30)
	var moving []string
	for i := range 300 {
		k := fmt.Sprintf("{mv}:%03d", i)
		moving = append(moving, k)
		if err := c.HSet(ctx, k, "tokens", 3, "last_refill", "1700000000.5").Err(); err != nil {
			t.Fatal(err)
		}
	}
	seen, pages := map[string]int{}, 0
	stats, err := scan.States(ctx, bucket.NewStore(c), scan.Options{Match: "*", Count: 20}, func(page []bucket.State) error {
		if pages++; pages == 1 {
			cl.MoveSlot(t, slot.Of("{mv}"), moving)
		}
		for _, st := range page {
			seen[st.Key]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	moved, handed := 0, 0
	for k, n := range seen {
		handed += n
		if strings.HasPrefix(k, "{mv}") {
			moved++ // SCAN may return it on both masters
		} else if n != 1 {
			t.Errorf("%s handed on %d times", k, n)
		}
	}
	if len(seen)-moved != 900 || stats.Buckets+stats.Other != int64(handed) || pages < 20 {
		t.Errorf("%d keys outside the slot (want 900), %d of it, %d pages, stats %+v", len(seen)-moved, moved, pages, stats)
	}
	t.Logf("%d of the moving slot's %d keys read, %d pages", moved, len(moving), pages)
}

// TestReadAheadWithoutGetrangeSameWalk: for a user whose ACL refuses GETRANGE, an unlimited
// States sends the same commands as the walk with Next (as many refused native reads).
func TestReadAheadWithoutGetrangeSameWalk(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	seedMixed(t, admin, "m:", 1500, 1500)
	if err := admin.ScriptLoad(ctx, scripts.Read).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "ro", "on", ">pw", "resetchannels", "%R~*", "-@all",
		"+ping", "+type", "+pttl", "+hgetall", "+get", "+time", "+scan", "+evalsha_ro", "+eval_ro", "+hlen", "+strlen").Err(); err != nil {
		t.Fatal(err)
	}
	o := srv.Options()
	o.Username, o.Password = "ro", "pw"
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	so := scan.Options{Match: "m:*", Count: 40}
	for range 4 { // the reads' timing varies: each pass must send what the walk sends
		ak, as := ahead(t, bucket.NewStore(c), so)
		wk, ws := walk(t, bucket.NewStore(c), so)
		sameWalk(t, "without GETRANGE", ak, as, wk, ws)
		if as.Buckets != 1286 {
			t.Errorf("%d buckets, want 1286", as.Buckets)
		}
	}
}

// TestReadAheadScriptNotLoadedSameWalk: on a server that has not loaded the read script (a
// restart), an unlimited States pays its NOSCRIPT once, as the walk with Next does.
func TestReadAheadScriptNotLoadedSameWalk(t *testing.T) {
	t.Parallel()
	o := scan.Options{Match: "m:*", Count: 40}
	check := func(what string, c redis.UniversalClient) {
		ctx := context.Background()
		seedMixed(t, c, "m:", 600, 600)
		flush := func() {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 { // the reads' timing varies: each pass must send what the walk sends
			flush()
			ak, as := ahead(t, bucket.NewStore(c), o)
			flush()
			wk, ws := walk(t, bucket.NewStore(c), o)
			sameWalk(t, what, ak, as, wk, ws)
		}
	}
	check("standalone", redistest.Start(t).Client(t))
	check("cluster", redistest.StartCluster(t, 3, 0).Client(t))
}

// TestReadAheadEmptyPagesKeepTheNativeHint: a selective pattern over native buckets, whose
// SCAN pages are often empty, still reads them with GETRANGE: an empty page leaves the
// hint of the pages before it.
func TestReadAheadEmptyPagesKeepTheNativeHint(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now := float64(time.Now().UnixMicro())
	pipe := c.Pipeline()
	for i := range 3000 {
		if i%10 == 0 {
			pipe.Set(ctx, fmt.Sprintf("n:%04d", i), bucket.EncodeNative(bucket.NativeValues{Tokens: 3, TS: now, Capacity: 10, Rate: 1}), time.Hour)
		} else {
			pipe.Set(ctx, fmt.Sprintf("o:%04d", i), "x", time.Hour)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := scan.Options{Match: "n:*", Count: 10, MaxCount: 10}
	for _, read := range []func(*bucket.Store) ([]string, scan.Stats){
		func(st *bucket.Store) ([]string, scan.Stats) { return ahead(t, st, o) },
		func(st *bucket.Store) ([]string, scan.Stats) { return walk(t, st, o) },
	} {
		before := redistest.CommandCalls(t, c)
		keys, stats := read(bucket.NewStore(c))
		after := redistest.CommandCalls(t, c)
		gets, scripts := after["getrange"]-before["getrange"], after["evalsha_ro"]-before["evalsha_ro"]
		if len(keys) != 300 || gets < 250 || stats.Pages < 250 {
			t.Errorf("%d keys in %d pages: %d GETRANGE and %d read scripts, want most read with GETRANGE", len(keys), stats.Pages, gets, scripts)
		}
	}
}

// TestReadAheadCancelWhileAReadHangs: a context cancelled while a read's reply never comes
// (no read timeout) ends States at once with the cancellation; the scan's goroutines end
// once the reply comes. Not parallel: it counts the package's goroutines.
func TestReadAheadCancelWhileAReadHangs(t *testing.T) {
	srv := redistest.Start(t)
	seedMixed(t, srv.Client(t), "w:", 2000, 2000)
	p := redistest.StartProxy(t, srv.Addr())
	p.Arm(redistest.Rule{Match: "getrange", Skip: 2, Fault: redistest.Hold})
	pc := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: -1})
	t.Cleanup(func() { _ = pc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		redistest.Poll(10*time.Second, p.Fired)
		cancel()
	}()
	_, err := scan.States(ctx, bucket.NewStore(pc), scan.Options{Match: "w:*", Count: 50}, func([]bucket.State) error { return nil })
	if !errors.Is(err, context.Canceled) || !p.Fired() {
		t.Errorf("States returned %v (fired %v), want the cancellation", err, p.Fired())
	}
	p.Release()
	noScanLeft(t)
}
