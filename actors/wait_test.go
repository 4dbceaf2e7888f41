package actors_test

import (
	"testing"
	"time"

	"payments/internal/wait"
)

// waitFor waits until cond holds, checking it every few milliseconds, or
// fails the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, 10*time.Second, 5*time.Millisecond, what, cond)
}

// eventually reports whether cond holds within timeout.
func eventually(timeout time.Duration, cond func() bool) bool {
	return wait.Until(timeout, 5*time.Millisecond, cond)
}
