package redistest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after timeout with "timed out
// waiting for what".
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Poll polls cond until it holds or timeout passes, and says whether it held: WaitFor for a
// goroutine that may not fail the test itself.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
