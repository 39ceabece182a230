package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestSentinelCredentialsAreSeparate: the data nodes' password never goes to the sentinels
// unless asked for; the sentinels' own user and password come from their own flag and env.
func TestSentinelCredentialsAreSeparate(t *testing.T) {
	t.Parallel()
	conn := func(args ...string) *ConnOptions {
		t.Helper()
		io, _, _, _ := TestIO()
		f := newTestFactory(t, io, VersionInfo{})
		root := NewCmdRoot(f)
		if err := root.PersistentFlags().Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := root.PersistentPreRunE(root, nil); err != nil {
			t.Fatal(err)
		}
		o, err := f.Conn()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	setEnv(t, "BUCKETCTL_PASSWORD", "data-secret")
	o := conn("--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:1,127.0.0.1:2", "--user", "app")
	if o.password != "data-secret" || o.User != "app" || o.sentinelPassword != "" || o.SentinelUser != "" {
		t.Fatalf("sentinels would get the data nodes' credentials: %+v", o)
	}
	if len(o.SentinelAddrs) != 2 {
		t.Fatalf("sentinel addrs %v", o.SentinelAddrs)
	}
	setEnv(t, "BUCKETCTL_SENTINEL_PASSWORD", "sentinel-secret")
	o = conn("--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:1", "--sentinel-user", "watcher")
	if o.sentinelPassword != "sentinel-secret" || o.SentinelUser != "watcher" || o.password != "data-secret" {
		t.Fatalf("sentinel credentials: %+v", o)
	}
}

// TestNoRefusedCommands: runs leave nothing in the server's error statistics, which
// operators alert on: no CLIENT SETINFO or maintenance-notification handshake for an
// older server to refuse (go-redis sent three such commands on every connection). The one
// error a server sees from bucketctl is NOSCRIPT, once per script after a restart or
// SCRIPT FLUSH: EVALSHA's fallback, which the first round below goes through.
func TestNoRefusedCommands(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	commands := [][]string{{"consume", "k", "--capacity", "5", "--rate", "1"}, {"inspect", "k"}, {"check", "k"}, {"list"}}
	for round := range 2 {
		if err := c.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		for _, args := range commands {
			if r := run(t, srv.URL(), args...); r.code != ExitOK {
				t.Fatalf("%v: exit %d %s", args, r.code, r.errOut)
			}
		}
		info, err := c.Info(ctx, "errorstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(info, "\n") {
			if strings.HasPrefix(l, "errorstat_") && (round > 0 || !strings.HasPrefix(l, "errorstat_NOSCRIPT:")) {
				t.Errorf("round %d: the server counted an error from bucketctl's commands: %s", round, strings.TrimSpace(l))
			}
		}
	}
}
