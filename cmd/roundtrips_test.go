package cmd

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestInspectRoundTrips: inspect of one key makes two round trips, as few as go-redis
// allows (its HELLO, then one pipeline holding the reachability PING, TIME and the read),
// once its read script is loaded; the first run after a restart adds one (NOSCRIPT, then
// SCRIPT LOAD with the read).
func TestInspectRoundTrips(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	admin.HSet(ctx, "k", "tokens", "1", "ts", "1")
	// Each server read event is one client round trip, or the client closing its
	// connection; INFO's own is one.
	reads := func() int64 {
		t.Helper()
		for _, l := range strings.Split(admin.Info(ctx, "stats").Val(), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_reads_processed:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatal("no total_reads_processed in INFO stats")
		return 0
	}
	for i, want := range []int64{3, 2, 2} {
		before := reads()
		if r := run(t, srv.URL(), "inspect", "k"); r.code != ExitOK {
			t.Fatalf("inspect: %d %q", r.code, r.errOut)
		}
		polls := int64(0) // the close is a read event the server may handle after an INFO
		redistest.WaitFor(t, 5*time.Second, "the server to see inspect's connection close", func() bool {
			polls++
			return strings.Contains(admin.Info(ctx, "clients").Val(), "connected_clients:1\r")
		})
		if got := reads() - before - 1 - polls - 1; got != want { // INFO, the wait's, inspect's close
			t.Errorf("inspect run %d made %d round trips, want %d", i+1, got, want)
		}
	}
}
