package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestLoadRefusedWritesAdvice: a load whose every request the server refuses (a replica's
// READONLY, a full server's OOM) ends as consume's refused write does: one line with the
// key, the server, the reply without the script's SHA1 and line, and the fix, exit 1; the
// report's error lines carry no SHA1 either, and no key is said to be left behind (none was
// written).
func TestLoadRefusedWritesAdvice(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	replica := redistest.Start(t, redistest.WithReplicaOf(master))
	full := redistest.Start(t)
	if err := full.Client(t).ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		srv  *redistest.Server
		want []string
	}{
		{"replica", replica, []string{"READONLY You can't write against a read only replica", "this is a replica: point --url (or the context) at the master"}},
		{"full", full, []string{"OOM command not allowed when used memory > 'maxmemory'", "raise maxmemory"}},
	} {
		r := run(t, tc.srv.URL(), "load", "api", "--capacity", "10", "--rate", "10", "--duration", "300ms")
		checkWriteLine(t, tc.name, r, append([]string{`bucketctl: load "bucketctl:load:api" on ` + tc.srv.Addr() + " (every request failed): "}, tc.want...)...)
		if strings.Contains(r.out+r.errOut, "script:") || strings.Contains(r.out+r.errOut, "left behind") {
			t.Errorf("%s: a script's SHA1 or a key left behind in the output: %q %q", tc.name, r.out, r.errOut)
		}
	}
}

// TestLoadCleanupNamesOnlyKeysThatExist: when the clean-up fails (here the user may not
// run scripts), the error names the run's keys that exist, and none that was never
// written: with no such key it is no error at all.
func TestLoadCleanupNamesOnlyKeysThatExist(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACL("noscripts on >pw ~* +@all -eval -evalsha"))
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.HSet(ctx, "bucketctl:load:written", "tokens", "1", "ts", "1795428012266123", "capacity", "10", "rate", "1").Err(); err != nil {
		t.Fatal(err)
	}
	o := srv.Options()
	o.Username, o.Password = "noscripts", "pw"
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	if err := loadCleanup(c, []string{"bucketctl:load:never"}, time.Second); err != nil {
		t.Fatalf("a key never written: %v, want no error", err)
	}
	err := loadCleanup(c, []string{"bucketctl:load:never", "bucketctl:load:written"}, time.Second)
	if err == nil || !strings.Contains(err.Error(), "bucketctl:load:written") || strings.Contains(err.Error(), "never") {
		t.Fatalf("the clean-up's error %v: want it to name the written key alone", err)
	}
}
