package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// TestCheckFidelity: check reads every layout as inspect does (a Webman bucket is detected
// without --layout), decides as the application does (Webman refills negatively from a time
// ahead of its clock), denies a cost above capacity with exit 4, and says what retry-after
// Express will report when it truncates the true one. Nothing is written.
func TestCheckFidelity(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now := time.UnixMicro(1_800_000_000_000_000)
	// Webman: 2 tokens stored, written 4.2 s ahead by a fast client: at rate 1 it sees
	// 2 - 4.2 = -2.2 tokens and denies until 3.2 s from now.
	c.Set(ctx, "wm", "2", 0)
	c.Set(ctx, "wm:last_time", "1800000004.2", 0)
	// Express: 0.5 tokens at now, rate 2: a wait of 0.25 s, which it reports as 0.
	c.HSet(ctx, "ex", "tokens", "0.5", "last_refill", "1800000000")
	before := dumpKey(t, c, "wm") + dumpKey(t, c, "wm:last_time") + dumpKey(t, c, "ex")

	r := runAt(t, srv.URL(), &now, "check", "wm", "--capacity", "5", "--rate", "1", "-o", "json")
	var v output.ResultView
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || r.code != ExitDenied {
		t.Fatalf("check webman: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if v.Layout != "webman" || v.Allowed || v.Remaining > -2.19 || v.Remaining < -2.21 || v.RetryAfterMS != 3200 {
		t.Fatalf("check webman: %+v, want denied at -2.2 tokens, retry-after 3.2 s", v)
	}
	r = runAt(t, srv.URL(), &now, "check", "wm", "--capacity", "5", "--rate", "1")
	if r.code != ExitDenied || !strings.Contains(r.errOut, "note: stored time 4.2s ahead of the server's clock (client clock skew?)") {
		t.Fatalf("check webman (table): exit %d %q %q", r.code, r.out, r.errOut)
	}

	r = runAt(t, srv.URL(), &now, "check", "ex", "--layout", "express", "--capacity", "5", "--rate", "2", "-o", "json")
	v = output.ResultView{}
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || r.code != ExitDenied {
		t.Fatalf("check express: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if v.RetryAfterMS != 250 || v.AppRetryAfterMS == nil || *v.AppRetryAfterMS != 0 {
		t.Fatalf("check express: %+v, want retry-after 250 ms and the application's 0", v)
	}
	r = runAt(t, srv.URL(), &now, "check", "ex", "--layout", "express", "--capacity", "5", "--rate", "2")
	if !strings.Contains(r.errOut, "note: express will report retry-after 0s; the true wait is 250ms") {
		t.Fatalf("check express (table): %q", r.errOut)
	}

	// A cost above capacity: denied, never.
	for _, args := range [][]string{
		{"check", "ex", "--layout", "express", "--capacity", "5", "--rate", "2", "--cost", "6"},
		{"check", "nokey", "--capacity", "5", "--rate", "1", "--cost", "6"},
		{"consume", "nokey", "--capacity", "5", "--rate", "1", "--cost", "6"},
	} {
		r = runAt(t, srv.URL(), &now, args...)
		if r.code != ExitDenied || !strings.Contains(r.out, "retry-after never: cost exceeds capacity") {
			t.Fatalf("%v: exit %d %q %q, want exit 4 and never", args, r.code, r.out, r.errOut)
		}
	}
	r = runAt(t, srv.URL(), &now, "check", "nokey", "--capacity", "5", "--rate", "1", "--cost", "6", "-o", "json")
	if r.code != ExitDenied || !strings.Contains(r.out, `"note": "never: cost exceeds capacity"`) || !strings.Contains(r.out, `"retry_after_ms": -1`) {
		t.Fatalf("check -o json, cost above capacity: exit %d %q", r.code, r.out)
	}
	// consume of a cost above the capacity stored in a native bucket: denied, untouched.
	runAt(t, srv.URL(), &now, "consume", "nb", "--capacity", "5", "--rate", "1")
	nb := dumpKey(t, c, "nb")
	if r = runAt(t, srv.URL(), &now, "consume", "nb", "--cost", "6"); r.code != ExitDenied || !strings.Contains(r.out, "never") {
		t.Fatalf("consume above the stored capacity: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if dumpKey(t, c, "nb") != nb || c.Exists(ctx, "nokey").Val() != 0 {
		t.Fatal("a cost above capacity wrote to Redis")
	}
	if dumpKey(t, c, "wm")+dumpKey(t, c, "wm:last_time")+dumpKey(t, c, "ex") != before {
		t.Fatal("check wrote to Redis")
	}

	// inspect shows the lead: one note on the table (webman decides on its caller's clock,
	// so the note says why the figures are ambiguous, with the lead), ahead_ms in JSON.
	r = runAt(t, srv.URL(), &now, "inspect", "wm", "--capacity", "5", "--rate", "1")
	if !strings.Contains(r.errOut, "note: wm: webman decides on its caller's clock, and a caller whose clock runs fast wrote it 4.2s ahead:") ||
		strings.Contains(r.errOut, "note: wm: stored time") {
		t.Fatalf("inspect: %q", r.errOut)
	}
	r = runAt(t, srv.URL(), &now, "inspect", "wm", "--capacity", "5", "--rate", "1", "-o", "json")
	if !strings.Contains(r.out, `"ahead_ms": 4200`) {
		t.Fatalf("inspect -o json: %q", r.out)
	}
}
