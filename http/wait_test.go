package http_test

import (
	"testing"
	"time"
)

// waitFor waits until cond holds, or fails the test after timeout naming
// what it waited for.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !eventually(timeout, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// eventually reports whether cond holds within timeout, checking it every
// few milliseconds. (A test that needs real time to pass says so with a
// sleep; waiting for something to happen is this.)
func eventually(timeout time.Duration, cond func() bool) bool {
	return eventuallyEvery(timeout, 5*time.Millisecond, cond)
}

// eventuallyEvery is eventually checking cond once every interval: a
// condition that is a request to a rate-limited endpoint is asked no faster
// than the limit allows, or the wait itself is refused.
func eventuallyEvery(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
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
