package main

import (
	"testing"
	"time"
)

// waitUntil waits until cond holds, checking it every few milliseconds, or
// fails the test after timeout naming what it waited for.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !eventually(timeout, cond) {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

// eventually reports whether cond holds within timeout. (A scenario that
// needs real time to pass — a node frozen for three seconds, a client's
// back-off — says so with a sleep; waiting for something to happen is
// this.)
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
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
