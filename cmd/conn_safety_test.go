package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// noSecret fails when any of secrets shows in r's output.
func noSecret(t *testing.T, what string, r result, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.out+r.errOut, s) {
			t.Errorf("%s: the secret %q was printed: out %q err %q", what, s, r.out, r.errOut)
		}
	}
}

// TestSecretsInEveryForm: a password is never printed, whatever form the address holds it
// in (a URL's user info, a secret-named query parameter in any case, a Cluster seed's or a
// sentinel's user:password@) and wherever it comes from (a variable, the config file):
// not by a command's error line, not by config view (YAML or JSON), not by get-contexts.
// Typed on the command line, such an address is refused (exit 2) without being echoed.
func TestSecretsInEveryForm(t *testing.T) {
	t.Parallel()
	secrets := []string{"uinfo-Secret1", "query-Secret2", "Tok-Secret3", "seed-Secret4", "sent-Secret5", "ctx-Secret6", "ctxseed-Secret7", "Key-Secret8"}
	envCases := []struct{ name, k, v string }{
		{"url userinfo", "BUCKETCTL_URL", "redis://ops:uinfo-Secret1@127.0.0.1:1/0"},
		{"url query password", "BUCKETCTL_URL", "redis://127.0.0.1:1/0?password=query-Secret2"},
		{"url query token", "BUCKETCTL_URL", "redis://127.0.0.1:1?db=0&Auth_Token=Tok-Secret3"},
		{"url query key", "BUCKETCTL_URL", "rediss://127.0.0.1:1?API_KEY=Key-Secret8&x=1"},
		{"seed list", "BUCKETCTL_CLUSTER", "127.0.0.1:1,ops:seed-Secret4@127.0.0.1:2"},
	}
	for _, c := range envCases {
		t.Run(c.name, func(t *testing.T) {
			setEnv(t, c.k, c.v)
			for _, verb := range [][]string{{"list"}, {"inspect", "k"}} {
				r := run(t, "", append([]string{"--dial-timeout", "300ms", "--timeout", "300ms"}, verb...)...)
				if r.code == ExitOK {
					t.Fatalf("%s %v: exit 0 against a closed port", c.name, verb)
				}
				noSecret(t, c.name+" "+verb[0], r, secrets...)
				oneLine(t, r)
			}
		})
	}
	t.Run("sentinel", func(t *testing.T) {
		setEnv(t, "BUCKETCTL_SENTINEL_MASTER", "m")
		setEnv(t, "BUCKETCTL_SENTINEL_ADDRS", "watch:sent-Secret5@127.0.0.1:1")
		r := run(t, "", "--dial-timeout", "300ms", "list")
		if r.code != ExitUnreachable {
			t.Fatalf("exit %d %q", r.code, r.errOut)
		}
		noSecret(t, "sentinel list", r, secrets...)
		if !strings.Contains(r.errOut, "watch:xxxxx@127.0.0.1:1") && !strings.Contains(r.errOut, "127.0.0.1:1") {
			t.Fatalf("the line should still name the sentinel: %q", r.errOut)
		}
	})
	t.Run("typed", func(t *testing.T) {
		for _, args := range [][]string{
			{"--cluster", "ops:seed-Secret4@127.0.0.1:1"},
			{"--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:2,u:sent-Secret5@127.0.0.1:1"},
			{"--url", "redis://127.0.0.1:1?password=query-Secret2"},
		} {
			r := run(t, "", append(args, "inspect", "k")...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, "holds a password") {
				t.Errorf("%v: exit %d %q, want 2 refusing a password on the command line", args, r.code, r.errOut)
			}
			noSecret(t, strings.Join(args, " "), r, secrets...)
		}
	})
	t.Run("config file", func(t *testing.T) {
		writeConfig(t, `current-context: q
contexts:
  q: {url: "redis://127.0.0.1:1?Password=ctx-Secret6&client_secret=ctx-Secret6"}
  c: {cluster: ["ops:ctxseed-Secret7@127.0.0.1:1", "127.0.0.1:2"]}
`)
		for _, args := range [][]string{
			{"config", "view"}, {"config", "view", "-o", "json"}, {"config", "get-contexts"}, {"config", "get-contexts", "-o", "yaml"},
			{"--dial-timeout", "300ms", "list"}, {"--dial-timeout", "300ms", "--context", "c", "list"}, {"--dial-timeout", "300ms", "--context", "c", "inspect", "k"},
		} {
			r := run(t, "", args...)
			noSecret(t, strings.Join(args, " "), r, secrets...)
			if args[0] == "config" && (r.code != ExitOK || !strings.Contains(r.out, "xxxxx")) {
				t.Errorf("%v: exit %d, want the config with its secrets as xxxxx: %q %q", args, r.code, r.out, r.errOut)
			}
		}
	})
}

// TestHostileNamesEscaped: context names from the config file holding escape sequences
// reach the terminal escaped (\x1b), in get-contexts (table and -o name), current-context,
// config view and the error line of a command that names the context.
func TestHostileNamesEscaped(t *testing.T) {
	t.Parallel()
	writeConfig(t, `current-context: "pr\e]0;owned\aod"
contexts:
  "pr\e]0;owned\aod": {url: "redis://127.0.0.1:1"}
  "x\e[2J": {user: "u\e[31m"}
`)
	for _, args := range [][]string{
		{"config", "get-contexts"}, {"config", "get-contexts", "-o", "name"}, {"config", "current-context"},
		{"config", "view"}, {"--context", "x\x1b[2J", "inspect", "k"}, {"--context", "pr", "inspect", "k"},
		{"--dial-timeout", "300ms", "inspect", "k"},
	} {
		r := run(t, "", args...)
		if strings.ContainsAny(r.out+r.errOut, "\x1b\a") {
			t.Errorf("%q: a raw escape reached the terminal: out %q err %q", args, r.out, r.errOut)
		}
		if r.out+r.errOut == "" {
			t.Errorf("%q: printed nothing", args)
		}
	}
	if r := run(t, "", "config", "get-contexts", "-o", "name"); !strings.Contains(r.out, `x\x1b[2J`) {
		t.Errorf("get-contexts -o name: %q, want the name with its escape shown as \\x1b", r.out)
	}
}

// TestEmptyServerIsAnError: a context whose server is empty (url: "") or missing, and a
// server variable set to nothing, are exit 2 naming the context or the variable; nothing
// silently talks to 127.0.0.1:6379. A typed flag still names the server.
func TestEmptyServerIsAnError(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	run(t, srv.URL(), "consume", "k", "--capacity", "1", "--rate", "1")
	writeConfig(t, `current-context: blank
contexts:
  blank: {url: ""}
  nocluster: {cluster: []}
  useronly: {user: ops, password-env: NOPE}
`)
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"inspect", "k"}, []string{`context "blank"`, "empty url"}},
		{[]string{"--context", "nocluster", "list"}, []string{`context "nocluster"`, "empty cluster"}},
		{[]string{"--context", "useronly", "consume", "k", "--capacity", "1", "--rate", "1"}, []string{`context "useronly"`, "names no server"}},
	} {
		r := run(t, "", c.args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d %q, want 2", c.args, r.code, r.errOut)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(r.errOut, w) {
				t.Errorf("%v: stderr lacks %q: %q", c.args, w, r.errOut)
			}
		}
		oneLine(t, r)
	}
	for _, k := range []string{"BUCKETCTL_URL", "BUCKETCTL_CLUSTER", "BUCKETCTL_SENTINEL_ADDRS"} {
		t.Run(k, func(t *testing.T) {
			writeConfig(t, "")
			for _, other := range []string{"BUCKETCTL_URL", "BUCKETCTL_CLUSTER", "BUCKETCTL_SENTINEL_ADDRS"} {
				setEnv(t, other, "") // unset: the subtests share the environment
			}
			setEnvEmpty(t, k)
			r := run(t, "", "inspect", "k")
			if r.code != ExitUsage || !strings.Contains(r.errOut, k) || !strings.Contains(r.errOut, "empty") {
				t.Errorf("%s set to nothing: exit %d %q, want 2 naming it", k, r.code, r.errOut)
			}
			// A typed flag names the server: the empty variable does not matter.
			if r := run(t, srv.URL(), "inspect", "k"); r.code != ExitOK {
				t.Errorf("--url over an empty %s: exit %d %q", k, r.code, r.errOut)
			}
		})
	}
	// The blank context with a typed --url: the flag names the server.
	if r := run(t, srv.URL(), "inspect", "k"); r.code != ExitOK {
		t.Errorf("--url over a blank context: exit %d %q", r.code, r.errOut)
	}
}

// TestTypedContextBeatsEnvironment: BUCKETCTL_URL=A bucketctl --context prod talks to
// prod's server, not A: a typed --context is a typed choice of server. Without the flag
// the variable wins over the file's current-context, as before.
func TestTypedContextBeatsEnvironment(t *testing.T) {
	t.Parallel()
	a, prod := redistest.Start(t), redistest.Start(t)
	ca, cprod := a.Client(t), prod.Client(t)
	writeConfig(t, `current-context: prod
contexts:
  prod: {url: "`+prod.URL()+`"}
`)
	setEnv(t, "BUCKETCTL_URL", a.URL())
	if r := run(t, "", "--context", "prod", "consume", "typed", "--capacity", "5", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("exit %d %q", r.code, r.errOut)
	}
	if ca.Exists(context.Background(), "typed").Val() != 0 || cprod.Exists(context.Background(), "typed").Val() != 1 {
		t.Fatalf("--context prod with BUCKETCTL_URL set wrote to the variable's server, not prod's")
	}
	if r := run(t, "", "consume", "untyped", "--capacity", "5", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("exit %d %q", r.code, r.errOut)
	}
	if ca.Exists(context.Background(), "untyped").Val() != 1 || cprod.Exists(context.Background(), "untyped").Val() != 0 {
		t.Fatalf("BUCKETCTL_URL without a typed --context should win over current-context")
	}
}
