package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// The least-privilege ACLs of the README ("Clusters, Sentinel, TLS and ACLs"), as ACL
// SETUSER arguments. On a Cluster both also need +cluster|slots and +command.
const (
	// aclReadOnly: inspect, list, check, watch, top, reset --dry-run. PING checks the
	// connection; SCAN lists; EVALSHA_RO/EVAL_RO run the read script (TYPE, PTTL, HLEN,
	// HGETALL, STRLEN, GET) with TIME beside it, and check's read-only script (HGETALL,
	// TIME).
	// %R~* allows reading every key and writing none.
	aclReadOnly = "on resetchannels %R~* -@all +ping +type +pttl +hgetall +get +getrange +time +scan +evalsha_ro +eval_ro +hmget +exists +hlen +strlen"
	// aclRunbook adds what consume, reset and script load send (EVALSHA, EVAL on
	// NOSCRIPT, SCRIPT LOAD) and what their scripts call (DEL, HSET, SET, SETRANGE,
	// PEXPIRE, and PTTL, already granted above), with write access to the keys.
	aclRunbook = "on resetchannels ~* -@all +ping +type +pttl +hgetall +get +getrange +time +scan +evalsha_ro +eval_ro +hmget +exists +hlen +strlen " +
		"+evalsha +eval +script|load +del +hset +set +setrange +pexpire"
)

func TestACLLeastPrivilege(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACL(
		"ops-ro >ro-pass "+aclReadOnly,
		"ops-runbook >rb-pass "+aclRunbook,
		"ops-noset >ns-pass "+strings.Replace(aclRunbook, " +set", "", 1),
		"ops-noping >np-pass "+strings.Replace(aclReadOnly, " +ping", "", 1),
	))
	admin := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(admin)
	for _, k := range []string{"rl:a", "rl:b"} {
		if _, err := st.Take(ctx, k, bucket.Spec{Capacity: 10, Rate: 0.01}, 3); err != nil {
			t.Fatal(err)
		}
	}
	admin.Set(ctx, "rl:w", "4", 0)
	admin.Set(ctx, "rl:w:last_time", "1700000000.5", 0)
	snapshot := func() string {
		var b strings.Builder
		for _, k := range []string{"rl:a", "rl:b", "rl:w", "rl:w:last_time"} {
			fmt.Fprintf(&b, "%s=%s;", k, dumpKey(t, admin, k))
		}
		return b.String()
	}
	as := func(user, pass string, args ...string) result {
		t.Helper()
		setEnv(t, "BUCKETCTL_PASSWORD", pass)
		return run(t, srv.URL(), append([]string{"--user", user}, args...)...)
	}

	// The read-only operator reads everything and writes nothing.
	before := snapshot()
	for _, args := range [][]string{
		{"inspect", "rl:a", "rl:b"},
		{"inspect", "--match", "rl:*", "-o", "json"},
		{"list", "--match", "rl:*", "-o", "wide"},
		{"check", "rl:a", "--cost", "2"},
		{"check", "rl:w", "--layout", "webman", "--capacity", "10", "--rate", "1"},
		{"watch", "rl:a", "--count", "2", "--interval", "10ms"},
		{"reset", "--match", "rl:*", "--dry-run"},
	} {
		if r := as("ops-ro", "ro-pass", args...); r.code != ExitOK {
			t.Errorf("ops-ro %v: exit %d %q", args, r.code, r.errOut)
		}
	}
	for _, tc := range []struct {
		args    []string
		command string
	}{
		{[]string{"consume", "rl:a"}, "evalsha"},
		{[]string{"reset", "rl:a", "--yes"}, "evalsha"},
		{[]string{"reset", "rl:a", "--tokens", "1", "--yes"}, "evalsha"},
		{[]string{"script", "load"}, "script|load"},
	} {
		r := as("ops-ro", "ro-pass", tc.args...)
		want := "user ops-ro may not run " + tc.command + " on this server (NOPERM): grant it, or use a user with the runbook ACL (see 'bucketctl help cluster')"
		if r.code != ExitError || !strings.Contains(r.errOut, want) {
			t.Errorf("ops-ro %v: exit %d %q, want exit 1 and %q", tc.args, r.code, r.errOut, want)
			continue
		}
		oneLine(t, r)
	}
	if snapshot() != before {
		t.Fatal("the read-only user changed a bucket")
	}

	// ACLs apply to the commands a script calls: one missing write aborts the script
	// before it writes.
	r := as("ops-noset", "ns-pass", "consume", "rl:a")
	if r.code != ExitError || !strings.Contains(r.errOut, "user ops-noset may not run set, called by bucketctl's token_bucket script (ACLs apply inside scripts)") {
		t.Fatalf("consume without +set: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
	if snapshot() != before {
		t.Fatal("the refused script wrote")
	}

	// A refused PING is a permission error, not an unreachable server.
	r = as("ops-noping", "np-pass", "inspect", "rl:a")
	if r.code != ExitError || !strings.Contains(r.errOut, "user ops-noping may not run ping") {
		t.Fatalf("inspect without +ping: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)

	// The runbook user consumes, loads the script and resets.
	for _, args := range [][]string{
		{"consume", "rl:a"},
		{"script", "load"},
		{"reset", "rl:a", "--tokens", "2", "--yes"},
	} {
		if r := as("ops-runbook", "rb-pass", args...); r.code != ExitOK {
			t.Fatalf("ops-runbook %v: exit %d %q", args, r.code, r.errOut)
		}
	}
	if v := hget(t, admin, "rl:a", "tokens"); v != "2" {
		t.Fatalf("rl:a after reset --tokens 2: tokens %q", v)
	}
	if r := as("ops-runbook", "rb-pass", "reset", "rl:w", "--layout", "webman", "--capacity", "10", "--rate", "1", "--tokens", "5", "--yes"); r.code != ExitOK {
		t.Fatalf("ops-runbook reset of a webman bucket: exit %d %q", r.code, r.errOut)
	}
	if r := as("ops-runbook", "rb-pass", "reset", "--match", "rl:*", "--yes"); r.code != ExitOK {
		t.Fatalf("ops-runbook reset --match: exit %d %q", r.code, r.errOut)
	}
	assertFull(t, admin, "rl:a", "rl:b") // native: written full
	// The webman bucket is declared by name only: --match leaves it, --layout resets it.
	if n := admin.Exists(ctx, "rl:w", "rl:w:last_time").Val(); n != 2 {
		t.Fatalf("reset --match with no rule touched the webman bucket: %d of its keys left", n)
	}
	if r := as("ops-runbook", "rb-pass", "reset", "rl:w", "--layout", "webman", "--yes"); r.code != ExitOK {
		t.Fatalf("ops-runbook reset --layout webman: exit %d %q", r.code, r.errOut)
	}
	if n := admin.Exists(ctx, "rl:w", "rl:w:last_time").Val(); n != 0 {
		t.Fatalf("%d keys of the webman bucket left after its reset", n)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithTLS())
	ca, _, _ := srv.TLSFiles()
	if r := run(t, srv.URL(), "--tls-ca", ca, "consume", "t", "--capacity", "3", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("rediss:// with --tls-ca: exit %d %q", r.code, r.errOut)
	}
	r := run(t, srv.URL(), "inspect", "t")
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, srv.Addr()) || !strings.Contains(r.errOut, "x509: certificate signed by unknown authority") {
		t.Fatalf("rediss:// without the CA: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
	if r := run(t, srv.URL(), "--insecure-skip-verify", "inspect", "t"); r.code != ExitOK {
		t.Fatalf("--insecure-skip-verify: exit %d %q", r.code, r.errOut)
	}
	help := run(t, "", "--help").out
	if i := strings.Index(help, "--insecure-skip-verify"); i < 0 || !strings.Contains(strings.SplitN(help[i:], "\n", 2)[0], "INSECURE") {
		t.Fatalf("--help does not label --insecure-skip-verify INSECURE:\n%s", help)
	}

	// Mutual TLS: this server requires a client certificate.
	mtls := redistest.Start(t, redistest.WithTLS(), redistest.WithArgs("--tls-auth-clients", "yes"))
	ca, cert, key := mtls.TLSFiles()
	if r := run(t, mtls.URL(), "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key, "consume", "m", "--capacity", "3", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("mutual TLS: exit %d %q", r.code, r.errOut)
	}
	r = run(t, mtls.URL(), "--tls-ca", ca, "inspect", "m")
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, mtls.Addr()) {
		t.Fatalf("no client certificate for a server that requires one: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
}
