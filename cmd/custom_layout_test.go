package cmd

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/scripts"
)

// customSCGConfig declares a limiter that runs Spring Cloud Gateway's script under key names
// of its own, on its callers' clock (the script's ARGV[3]).
const customSCGConfig = `
layouts:
  mylimiter: {like: spring-cloud-gateway, tokens_key: "*.tokens", time_key: "*.ts", clock: client}
rules:
  - {match: "{api:*}.tokens", layout: mylimiter, capacity: 300, rate: 1}
`

// TestCustomLayoutLikeSpringCloudGateway: the config file's example end to end. Buckets
// written by a copy of Spring Cloud Gateway's script named {api:ID}.tokens and {api:ID}.ts,
// its clock passed by the caller, are read, checked, listed and reset by bucketctl through
// the rule, and the script's next decisions agree: the level it sees, a check on each side
// of it, N after reset --tokens N (its TTL, floor(2·burst/rate), on both keys) and a full
// bucket after reset. The time key is never a bucket of its own.
func TestCustomLayoutLikeSpringCloudGateway(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	writeConfig(t, customSCGConfig)
	script := redis.NewScript(scripts.App("spring-cloud-gateway"))
	const tokens, ts = "{api:u1}.tokens", "{api:u1}.ts"
	take := func(at time.Time, n int) bool {
		t.Helper()
		v, err := script.Run(ctx, c, []string{tokens, ts}, 1, 300, at.Unix(), n).Slice()
		if err != nil {
			t.Fatal(err)
		}
		return v[0].(int64) == 1
	}
	start := time.Unix(1_900_000_000, 0)
	for i := 0; i < 250; i++ { // 50 left at start
		if !take(start, 1) {
			t.Fatalf("take %d denied", i+1)
		}
	}
	now := start.Add(10 * time.Second) // 60 tokens then
	r := runAt(t, srv.URL(), &now, "inspect", tokens, "-o", "json")
	var v output.StateView
	if r.code != ExitOK || json.Unmarshal([]byte(r.out), &v) != nil {
		t.Fatalf("inspect: %+v", r)
	}
	if v.Layout != "mylimiter" || v.LayoutDetected || v.Tokens == nil || *v.Tokens != 60 || v.StoredTokens == nil || *v.StoredTokens != 50 {
		t.Fatalf("inspect through the rule: %s", r.out)
	}
	if r := runAt(t, srv.URL(), &now, "check", tokens, "--cost", "60"); r.code != ExitOK {
		t.Fatalf("check --cost 60 at 60 tokens: %+v", r)
	}
	if r := runAt(t, srv.URL(), &now, "check", tokens, "--cost", "61"); r.code != ExitDenied {
		t.Fatalf("check --cost 61 at 60 tokens: %+v", r)
	}
	if take(now, 61) || !take(now, 60) {
		t.Fatal("the script does not see the 60 tokens bucketctl saw")
	}

	// list: one bucket; its time key is part of it.
	r = runAt(t, srv.URL(), &now, "list", "--match", "{api:*", "-o", "jsonl")
	if r.code != ExitOK || strings.Count(r.out, "\n") != 1 || !strings.Contains(r.out, strconv.Quote(tokens)) {
		t.Fatalf("list: %+v", r)
	}
	if r := runAt(t, srv.URL(), &now, "inspect", ts, "--layout", "mylimiter"); r.code == ExitOK {
		t.Fatalf("the time key read as a bucket of its own: %+v", r)
	}

	// reset --tokens 7: the script sees 7, and both keys carry its TTL (600 s).
	if r := runAt(t, srv.URL(), &now, "reset", tokens, "--tokens", "7", "--yes"); r.code != ExitOK {
		t.Fatalf("reset --tokens 7: %+v", r)
	}
	for _, k := range []string{tokens, ts} {
		if ttl := c.PTTL(ctx, k).Val(); ttl < 599*time.Second || ttl > 600*time.Second {
			t.Fatalf("%s: TTL %v after the reset, want Spring Cloud Gateway's 600 s", k, ttl)
		}
	}
	if got := c.Get(ctx, ts).Val(); got != strconv.FormatInt(now.Unix(), 10) {
		t.Fatalf("time key %q after the reset, want the client's %d", got, now.Unix())
	}
	if take(now, 8) || !take(now, 7) {
		t.Fatal("after reset --tokens 7 the script does not see 7")
	}

	// A caller whose clock runs 5 s ahead of the server's: bucketctl on the server's clock
	// reports the lead, and (clock: client) the decision on the writer's clock too.
	const fast = "{api:fast}.tokens"
	ahead := time.Unix(c.Time(ctx).Val().Unix()+5, 0)
	if v, err := script.Run(ctx, c, []string{fast, "{api:fast}.ts"}, 1, 300, ahead.Unix(), 100).Slice(); err != nil || v[0] != int64(1) {
		t.Fatalf("fast take: %v %v", v, err)
	}
	r = run(t, srv.URL(), "inspect", fast, "-o", "json")
	v = output.StateView{}
	if r.code != ExitOK || json.Unmarshal([]byte(r.out), &v) != nil {
		t.Fatalf("inspect %s: %+v", fast, r)
	}
	if v.AheadMS < 3000 || v.AheadMS > 6000 || v.WriterClock == nil || *v.Tokens != 200 {
		t.Fatalf("a bucket written 5 s ahead on a client-clock layout: %s", r.out)
	}

	// reset: both keys deleted, the script sees a full bucket.
	if r := runAt(t, srv.URL(), &now, "reset", tokens, "--yes"); r.code != ExitOK {
		t.Fatalf("reset: %+v", r)
	}
	if n := c.Exists(ctx, tokens, ts).Val(); n != 0 {
		t.Fatalf("%d keys left after reset", n)
	}
	if !take(now, 300) {
		t.Fatal("after reset the script does not see a full bucket")
	}
}

// TestBadCustomLayouts: a custom layout that cannot name or read its buckets is one line on
// stderr naming the field and the fix, exit 2, before anything is dialled.
func TestBadCustomLayouts(t *testing.T) {
	t.Parallel()
	envOf(t)
	for _, tc := range []struct{ name, layout, want string }{
		{"no star", `{like: spring-cloud-gateway, tokens_key: "tokens", time_key: "*.ts"}`,
			`tokens_key "tokens" has no '*': put one '*' where the bucket's name goes`},
		{"two stars", `{like: spring-cloud-gateway, tokens_key: "*.tokens", time_key: "*.*.ts"}`,
			`time_key "*.*.ts" has 2 '*': use exactly one`},
		{"unknown like", `{like: spring-cloud, tokens_key: "*.tokens", time_key: "*.ts"}`,
			`like "spring-cloud" is not a preset: name one of`},
		{"unknown unit", `{like: spring-cloud-gateway, tokens_key: "*.tokens", time_key: "*.ts", time_unit: min}`,
			`time_unit "min" must be s, ms, us or ns`},
		{"unknown clock", `{like: spring-cloud-gateway, tokens_key: "*.tokens", time_key: "*.ts", clock: local}`,
			`clock "local" must be server (Redis TIME) or client`},
		{"unknown field", `{like: spring-cloud-gateway, tokens_keys: "*.tokens", time_key: "*.ts"}`,
			`unknown field "tokens_keys" in layout "mylimiter": did you mean "tokens_key"?`},
		{"one pattern for both", `{like: spring-cloud-gateway, tokens_key: "*.t", time_key: "*.t"}`,
			`tokens_key and time_key are both "*.t"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeConfig(t, "layouts:\n  mylimiter: "+tc.layout+"\n")
			r := run(t, "", "--url", "redis://127.0.0.1:1", "inspect", "{api:u1}.tokens")
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q: want 2 and %q", r.code, r.errOut, tc.want)
			}
			oneLine(t, r)
		})
	}
}
