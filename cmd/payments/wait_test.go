package main

import (
	"testing"
	"time"

	"payments/internal/wait"
)

// pollInterval is how often the end-to-end tests check a condition: each
// check may be a request to a running node.
const pollInterval = 10 * time.Millisecond

// waitUntil waits until cond holds, or fails the test after timeout naming
// what it waited for.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, timeout, pollInterval, what, cond)
}

// eventually reports whether cond holds within timeout. (A scenario that
// needs real time to pass — a node frozen for three seconds, a client's
// back-off — says so with a sleep; waiting for something to happen is
// this.)
func eventually(timeout time.Duration, cond func() bool) bool {
	return wait.Until(timeout, pollInterval, cond)
}
