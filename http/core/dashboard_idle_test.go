package core

import (
	"fmt"
	"testing"
	"time"

	"payments/actors/app"
)

// A session is idle once unused for longer than the timeout; an idle one
// is forgotten (its caller ends it); a sweep drops only sessions past
// their whole lifetime, so that one merely idle is still found idle.
func TestSessionIdle(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newSessionIdle(30 * time.Minute)
	for i, step := range []struct {
		at   time.Duration
		idle bool
	}{
		{0, false},
		{30 * time.Minute, false}, // exactly the timeout after the last use: still live
		{60 * time.Minute, false},
		{90*time.Minute + time.Nanosecond, true},
		{90*time.Minute + 2*time.Nanosecond, false}, // forgotten: what comes next is a new start
	} {
		if got := s.Use("dss_a", t0.Add(step.at)); got != step.idle {
			t.Fatalf("step %d (%v): idle %v, want %v", i, step.at, got, step.idle)
		}
	}
	s.Forget("dss_a")
	if s.Use("dss_a", t0.Add(1000*time.Hour)) {
		t.Fatal("a forgotten session was found idle")
	}

	// Past the sweep size: the idle ones stay, those past their lifetime go.
	s = newSessionIdle(30 * time.Minute)
	s.Use("dss_idle", t0)
	s.Use("dss_old", t0.Add(-app.DashboardSessionLifetime))
	now := t0.Add(time.Hour)
	for i := range 1024 {
		s.Use(fmt.Sprint("dss_", i), now)
	}
	if _, ok := s.lastUse["dss_old"]; ok {
		t.Fatal("the sweep kept a session past its lifetime")
	}
	if !s.Use("dss_idle", now) {
		t.Fatal("the sweep forgot an idle session: it came back live")
	}

	if newSessionIdle(-1).Use("dss_x", t0) || newSessionIdle(-1).Use("dss_x", t0.Add(100*time.Hour)) {
		t.Fatal("a negative timeout ended a session")
	}
}

func TestIdleWords(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute: "30 minutes", time.Hour: "1 hour", 2 * time.Hour: "2 hours",
		90 * time.Minute: "90 minutes", time.Minute: "1 minute", 2 * time.Second: "2 seconds",
	} {
		if got := IdleWords(d); got != want {
			t.Errorf("idleWords(%v) = %q, want %q", d, got, want)
		}
	}
}
