package cmd

import (
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
	check("env, wrong password", run(t, "", "inspect", "x"), ExitUnreachable, "EnvSecret2", srv.Addr(), "WRONGPASS")

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
