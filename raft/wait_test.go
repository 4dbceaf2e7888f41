package raft_test

import (
	"testing"
	"time"
)

// waitFor waits until cond holds, checking it every few milliseconds, or
// fails the test after timeout naming what it waited for.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !eventually(timeout, cond) {
		t.Fatalf("%s: not within %v", what, timeout)
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
