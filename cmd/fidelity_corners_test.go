package cmd

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// TestCheckCorners: the incident states, through the commands. check shares inspect's path
// (a redis_rate bucket whose burst was lowered from 30 to 10 while a client was 30 requests
// in: retry after 2.1 s, the library's own answer); a wait never outlasts the key (a drained
// go-bench bucket whose caller set a TTL of 2 s: retry after the 2 s, said to be the
// expiry); the stored time ahead of the server's is in check's JSON (ahead_ms) with the
// decision on the writer's clock.
func TestCheckCorners(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	decode := func(r result) output.ResultView {
		t.Helper()
		var v output.ResultView
		if err := json.Unmarshal([]byte(r.out), &v); err != nil {
			t.Fatalf("exit %d %q %q: %v", r.code, r.out, r.errOut, err)
		}
		return v
	}

	// GCRA debt under a lowered limit, on the server's clock (2.1 s, less what the 30
	// requests took on a loaded machine).
	lim := redis_rate.NewLimiter(c)
	for i := 0; i < 30; i++ {
		if _, err := lim.Allow(ctx, "debt", redis_rate.Limit{Rate: 10, Burst: 30, Period: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	v := decode(run(t, srv.URL(), "check", "rate:debt", "--layout", "redis-rate", "--capacity", "10", "--rate", "10", "-o", "json"))
	lib, err := lim.Allow(ctx, "debt", redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The library answers after check read: its wait is shorter by the time between.
	libMS, between := float64(lib.RetryAfter.Microseconds())/1000, float64(time.Since(start).Milliseconds())
	if v.Allowed || lib.Allowed != 0 || v.RetryAfterMS < libMS-50 || v.RetryAfterMS > libMS+between+50 || v.RetryAfterMS < 1000 || v.AheadMS < 900 {
		t.Fatalf("check of a redis_rate bucket in debt: %+v; the library says retry after %v", v, lib.RetryAfter)
	}

	now := time.UnixMicro(1_800_000_000_000_000)
	// go-bench drained at now, rate 0.2/s: 5 s to one token, but the key expires in 2 s.
	c.HSet(ctx, "gb", "tokens", "0", "ts", now.UnixMilli())
	c.PExpire(ctx, "gb", 2*time.Second)
	r := runAt(t, srv.URL(), &now, "check", "gb", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2", "-o", "json")
	v = decode(r)
	if r.code != ExitDenied || !v.RetryAtExpiry || !v.FullAtExpiry || v.RetryAfterMS > 2000 || v.RetryAfterMS < 1900 ||
		v.TimeToFullMS > 2000 || v.AppRetryAfterMS == nil || *v.AppRetryAfterMS != 5000 {
		t.Fatalf("check of a go-bench bucket whose TTL ends the wait: %+v", v)
	}
	r = runAt(t, srv.URL(), &now, "check", "gb", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2")
	// The TTL counts down from 2 s while the commands run: a loaded machine reads 1.9s.
	if !regexp.MustCompile(`the key expires in (2|1\.\d+)s, before enough tokens refill: go-bench then starts a full bucket`).MatchString(r.errOut) {
		t.Fatalf("check (table) does not say the expiry ends the wait: %q %q", r.out, r.errOut)
	}
	r = runAt(t, srv.URL(), &now, "inspect", "gb", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2", "-o", "json")
	var sv output.StateView
	if err := json.Unmarshal([]byte(r.out), &sv); err != nil || sv.TimeToFullMS == nil || *sv.TimeToFullMS > 2000 || !sv.FullAtExpiry {
		t.Fatalf("inspect of a go-bench bucket whose TTL ends the refill: %v %+v", err, sv)
	}

	// go-bench written 5 s ahead with 0 tokens: on the server's clock 5 s pass before its
	// refill starts (5 s + 5 s to a token); on the writer's clock, 5 s.
	c.HSet(ctx, "gba", "tokens", "0", "ts", now.UnixMilli()+5000)
	v = decode(runAt(t, srv.URL(), &now, "check", "gba", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2", "-o", "json"))
	if v.AheadMS != 5000 || v.RetryAfterMS != 10000 || v.WriterClock == nil || v.WriterClock.RetryAfterMS != 5000 || v.Ambiguous == "" {
		t.Fatalf("check of a go-bench bucket written 5 s ahead: %+v (writer %+v)", v, v.WriterClock)
	}
	// inspect says it once, with the figure the UPDATED column shows: one note (why the
	// figures are ambiguous, how far ahead), and the same text in JSON.
	r = runAt(t, srv.URL(), &now, "inspect", "gba", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2")
	if strings.Count(r.errOut, "note: ") != 1 || !strings.Contains(r.errOut, "wrote it 5s ahead: the next caller's clock decides") ||
		!strings.Contains(r.out, "5s ahead of the server's clock") {
		t.Fatalf("inspect of a bucket written 5 s ahead: %q %q", r.out, r.errOut)
	}
	r = runAt(t, srv.URL(), &now, "inspect", "gba", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2", "-o", "json")
	if err := json.Unmarshal([]byte(r.out), &sv); err != nil || !strings.Contains(sv.Ambiguous, "wrote it 5s ahead:") {
		t.Fatalf("inspect -o json of a bucket written 5 s ahead: %v %+v", err, sv)
	}
	// Not ahead: ahead_ms is there, 0, and no writer's clock.
	c.HSet(ctx, "gbn", "tokens", "5", "ts", now.UnixMilli()-1000)
	v = decode(runAt(t, srv.URL(), &now, "check", "gbn", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2", "-o", "json"))
	if r := runAt(t, srv.URL(), &now, "check", "gbn", "--layout", "go-bench", "--capacity", "10", "--rate", "0.2", "-o", "json"); !strings.Contains(r.out, `"ahead_ms": 0`) ||
		v.WriterClock != nil || v.Ambiguous != "" {
		t.Fatalf("check of a bucket not ahead: %+v %q", v, r.out)
	}
}

// TestResetWebmanWrittenAhead: a webman bucket written 2 s ahead by a fast client, then
// `reset --tokens 3`: tokens_after is what Webman reads on the server's clock right after,
// 3, and the webman script on that clock allows exactly 3; what the fast writer reads (its
// lead refills it, to 10) is said too.
func TestResetWebmanWrittenAhead(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	server, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var webman apptest.App
	for _, a := range apptest.Apps {
		if a.Layout == "webman" {
			webman = a
		}
	}
	fast := server.Add(2 * time.Second)
	for i := 0; i < 10; i++ { // drained by the fast client
		if _, err := webman.Decide(ctx, c, "wm", 10, 10, fast); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, srv.URL(), "reset", "wm", "--layout", "webman", "--capacity", "10", "--rate", "10", "--tokens", "3", "--yes", "-o", "json")
	var plan []output.ResetView
	if r.code != 0 || json.Unmarshal([]byte(r.out), &plan) != nil || len(plan) != 1 {
		t.Fatalf("reset: exit %d %q %q", r.code, r.out, r.errOut)
	}
	p := plan[0]
	if p.TokensAfter == nil || *p.TokensAfter != 3 || p.AheadMS < 1500 || p.TokensAfterWriterClock == nil || *p.TokensAfterWriterClock != 10 || p.Note == "" {
		t.Fatalf("reset of a webman bucket 2 s ahead: %+v", p)
	}
	// Webman on the server's clock, right after: exactly 3.
	at, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for i := 0; i < 6; i++ {
		ok, err := webman.Decide(ctx, c, "wm", 10, 10, at)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got++
		}
	}
	if got != 3 {
		t.Fatalf("after reset --tokens 3 webman on the server's clock allowed %d", got)
	}
}

// TestAuditGCRADebt: audit tells a GCRA bucket in debt past the configured limit (a burst
// lowered from 30 to 10 while a client was 30 requests in) from a fast client clock: a
// gcra-debt finding with the largest debt, not clock-ahead.
func TestAuditGCRADebt(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	writeConfig(t, "rules:\n  - {match: \"rate:*\", layout: redis-rate, capacity: 10, rate: 1}\n")
	c := srv.Client(t)
	lim := redis_rate.NewLimiter(c)
	for i := 0; i < 30; i++ {
		if _, err := lim.Allow(context.Background(), "debt", redis_rate.Limit{Rate: 1, Burst: 30, Period: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	v, r := auditJSON(t, "--url", srv.URL())
	if r.code != 0 {
		t.Fatalf("audit: exit %d %q", r.code, r.errOut)
	}
	fd := findingOf(v, audit.FindingGCRADebt)
	if fd == nil || fd.MaxAheadMS == nil || *fd.MaxAheadMS < 15000 || *fd.MaxAheadMS > 20100 || findingOf(v, audit.FindingClockAhead) != nil {
		t.Fatalf("audit of a redis_rate bucket 20 s in debt: %+v", v.Findings)
	}
	// The audit table and list's NOTE column say it in format.Debt's one wording.
	debt := regexp.MustCompile(`TAT 1?\d(\.\d)?s past a full window: debt \(limit lowered, or the server's clock went back\?\)`)
	if r := run(t, srv.URL(), "audit"); !strings.Contains(r.out, "  largest: TAT ") || !debt.MatchString(r.out) {
		t.Errorf("audit table (exit %d):\n%s", r.code, r.out)
	}
	if r := run(t, srv.URL(), "list", "--match", "rate:*"); !debt.MatchString(r.out) {
		t.Errorf("list (exit %d):\n%s", r.code, r.out)
	}
}
