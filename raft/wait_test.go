package raft_test

import (
	"testing"
	"time"

	"payments/actors/actorstest/wait"
)

// pollInterval is how often the tests check a condition.
const pollInterval = 5 * time.Millisecond

// waitFor waits until cond holds, checking it every few milliseconds, or
// fails the test after timeout naming what it waited for.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, timeout, pollInterval, what, cond)
}

// eventually reports whether cond holds within timeout.
func eventually(timeout time.Duration, cond func() bool) bool {
	return wait.Until(timeout, pollInterval, cond)
}
