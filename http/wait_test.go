package http_test

import (
	"testing"
	"time"

	"payments/actors/actorstest/wait"
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
	return wait.Until(timeout, 5*time.Millisecond, cond)
}
