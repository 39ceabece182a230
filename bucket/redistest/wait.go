package redistest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after timeout with "timed out
// waiting for what".
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
