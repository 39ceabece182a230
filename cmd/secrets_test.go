package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestPasswordNeverPrinted: whatever the URL looks like and wherever it comes from, its
// password never reaches stderr; on the command line it is refused with a hint.
func TestPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithPassword("the-right-one"))
	check := func(what string, r result, code int, secret string, wants ...string) {
		t.Helper()
		if r.code != code {
			t.Fatalf("%s: exit %d, want %d: %q", what, r.code, code, r.errOut)
		}
		if strings.Contains(r.errOut+r.out, secret) {
			t.Fatalf("%s: the password %q was printed: %q", what, secret, r.errOut)
		}
		for _, w := range wants {
			if !strings.Contains(r.errOut, w) {
				t.Fatalf("%s: stderr lacks %q: %q", what, w, r.errOut)
			}
		}
		oneLine(t, r)
	}
	// On the command line: refused, whether or not it parses, before any dial.
	check("argv, unparseable", run(t, "", "--url", "redis://u:Secret@127.0.0.1:6379/%zz", "inspect", "x"), ExitUsage, "Secret",
		"holds a password", "REDISCLI_AUTH", "BUCKETCTL_PASSWORD")
	check("argv, valid", run(t, "", "--url", "redis://:pw-on-argv@"+srv.Addr(), "inspect", "x"), ExitUsage, "pw-on-argv", "password-env")

	// From the environment: accepted, but never printed.
	setEnv(t, "BUCKETCTL_URL", "redis://u:EnvSecret@127.0.0.1:6379/%zz")
	check("env, unparseable", run(t, "", "inspect", "x"), ExitUsage, "EnvSecret", "invalid URL escape", "u:xxxxx@")
	setEnv(t, "BUCKETCTL_URL", "redis://:EnvSecret2@"+srv.Addr())
	check("env, wrong password", run(t, "", "inspect", "x"), ExitError, "EnvSecret2", srv.Addr(), "WRONGPASS")

	// From a context of the config file: the same.
	setEnv(t, "BUCKETCTL_URL", "")
	writeConfig(t, "current-context: c\ncontexts:\n  c: {url: \"redis://u:CtxSecret@127.0.0.1:6379/%zz\"}\n")
	check("context, unparseable", run(t, "", "inspect", "x"), ExitUsage, "CtxSecret", "invalid URL escape")
}

// TestBareHostPort: --url host:port means redis://host:port.
func TestBareHostPort(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := run(t, "", "--url", srv.Addr(), "inspect", "nokey", "-o", "json")
	if r.code != ExitNoKey || !strings.Contains(r.out, `"key": "nokey"`) { // connected: no such key
		t.Fatalf("--url host:port: exit %d %q %q", r.code, r.out, r.errOut)
	}
}

// TestTLSAgainstPlainPort: rediss:// to a port without TLS says so, not "timed out".
func TestTLSAgainstPlainPort(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := run(t, "", "--url", "rediss://"+srv.Addr(), "--dial-timeout", "300ms", "--timeout", "300ms", "inspect", "x")
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, "plain-text Redis (not TLS)") || strings.Contains(r.errOut, "timed out") {
		t.Fatalf("TLS to a plain port: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
}

// TestOddURLFormsKeepTheirSecret: user info with no scheme (//u:pw@), a broken scheme
// (redis ://u:pw@) or no colon (redis://NAME@: a user to go-redis and to bucketctl, a
// password to redis-cli) is hidden in config view, get-contexts and every message; a
// password in such a URL is refused on the command line and never written into the
// config file by set-context.
func TestOddURLFormsKeepTheirSecret(t *testing.T) {
	writeConfig(t, `current-context: a
contexts:
  a: {url: "//u:S3cr3tPW1@127.0.0.1:1"}
  b: {url: "redis ://u:S3cr3tPW2@127.0.0.1:1"}
  c: {url: "redis://S3cr3tPW3@127.0.0.1:1"}
  d: {url: "redis://u:S3cr3t,PW4@127.0.0.1:1"}
  e: {cluster: ["u:S3cr3t'PW5@127.0.0.1:7000", "127.0.0.1:7001"]}
  f: {sentinel-master: m, sentinel-addrs: ["u:S3cr3t\"PW6@127.0.0.1:26379"]}
  g: {url: "redis://u:S3cr3t PW7@127.0.0.1:1"}
  h: {cluster: ["u:S3cr3t,PW8@127.0.0.1:7000"]}
`)
	secrets := []string{"S3cr3tPW1", "S3cr3tPW2", "S3cr3tPW3", "PW4", "PW5", "PW6", "PW7", "PW8"}
	noneIn := func(what string, r result) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(r.out+r.errOut, s) {
				t.Fatalf("%s printed %s: %q %q", what, s, r.out, r.errOut)
			}
		}
	}
	for _, args := range [][]string{{"config", "view"}, {"config", "view", "-o", "json"}, {"config", "get-contexts"}, {"config", "get-contexts", "-o", "yaml"}} {
		r := run(t, "", args...)
		if r.code != ExitOK || !strings.Contains(r.out, "xxxxx") {
			t.Fatalf("%v: exit %d, want the secrets shown as xxxxx: %q %q", args, r.code, r.out, r.errOut)
		}
		noneIn(strings.Join(args, " "), r)
	}
	for _, ctx := range []string{"g", "h"} { // (no server listens: any exit, no secret)
		noneIn("context "+ctx, run(t, "", "--context", ctx, "--timeout", "2s", "inspect", "k"))
	}
	for _, ctx := range []string{"a", "b", "c"} {
		r := run(t, "", "--context", ctx, "inspect", "k")
		if r.code != ExitUsage {
			t.Fatalf("context %s: exit %d %q, want %d", ctx, r.code, r.errOut, ExitUsage)
		}
		noneIn("context "+ctx, r)
		oneLine(t, r)
	}
	for _, u := range []string{"//u:S3cr3tPW1@127.0.0.1:1", "redis ://u:S3cr3tPW2@127.0.0.1:1", "redis://S3cr3tPW3@127.0.0.1:1"} {
		r := run(t, "", "--url", u, "inspect", "k")
		if r.code != ExitUsage {
			t.Fatalf("--url %q: exit %d %q, want %d", u, r.code, r.errOut, ExitUsage)
		}
		noneIn("--url "+u, r)
		if !strings.Contains(u, ":S3") {
			continue // a user: set-context may write it (config view hides it, as above)
		}
		r = run(t, "", "config", "set-context", "z", "--url", u)
		if r.code != ExitUsage {
			t.Fatalf("set-context --url %q: exit %d %q, want %d", u, r.code, r.errOut, ExitUsage)
		}
		noneIn("set-context --url "+u, r)
	}
	if body, err := os.ReadFile(filepath.Join(getEnv(t, "XDG_CONFIG_HOME"), "bucketctl", "config.yaml")); err != nil || strings.Contains(string(body), "z:") {
		t.Fatalf("set-context wrote a context holding a password (err %v):\n%s", err, body)
	}
}

// TestConfigErrorsQuoteNoValue: a config file the decoder refuses (a string where a list
// belongs) is named with its line, never with the value it holds, a password maybe; and a
// password holding a comma, given as two items of a list, is hidden in every view.
func TestConfigErrorsQuoteNoValue(t *testing.T) {
	writeConfig(t, `current-context: a
contexts:
  a: {cluster: ":S3cr3tPW9@10.0.0.1:7000"}
`)
	for _, args := range [][]string{{"config", "view"}, {"inspect", "k"}} {
		r := run(t, "", args...)
		if r.code != ExitUsage || strings.Contains(r.out+r.errOut, "S3cr") || !strings.Contains(r.errOut, "(value not shown)") {
			t.Fatalf("%v: exit %d %q %q, want a usage error that quotes no value", args, r.code, r.out, r.errOut)
		}
	}
	writeConfig(t, `current-context: a
contexts:
  a: {cluster: ["u:S3cr3t", "PW10@127.0.0.1:7000", "127.0.0.1:7001"]}
`)
	for _, args := range [][]string{{"config", "view"}, {"config", "view", "-o", "json"}, {"config", "get-contexts"}} {
		r := run(t, "", args...)
		if r.code != ExitOK || strings.Contains(r.out+r.errOut, "S3cr3t") || strings.Contains(r.out+r.errOut, "PW10") {
			t.Fatalf("%v: exit %d: the password shows: %q %q", args, r.code, r.out, r.errOut)
		}
	}
}

// TestConfigTypoQuotesNoPassword: a key that is no field's name (a typo such as
// "password hunter2") is named by its line, never quoted.
func TestConfigTypoQuotesNoPassword(t *testing.T) {
	writeConfig(t, `current-context: a
contexts:
  a: {url: "redis://h:1", password hunter22x}
`)
	r := run(t, "", "config", "view")
	if r.code != ExitUsage || strings.Contains(r.out+r.errOut, "hunter22x") || !strings.Contains(r.errOut, "line 3") {
		t.Fatalf("exit %d %q %q, want a usage error naming line 3 and quoting no value", r.code, r.out, r.errOut)
	}
}
