package redistest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stall blocks the server at addr with DEBUG SLEEP for seconds and returns once it has
// stopped answering (a PING on a connection of its own times out), so a test's next
// command meets a stalled server, whatever the machine's load. awake waits for the
// sleep to end.
func Stall(t testing.TB, addr, seconds string) (awake func()) {
	t.Helper()
	secs, err := strconv.ParseFloat(seconds, 64)
	if err != nil {
		t.Fatalf("Stall: seconds %q: %v", seconds, err)
	}
	wait := time.Duration(secs*float64(time.Second)) + 5*time.Second
	sleeper := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: wait, MaxRetries: -1})
	done := make(chan error, 1)
	go func() { done <- sleeper.Do(context.Background(), "DEBUG", "SLEEP", seconds).Err() }()
	probe := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 50 * time.Millisecond, MaxRetries: -1, PoolSize: 1})
	defer probe.Close()
	WaitFor(t, 3*time.Second, fmt.Sprintf("%s to stall under DEBUG SLEEP %s", addr, seconds), func() bool {
		return probe.Ping(context.Background()).Err() != nil
	})
	return func() {
		t.Helper()
		defer sleeper.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("DEBUG SLEEP on %s: %v", addr, err)
			}
		case <-time.After(wait):
			t.Fatalf("DEBUG SLEEP %s on %s did not return within %s", seconds, addr, wait)
		}
	}
}
