package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

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
