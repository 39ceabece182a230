package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// expressHashes writes n express buckets (2 tokens, refilled in 2023) named prefix0...
func expressHashes(t *testing.T, srv *redistest.Server, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	pipe := srv.Client(t).Pipeline()
	for i := range n {
		pipe.HSet(ctx, fmt.Sprintf("%s%d", prefix, i), "tokens", "2", "last_refill", "1700000000")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

type result struct {
	code        int
	out, errOut string
}

// run executes bucketctl in-process with buffers (no TTY), isolated from the user's config.
func run(t *testing.T, url string, args ...string) result {
	t.Helper()
	io, _, out, errOut := testStreams()
	f := newTestFactory(t, io, VersionInfo{Version: "test"})
	if url != "" {
		args = append([]string{"--url", url}, args...)
	}
	code := Run(context.Background(), f, args)
	return result{code, out.String(), errOut.String()}
}

// isolate is for the tests that exec the built binary, which reads the process
// environment: they stay serial.
func isolate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, k := range []string{"REDISCLI_AUTH", "BUCKETCTL_PASSWORD", "BUCKETCTL_URL", "BUCKETCTL_CONTEXT", "NO_COLOR"} {
		t.Setenv(k, "")
	}
}

func dumpKey(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	v, err := c.Dump(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func oneLine(t *testing.T, r result) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.errOut, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "bucketctl: ") {
		t.Fatalf("stderr should be one 'bucketctl: ' line, got %q", r.errOut)
	}
	if strings.Contains(r.errOut, "goroutine") || strings.Contains(r.errOut, "panic") {
		t.Fatalf("stack trace on stderr: %q", r.errOut)
	}
}

// runAt runs bucketctl with --clock client and its clock pinned at *now.
func runAt(t *testing.T, url string, now *time.Time, args ...string) result {
	t.Helper()
	io, _, out, errOut := testStreams()
	f := newTestFactory(t, io, VersionInfo{Version: "test"})
	f.Now = func() time.Time { return *now }
	code := Run(context.Background(), f, append([]string{"--url", url, "--clock", "client"}, args...))
	return result{code, out.String(), errOut.String()}
}

// TestConsumeThenDenied: capacity 10, rate 5/s on a new key: 10 consumes allowed, the 11th
// denied (exit 4) with a retry-after of 200 ms; 1 s later 5 more allowed and the 6th denied.
// The client clock makes the figures exact; the same with Redis TIME is in bucket's tests.
func TestConsumeThenDenied(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	now := time.UnixMicro(1_800_000_000_000_000)
	consume := func(extra ...string) result {
		return runAt(t, srv.URL(), &now, append([]string{"consume", "api:k", "--capacity", "10", "--rate", "5"}, extra...)...)
	}
	for i := 1; i <= 10; i++ {
		if r := consume(); r.code != ExitOK {
			t.Fatalf("consume %d: exit %d, %s%s", i, r.code, r.out, r.errOut)
		}
	}
	r := consume("-o", "json")
	if r.code != ExitDenied {
		t.Fatalf("11th consume: exit %d, want %d: %s", r.code, ExitDenied, r.out)
	}
	var v output.ResultView
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Allowed || v.RetryAfterMS != 200 || v.Remaining != 0 || v.Capacity != 10 || v.Rate != 5 {
		t.Fatalf("denied result %+v, want retry-after 200ms", v)
	}
	if r.errOut != "" {
		t.Fatalf("a denial is not an error: stderr %q", r.errOut)
	}
	now = now.Add(time.Second)
	for i := 1; i <= 5; i++ {
		if r := consume(); r.code != ExitOK {
			t.Fatalf("after 1s, consume %d: exit %d %q", i, r.code, r.out)
		}
	}
	// The bucket stores its spec: consume without flags uses it.
	if r := runAt(t, srv.URL(), &now, "consume", "api:k"); r.code != ExitDenied || !strings.HasPrefix(r.out, "denied") {
		t.Fatalf("after 1s, the 6th consume (spec stored in the bucket): exit %d %q", r.code, r.out)
	}
}

func TestCheckNeverWrites(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	run(t, srv.URL(), "consume", "k", "--capacity", "10", "--rate", "1", "--cost", "8")
	before := dumpKey(t, c, "k")
	if r := run(t, srv.URL(), "check", "k"); r.code != ExitOK || !strings.HasPrefix(r.out, "allowed") {
		t.Fatalf("check: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if r := run(t, srv.URL(), "check", "k", "--cost", "5", "-o", "json"); r.code != ExitDenied || !strings.Contains(r.out, `"allowed": false`) {
		t.Fatalf("check cost 5: exit %d %q", r.code, r.out)
	}
	if after := dumpKey(t, c, "k"); after != before {
		t.Fatal("check changed the bucket")
	}
	// A missing key is no bucket: exit 6 (see TestCheckMissingKey), and nothing written.
	if r := run(t, srv.URL(), "check", "nokey", "--capacity", "3", "--rate", "1"); r.code != ExitNoKey {
		t.Fatalf("check of a missing bucket: exit %d", r.code)
	}
	if c.Exists(context.Background(), "nokey").Val() != 0 {
		t.Fatal("check created a bucket")
	}
}

func TestInspectJSON(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for i := 0; i < 3; i++ {
		run(t, srv.URL(), "consume", "k", "--capacity", "10", "--rate", "0.5")
	}
	run(t, srv.URL(), "consume", "k", "--cost", "9")
	r := run(t, srv.URL(), "inspect", "k", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("inspect: exit %d %s", r.code, r.errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"tokens", "capacity", "rate", "ttl_ms", "updated_at", "allowed", "denied", "layout", "age_ms"} {
		if _, ok := v[field]; !ok {
			t.Errorf("inspect -o json lacks %q: %s", field, r.out)
		}
	}
	if v["capacity"] != 10.0 || v["rate"] != 0.5 || v["allowed"] != 3.0 || v["denied"] != 1.0 || v["layout"] != "native" {
		t.Fatalf("inspect: %s", r.out)
	}
	if tok := v["tokens"].(float64); tok < 7 || tok > 7.5 {
		t.Fatalf("tokens %v, want about 7", tok)
	}
	if ttl := v["ttl_ms"].(float64); ttl <= 0 {
		t.Fatalf("ttl_ms %v", ttl)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	c.Set(ctx, "str", "hello", 0)
	c.HSet(ctx, "prof", "name", "ann")
	c.HSet(ctx, "nb:1", "tokens", "3", "ts", "1", "capacity", "10", "rate", "1")
	cases := []struct {
		name string
		args []string
		code int
		key  string
		want string
	}{
		{"rate 0", []string{"consume", "new", "--capacity", "10", "--rate", "0"}, ExitUsage, "new", "rate"},
		{"negative capacity", []string{"consume", "new", "--capacity=-1", "--rate", "5"}, ExitUsage, "new", "capacity"},
		{"NaN capacity", []string{"consume", "new", "--capacity", "NaN", "--rate", "5"}, ExitUsage, "new", "capacity"},
		{"capacity without rate", []string{"consume", "new", "--capacity", "10"}, ExitUsage, "new", "--rate"},
		{"no spec anywhere", []string{"consume", "new"}, ExitUsage, "new", "--capacity"},
		{"string key", []string{"consume", "str", "--capacity", "10", "--rate", "5"}, ExitError, "str", "not a bucket"},
		{"other hash", []string{"consume", "prof", "--capacity", "10", "--rate", "5"}, ExitError, "prof", "not"},
		{"bad output", []string{"inspect", "str", "-o", "xml"}, ExitUsage, "str", `--output "xml": must be one of table, wide, json, yaml, jsonl`},
		{"bad output of config view", []string{"config", "view", "-o", "table"}, ExitUsage, "str", `--output "table": must be one of yaml, json`},
		{"unknown flag", []string{"consume", "new", "--capacty", "1"}, ExitUsage, "new", "unknown flag"},
		{"no key", []string{"consume"}, ExitUsage, "new", "KEY"},
		{"reset negative", []string{"reset", "str", "--tokens=-3", "--yes"}, ExitUsage, "str", "--tokens"},
		{"reset wrong type", []string{"reset", "str", "--tokens", "3", "--yes"}, ExitError, "str", "str"},
		{"reset negative limit", []string{"reset", "--match", "nb:*", "--limit=-1", "--yes"}, ExitUsage, "nb:1", "--limit -1"},
		{"reset limit with keys", []string{"reset", "nb:1", "--limit", "1", "--yes"}, ExitUsage, "nb:1", "--limit applies to --match only"},
		{"reset empty pattern", []string{"reset", "--match", "", "--yes"}, ExitUsage, "nb:1", "--match ''"},
		{"list empty pattern", []string{"list", "--match", ""}, ExitUsage, "nb:1", "empty pattern"},
		{"inspect limit with keys", []string{"inspect", "nb:1", "--limit", "5"}, ExitUsage, "nb:1", "--limit applies to --match only"},
	}
	for _, tc := range cases {
		before := dumpKey(t, c, tc.key)
		r := run(t, srv.URL(), tc.args...)
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d (%q)", tc.name, r.code, tc.code, r.errOut)
			continue
		}
		if !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%s: stderr %q does not name %q", tc.name, r.errOut, tc.want)
		}
		oneLine(t, r)
		if dumpKey(t, c, tc.key) != before {
			t.Errorf("%s: key %s changed", tc.name, tc.key)
		}
	}
}

func TestUnreachableAndAuth(t *testing.T) {
	t.Parallel()
	r := run(t, "redis://127.0.0.1:1", "consume", "k", "--capacity", "1", "--rate", "1")
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, "127.0.0.1:1") || !strings.Contains(r.errOut, "refused") {
		t.Fatalf("unreachable: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)

	srv := redistest.Start(t, redistest.WithPassword("s3cret-pass"))
	setEnv(t, "REDISCLI_AUTH", "wrong-pass")
	// The server was reached and refused the password: its own line, exit 1 (as NOPERM),
	// not "cannot reach" (3).
	r = run(t, srv.URL(), "inspect", "k")
	want := "bucketctl: Redis at " + srv.Addr() + " refused the password for user default (WRONGPASS: a wrong password, or no such user, or a disabled one): " +
		"set the password in REDISCLI_AUTH or BUCKETCTL_PASSWORD (or the context's password-env), the user with --user\n"
	if r.code != ExitError || r.errOut != want {
		t.Fatalf("wrong password: exit %d %q, want 1 and %q", r.code, r.errOut, want)
	}
	for _, args := range [][]string{{"--user", "bob", "list"}, {"--user", "bob", "consume", "k", "--capacity", "1", "--rate", "1"}} {
		if r := run(t, srv.URL(), args...); r.code != ExitError || !strings.Contains(r.errOut, "refused the password for user bob") {
			t.Fatalf("%v with a wrong password: exit %d %q", args, r.code, r.errOut)
		}
	}
	setEnv(t, "REDISCLI_AUTH", "")
	if r := run(t, srv.URL(), "inspect", "k"); r.code != ExitError || !strings.Contains(r.errOut, "requires a password and none was sent (NOAUTH)") {
		t.Fatalf("no password: exit %d %q", r.code, r.errOut)
	}
	setEnv(t, "REDISCLI_AUTH", "wrong-pass")
	if strings.Contains(r.errOut, "wrong-pass") {
		t.Fatal("the password was printed")
	}
	oneLine(t, r)
	setEnv(t, "REDISCLI_AUTH", "")
	setEnv(t, "BUCKETCTL_PASSWORD", "s3cret-pass")
	if r := run(t, srv.URL(), "consume", "k", "--capacity", "1", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("right password from BUCKETCTL_PASSWORD: exit %d %q", r.code, r.errOut)
	}
}

func TestResetMatch(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	for i := 0; i < 3; i++ {
		run(t, srv.URL(), "consume", fmt.Sprintf("pat:%d", i), "--capacity", "5", "--rate", "1", "--cost", "5")
	}
	run(t, srv.URL(), "consume", "other:1", "--capacity", "5", "--rate", "1", "--cost", "5")
	snapshot := func() map[string]string {
		m := map[string]string{}
		for _, k := range []string{"pat:0", "pat:1", "pat:2", "other:1"} {
			m[k] = dumpKey(t, c, k)
		}
		return m
	}
	before := snapshot()

	r := run(t, srv.URL(), "reset", "--match", "pat*", "--dry-run")
	if r.code != ExitOK || strings.Count(r.out, "pat:") != 3 || strings.Contains(r.out, "other") {
		t.Fatalf("dry run: exit %d out %q err %q", r.code, r.out, r.errOut)
	}
	if fmt.Sprint(snapshot()) != fmt.Sprint(before) {
		t.Fatal("dry run changed something")
	}
	r = run(t, srv.URL(), "reset", "--match", "pat*")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "--yes") {
		t.Fatalf("without --yes and no TTY: exit %d %q", r.code, r.errOut)
	}
	if fmt.Sprint(snapshot()) != fmt.Sprint(before) {
		t.Fatal("refused reset changed something")
	}
	r = run(t, srv.URL(), "reset", "--match", "pat*", "--yes", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("reset --yes: exit %d %q", r.code, r.errOut)
	}
	var plan []output.ResetView
	if err := json.Unmarshal([]byte(r.out), &plan); err != nil || len(plan) != 3 {
		t.Fatalf("reset output %q %v", r.out, err)
	}
	for _, p := range plan {
		if !p.Done {
			t.Fatalf("not done: %+v", p)
		}
	}
	assertFull(t, c, "pat:0", "pat:1", "pat:2") // native: written full, not deleted
	if dumpKey(t, c, "other:1") != before["other:1"] {
		t.Fatal("reset touched a bucket outside the pattern")
	}
	// Set to N tokens: the bucket then holds N (refill aside).
	run(t, srv.URL(), "consume", "pat:0", "--capacity", "5", "--rate", "0.001", "--cost", "5")
	if r := run(t, srv.URL(), "reset", "pat:0", "--tokens", "2", "--yes"); r.code != ExitOK {
		t.Fatalf("reset --tokens: %d %q", r.code, r.errOut)
	}
	if v := hget(t, c, "pat:0", "tokens"); v != "2" {
		t.Fatalf("tokens after reset --tokens 2: %q", v)
	}
}

// TestHelpHasExamples: every command's --help has examples, and every flag a help text.
func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	f := newTestFactory(t, &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, VersionInfo{})
	root := NewCmdRoot(f)
	for _, c := range allCommands(root) {
		if c.Runnable() && c.Example == "" && c.Name() != "help" && c.Name() != "completion" && !c.Hidden &&
			c.Parent() != nil && c.Parent().Name() != "completion" {
			t.Errorf("%s has no examples in --help", c.CommandPath())
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if fl.Usage == "" {
				t.Errorf("%s --%s has no help text", c.CommandPath(), fl.Name)
			}
		})
	}
}

func TestConsumeHeaders(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	run(t, srv.URL(), "consume", "h", "--capacity", "3", "--rate", "0.4", "--cost", "3")
	r := run(t, srv.URL(), "consume", "h", "--headers", "-o", "json")
	if r.code != ExitDenied {
		t.Fatalf("exit %d %q", r.code, r.errOut)
	}
	var v output.ResultView
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatal(err)
	}
	retry, err := strconv.Atoi(v.Headers["Retry-After"])
	if err != nil || float64(retry)*1000 < v.RetryAfterMS || float64(retry-1)*1000 >= v.RetryAfterMS {
		t.Fatalf("Retry-After %q for a wait of %vms: want it rounded up", v.Headers["Retry-After"], v.RetryAfterMS)
	}
	if v.Headers["X-RateLimit-Limit"] != "3" || v.Headers["X-RateLimit-Remaining"] != "0" ||
		v.Headers["RateLimit-Policy"] != `"default";q=3;w=8` || !strings.HasPrefix(v.Headers["RateLimit"], `"default";r=0;t=`) {
		t.Fatalf("headers %v", v.Headers)
	}
	r = run(t, srv.URL(), "check", "h", "--cost", "0", "--headers")
	if r.code != ExitOK || !strings.Contains(r.out, "HTTP/1.1 200 OK\nRateLimit-Policy: ") {
		t.Fatalf("check --headers: %d %q", r.code, r.out)
	}
}
