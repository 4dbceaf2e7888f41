package http_test

import (
	"slices"
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

// settle polls GET path until the resource it answers (the member kind of
// its body) has one of the final statuses, and returns it; after 15 seconds
// the test fails.
func (s *stack) settle(kind, path string, final ...string) map[string]any {
	s.t.Helper()
	var r response
	var v map[string]any
	if !eventually(15*time.Second, func() bool {
		r = s.do("GET", path, s.key, nil)
		s.mustStatus(r, 200)
		v = r.json(s.t)[kind].(map[string]any)
		status, _ := v["status"].(string)
		return slices.Contains(final, status)
	}) {
		s.t.Fatalf("%s %s stuck: %s", kind, path, r.body)
	}
	return v
}
