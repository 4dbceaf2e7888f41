package actors_test

import (
	"testing"
	"time"
)

// waitFor waits until cond holds, checking it every few milliseconds, or
// fails the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !eventually(10*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// eventually reports whether cond holds within timeout.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}
