package cmd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestResetRace: application data is written over keys while a bulk reset of 20,000 buckets
// runs; every key the application wrote keeps what it wrote last.
func TestResetRace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := "redis://" + srv.Addr()
	ctx := context.Background()
	const n = 20000
	pipe := c.Pipeline()
	for i := 0; i < n; i++ {
		pipe.HSet(ctx, fmt.Sprintf("race:%05d", i), "tokens", "3", "last_refill", "1700000000.5")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var written sync.Map
	var during atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		// The application replaces buckets with its own hashes, whole, one at a time,
		// until the reset has finished.
		defer wg.Done()
		for i := 0; !done.Load() && i < n; i += 7 {
			k := fmt.Sprintf("race:%05d", i)
			v := fmt.Sprintf("user-%d", i)
			_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Del(ctx, k)
				p.HSet(ctx, k, "tokens", "3", "last_refill", "1700000000.5", "email", v)
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
			written.Store(k, v)
			during.Add(1)
		}
	}()
	r := run(t, url, "reset", "--match", "race:*", "--layout", "express", "--yes")
	done.Store(true)
	wg.Wait()
	if r.code != 0 {
		t.Fatalf("reset: %+v", r)
	}
	if during.Load() == 0 {
		t.Fatal("the application wrote nothing while the reset ran: no race was tested")
	}
	lost := 0
	written.Range(func(k, v any) bool {
		if got := c.HGet(ctx, k.(string), "email").Val(); got != v.(string) {
			lost++
		}
		return true
	})
	if lost > 0 {
		t.Fatalf("%d of %d application keys written during the reset were lost", lost, during.Load())
	}
	// Every bucket the application did not replace is gone.
	left := 0
	iter := c.Scan(ctx, 0, "race:*", 1000).Iterator()
	for iter.Next(ctx) {
		if _, ok := written.Load(iter.Val()); !ok {
			left++
		}
	}
	if left > 0 {
		t.Fatalf("%d buckets were not reset", left)
	}
}

// TestResetMatchInterrupted: Ctrl-C during a bulk reset stops after the batch in flight,
// exits 130 and reports exactly how many buckets were reset.
func TestResetMatchInterrupted(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const n = 30000
	pipe := c.Pipeline()
	for i := 0; i < n; i++ {
		pipe.HSet(ctx, fmt.Sprintf("int:%05d", i), "tokens", "3", "last_refill", "1700000000.5")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	io, _, out, errOut := testStreams()
	f := newTestFactory(t, io, VersionInfo{Version: "test"})
	done := make(chan int, 1)
	go func() {
		done <- Run(runCtx, f, []string{"--url", "redis://" + srv.Addr(), "reset", "--match", "int:*", "--layout", "express", "--yes"})
	}()
	// Ctrl-C as soon as the first batch has gone.
	redistest.WaitFor(t, 10*time.Second, "the first batch of resets", func() bool { return c.DBSize(ctx).Val() < n })
	cancel()
	code := <-done
	left := c.DBSize(ctx).Val()
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s %s", code, ExitInterrupted, out, errOut)
	}
	if left == 0 {
		t.Fatal("every bucket was reset: the interrupt did not stop the run")
	}
	want := fmt.Sprintf("interrupted: stopped after %s bucket(s)", fmtCount(int(n-left)))
	if !strings.Contains(errOut.String(), want) {
		t.Fatalf("stderr %q, want %q (%d of %d left)", errOut, want, left, n)
	}
}
