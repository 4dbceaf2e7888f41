package wait

import (
	"testing"
	"time"
)

// Until reports whether cond holds within timeout, checking it every
// interval and once more at the deadline.
func Until(timeout, interval time.Duration, cond func() bool) bool {
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

// For waits until cond holds, checking it every interval, or fails t
// after timeout naming what it waited for.
func For(t testing.TB, timeout, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(timeout, interval, cond) {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}
