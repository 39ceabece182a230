package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

const commentedConfig = `# team contexts
current-context: local # the default
contexts:
  # the laptop
  local: {url: "redis://127.0.0.1:6379"}
  prod:
    cluster: ["10.0.0.1:6379"]
    user: ops
    password: hunter2-secret # to move to password-env
    url: redis://u:UrlSecret@h:1
rules:
  - {match: "rate:user:*", layout: express, capacity: 100, rate: 10}
`

func configFile(t *testing.T) string {
	t.Helper()
	return filepath.Join(getEnv(t, "XDG_CONFIG_HOME"), "bucketctl", "config.yaml")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigViewAndGet: view prints the file with its comments and no password; the
// listing verbs read the contexts.
func TestConfigViewAndGet(t *testing.T) {
	t.Parallel()
	writeConfig(t, commentedConfig)
	r := run(t, "", "config", "view")
	if r.code != ExitOK || strings.Contains(r.out, "hunter2") || strings.Contains(r.out, "UrlSecret") ||
		!strings.Contains(r.out, "password: xxxxx") || !strings.Contains(r.out, "redis://u:xxxxx@h:1") ||
		!strings.Contains(r.out, "# the laptop") || !strings.Contains(r.out, "# team contexts") {
		t.Fatalf("config view: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	r = run(t, "", "config", "view", "-o", "json")
	var v map[string]any
	if r.code != ExitOK || json.Unmarshal([]byte(r.out), &v) != nil || strings.Contains(r.out, "hunter2") || strings.Contains(r.out, "UrlSecret") || v["current-context"] != "local" {
		t.Fatalf("config view -o json: exit %d %s", r.code, r.out)
	}
	r = run(t, "", "config", "get-contexts")
	if r.code != ExitOK || !strings.Contains(contextLine(r.out, "local"), "*") || strings.Contains(contextLine(r.out, "prod"), "*") ||
		!strings.Contains(contextLine(r.out, "prod"), "cluster 10.0.0.1:6379") || strings.Contains(r.out, "Secret") {
		t.Fatalf("get-contexts: exit %d\n%s", r.code, r.out)
	}
	if r := run(t, "", "config", "get-contexts", "-o", "name"); r.out != "local\nprod\n" {
		t.Fatalf("get-contexts -o name: %q", r.out)
	}
	if r := run(t, "", "config", "get-contexts", "nope"); r.code != ExitUsage || !strings.Contains(r.errOut, `"nope" not found`) {
		t.Fatalf("get-contexts nope: %d %q", r.code, r.errOut)
	}
	if r := run(t, "", "config", "current-context"); r.code != ExitOK || r.out != "local\n" {
		t.Fatalf("current-context: %d %q", r.code, r.out)
	}
	writeConfig(t, "contexts:\n  a: {url: \"redis://127.0.0.1:1\"}\n")
	if r := run(t, "", "config", "current-context"); r.code != ExitError || !strings.Contains(r.errOut, "use-context") {
		t.Fatalf("current-context unset: %d %q", r.code, r.errOut)
	}
	if r := run(t, "", "config", "bogus"); r.code != ExitUsage {
		t.Fatalf("config bogus: %d %q", r.code, r.errOut)
	}
}

// TestConfigUseAndSetContext: the editing verbs write the file in place, keep its
// comments and other keys, refuse unknown contexts and passwords on the command line,
// and the context they write is the one the next command connects through.
func TestConfigUseAndSetContext(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	path := configFile(t)

	// set-context creates a private file.
	if r := run(t, "", "config", "set-context", "sandbox", "--url", srv.Addr(), "--password-env", "SANDBOX_PW"); r.code != ExitOK {
		t.Fatalf("set-context on no file: %d %q", r.code, r.errOut)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("new config file: %v %v", st, err)
	}
	writeConfig(t, commentedConfig)
	if r := run(t, "", "config", "set-context", "sandbox", "--url", srv.Addr()); r.code != ExitOK {
		t.Fatalf("set-context sandbox: %d %q", r.code, r.errOut)
	}
	body := readFile(t, path)
	for _, want := range []string{"# team contexts", "# the laptop", "# to move to password-env", "current-context: local", "sandbox:", "url: redis://" + srv.Addr(), "rate:user:*"} {
		if !strings.Contains(body, want) {
			t.Fatalf("after set-context the file lacks %q:\n%s", want, body)
		}
	}
	// use-context: unknown is exit 2 and leaves the file alone; known switches.
	if r := run(t, "", "config", "use-context", "sandbx"); r.code != ExitUsage || !strings.Contains(r.errOut, `did you mean "sandbox"?`) || readFile(t, path) != body {
		t.Fatalf("use-context sandbx: %d %q", r.code, r.errOut)
	}
	if r := run(t, "", "config", "use-context", "sandbox"); r.code != ExitOK || !strings.Contains(readFile(t, path), "current-context: sandbox # the default") {
		t.Fatalf("use-context sandbox: %d %q\n%s", r.code, r.errOut, readFile(t, path))
	}
	// The next command connects through it (and finds no such key: exit 6).
	if r := run(t, "", "inspect", "nokey", "-o", "json"); r.code != ExitNoKey || !strings.Contains(r.out, `"key": "nokey"`) {
		t.Fatalf("inspect through the new context: %d %q %q", r.code, r.out, r.errOut)
	}
	// --current changes it; --unset removes a field; a password in --url is refused.
	if r := run(t, "", "config", "set-context", "--current", "--user", "ops", "--tls-ca", "/ca.pem"); r.code != ExitOK {
		t.Fatalf("set-context --current: %d %q", r.code, r.errOut)
	}
	if r := run(t, "", "config", "set-context", "sandbox", "--unset", "tls-ca"); r.code != ExitOK {
		t.Fatalf("set-context --unset: %d %q", r.code, r.errOut)
	}
	r := run(t, "", "config", "get-contexts", "sandbox", "-o", "json")
	if !strings.Contains(r.out, `"user": "ops"`) || strings.Contains(readFile(t, path), "/ca.pem") {
		t.Fatalf("after --current/--unset: %s\n%s", r.out, readFile(t, path))
	}
	before := readFile(t, path)
	r = run(t, "", "config", "set-context", "sandbox", "--url", "redis://:ArgvSecret@"+srv.Addr())
	if r.code != ExitUsage || strings.Contains(r.errOut, "ArgvSecret") || !strings.Contains(r.errOut, "--password-env") || readFile(t, path) != before {
		t.Fatalf("set-context with a password in --url: %d %q", r.code, r.errOut)
	}
	// Naming the server in another form replaces the old one: the context names one server.
	if r := run(t, "", "config", "set-context", "sandbox", "--cluster", "127.0.0.1:7000"); r.code != ExitOK {
		t.Fatalf("set-context --cluster on a url context: %d %q", r.code, r.errOut)
	}
	server := func() string {
		r := run(t, "", "config", "get-contexts", "sandbox", "-o", "json")
		var ctxs []struct{ Server string }
		if err := json.Unmarshal([]byte(r.out), &ctxs); err != nil || len(ctxs) != 1 {
			t.Fatalf("get-contexts sandbox: %v %q %q", err, r.out, r.errOut)
		}
		return ctxs[0].Server
	}
	if got := server(); got != "cluster 127.0.0.1:7000" {
		t.Fatalf("after set-context --cluster on a url context the server is %q\n%s", got, readFile(t, path))
	}
	if r := run(t, "", "config", "set-context", "sandbox", "--url", srv.Addr()); r.code != ExitOK || server() != "redis://"+srv.Addr() {
		t.Fatalf("set-context --url on a cluster context: %d %q, server %q", r.code, r.errOut, server())
	}
	before = readFile(t, path)
	for args, want := range map[string]string{
		"sandbox --url 127.0.0.1:1 --cluster 127.0.0.1:2": "--url and --cluster both name the server",
		"a --current": "not both",
		"":            "needs a context name, or --current",
		"a b":         "takes one context name, got 2",
	} {
		r := run(t, "", append([]string{"config", "set-context"}, strings.Fields(args)...)...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, want) || readFile(t, path) != before {
			t.Fatalf("set-context %s: %d %q, want %q", args, r.code, r.errOut, want)
		}
	}
}

// contextLine is get-contexts' row of name.
func contextLine(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "*")); len(f) > 0 && f[0] == name {
			return l
		}
	}
	return ""
}

// TestSetContextCreatesNamedFile: --config naming a file that does not exist yet is created
// by the verbs that write (set-context), as their help says, where reading commands refuse
// it; use-context of it names the file to create.
func TestSetContextCreatesNamedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.yaml")
	if r := run(t, "", "--config", path, "config", "use-context", "dev"); r.code != ExitUsage || !strings.Contains(r.errOut, "there is no config file ("+path+")") {
		t.Fatalf("use-context on a missing --config file: %d %q", r.code, r.errOut)
	}
	if r := run(t, "", "--config", path, "config", "set-context", "dev", "--url", "127.0.0.1:6379"); r.code != ExitOK {
		t.Fatalf("set-context on a missing --config file: %d %q", r.code, r.errOut)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(readFile(t, path), "url: redis://127.0.0.1:6379") {
		t.Fatalf("the new file: %v %v\n%s", st, err, readFile(t, path))
	}
	if r := run(t, "", "--config", path, "config", "use-context", "dev"); r.code != ExitOK || !strings.Contains(readFile(t, path), "current-context: dev") {
		t.Fatalf("use-context dev: %d %q", r.code, r.errOut)
	}
	missing := filepath.Join(t.TempDir(), "none.yaml")
	if r := run(t, "", "--config", missing, "config", "view"); r.code != ExitUsage || !strings.Contains(r.errOut, "no such file") {
		t.Fatalf("view of a missing --config file: %d %q", r.code, r.errOut)
	}
}
