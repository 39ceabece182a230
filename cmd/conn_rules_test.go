package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestOneServerIsNamed: --url, --cluster and the Sentinel flags (or their variables) name
// the server; two of them together, or --sentinel-addrs without --sentinel-master, are a
// usage error naming both, never a silent choice of one. One given replaces the context's
// server, whatever form the context gives it in. Nothing is written anywhere.
func TestOneServerIsNamed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	consume := []string{"consume", "k", "--capacity", "5", "--rate", "1"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"url and cluster", nil, []string{"--url", srv.URL(), "--cluster", srv.Addr()}, []string{"--url and --cluster both name the server"}},
		{"url and sentinel", nil, []string{"--url", srv.URL(), "--sentinel-master", "m", "--sentinel-addrs", srv.Addr()},
			[]string{"--url and --sentinel-master both name the server"}},
		{"two variables", map[string]string{"BUCKETCTL_CLUSTER": srv.Addr(), "BUCKETCTL_URL": srv.URL()}, nil,
			[]string{"BUCKETCTL_URL and BUCKETCTL_CLUSTER both name the server"}},
		// redis-cli reads redis://NAME@host's NAME as a password: never printed.
		{"user info without a colon, typed", nil, []string{"--url", "redis://S3cr3tPW@" + srv.Addr()},
			[]string{"--url has user info but no password"}},
		{"user info without a colon, from the environment", map[string]string{"BUCKETCTL_URL": "redis://S3cr3tPW@" + srv.Addr()}, nil,
			[]string{"BUCKETCTL_URL has user info but no password"}},
		{"sentinel addrs alone", nil, []string{"--sentinel-addrs", srv.Addr()}, []string{"--sentinel-addrs needs --sentinel-master"}},
		{"user without password", nil, []string{"--url", srv.URL(), "--user", "ops"}, []string{`--user "ops" has no password`, "REDISCLI_AUTH"}},
		{"user from the environment", map[string]string{"BUCKETCTL_USER": "ops"}, []string{"--url", srv.URL()}, []string{`BUCKETCTL_USER "ops" has no password`}},
		{"negative timeout", nil, []string{"--url", srv.URL(), "--timeout", "-1s"}, []string{"--timeout -1s: must be above 0"}},
		{"zero dial timeout", nil, []string{"--url", srv.URL(), "--dial-timeout", "0s"}, []string{"--dial-timeout 0s: must be above 0"}},
		{"timeout variable not a duration", map[string]string{"BUCKETCTL_TIMEOUT": "abc"}, []string{"--url", srv.URL()},
			[]string{`BUCKETCTL_TIMEOUT="abc": not a valid --timeout`}},
		{"url with two ports", nil, []string{"--url", "redis://127.0.0.1:6379:6380"}, []string{"too many colons", "use host:port"}},
		{"url port out of range", nil, []string{"--url", "127.0.0.1:99999"}, []string{`the port "99999" is not a number from 1 to 65535`}},
		{"cluster seed without a port", nil, []string{"--cluster", "bad:host:x"}, []string{"--cluster bad:host:x: too many colons"}},
		{"sentinel without a port", nil, []string{"--sentinel-master", "m", "--sentinel-addrs", "10.0.0.9"}, []string{"--sentinel-addrs 10.0.0.9: missing port"}},
		{"database out of range", nil, []string{"--url", srv.URL() + "/99"}, []string{"the server has no database 99", "DB index is out of range"}},
		// An unset $HOST, a negative or doubled database: each would silently mean the
		// test server's db 0 (checked empty below).
		{"url with an empty host", nil, []string{"--url", fmt.Sprintf("redis://:%d", srv.Port())}, []string{"the host is empty", "redis://localhost:6379"}},
		{"negative database", nil, []string{"--url", srv.URL() + "/-1"}, []string{`the database "-1" is not a number`}},
		{"database in path and query", nil, []string{"--url", srv.URL() + "/1?db=0"}, []string{"the database is named 2 times (path /1, db=0): name it once"}},
		{"database twice in the query", nil, []string{"--url", srv.URL() + "?db=1&db=0"}, []string{"(db=1, db=0): name it once"}},
		{"empty host in the environment", map[string]string{"BUCKETCTL_URL": fmt.Sprintf(":%d", srv.Port())}, nil, []string{"BUCKETCTL_URL", "the host is empty"}},
		{"cluster flag on a standalone server", nil, []string{"--cluster", srv.Addr()}, []string{"not a Cluster node", "use --url"}},
		{"escape in an unknown flag", nil, []string{"--url", srv.URL(), "--x\x1b[2J=1"}, []string{`unknown flag: --x\x1b[2J`}},
		{"bool variable not a bool", map[string]string{"BUCKETCTL_INSECURE_SKIP_VERIFY": "maybe"}, []string{"--url", srv.URL()},
			[]string{`BUCKETCTL_INSECURE_SKIP_VERIFY="maybe"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runEnv(t, tc.env, "", append(tc.args, consume...)...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d %q, want %d", r.code, r.errOut, ExitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.errOut, w) {
					t.Fatalf("stderr %q lacks %q", r.errOut, w)
				}
			}
			oneLine(t, r)
			if strings.Contains(r.errOut, "S3cr3tPW") {
				t.Fatalf("a password reached stderr: %q", r.errOut)
			}
			if strings.ContainsRune(r.errOut, 0x1b) {
				t.Fatalf("an escape byte reached stderr: %q", r.errOut)
			}
		})
	}
	if n := c.DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("%d keys written by refused commands", n)
	}

	// A flag beats a variable naming another form of server (an exported BUCKETCTL_CLUSTER
	// in the operator's shell), as flags beat variables everywhere.
	if r := runEnv(t, map[string]string{"BUCKETCTL_CLUSTER": "127.0.0.1:1"}, srv.URL(), consume...); r.code != ExitOK {
		t.Fatalf("--url over BUCKETCTL_CLUSTER: exit %d %q", r.code, r.errOut)
	}
	setEnv(t, "BUCKETCTL_CLUSTER", "")
	// A password in BUCKETCTL_URL serves --user (go-redis reads it from the URL).
	if err := c.Do(context.Background(), "ACL", "SETUSER", "ops", "on", ">opsPW1", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	if r := runEnv(t, map[string]string{"BUCKETCTL_URL": "redis://:opsPW1@" + srv.Addr()}, "", append([]string{"--user", "ops"}, consume...)...); r.code != ExitOK {
		t.Fatalf("--user with the password in BUCKETCTL_URL: exit %d %q", r.code, r.errOut)
	}
	setEnv(t, "BUCKETCTL_URL", "")

	// A flag's server replaces the context's, whatever its form: --url over a context's
	// cluster is that URL, not an error.
	writeConfig(t, "current-context: c\ncontexts:\n  c: {cluster: [\"127.0.0.1:1\"]}\n")
	if r := run(t, srv.URL(), consume...); r.code != ExitOK {
		t.Fatalf("--url over a context's cluster: exit %d %q", r.code, r.errOut)
	}
	// Nor does it need the replaced Sentinel's credentials (an unset sentinel-password-env).
	writeConfig(t, "current-context: s\ncontexts:\n  s: {sentinel-master: m, sentinel-addrs: [\"127.0.0.1:1\"], sentinel-user: sv, sentinel-password-env: BUCKETCTL_TEST_UNSET}\n")
	if r := run(t, srv.URL(), consume...); r.code != ExitOK {
		t.Fatalf("--url over a Sentinel context: exit %d %q", r.code, r.errOut)
	}
	writeConfig(t, "current-context: two\ncontexts:\n  two: {url: \"redis://127.0.0.1:1\", cluster: [\"127.0.0.1:2\"]}\n")
	if r := run(t, "", consume...); r.code != ExitUsage || !strings.Contains(r.errOut, `context "two" names more than one server`) {
		t.Fatalf("a context with a url and a cluster: exit %d %q", r.code, r.errOut)
	}
}
