package core

import (
	"sync"
	"time"

	"payments/actors/app"
)

// DashboardIdleTimeoutDefault is how long a dashboard session may go
// unused before it ends (Config.DashboardIdleTimeout).
const DashboardIdleTimeoutDefault = 30 * time.Minute

// sessionIdle is when each dashboard session was last used, as the leader
// saw it. Every dashboard request is relayed to the leader, so the leader
// sees every use; this is its memory, not replicated state, because a use
// is not worth a log entry. A new leader (or a restart) starts each
// session's idle time afresh: a session can outlive its idle timeout by
// the time since the last leader change, never past its lifetime
// (app.DashboardSessionLifetime).
type sessionIdle struct {
	timeout time.Duration // 0: sessions never end for idleness

	mu        sync.Mutex
	lastUse   map[string]time.Time // session id → its last use
	sweepSize int                  // the map's size that triggers the next sweep
}

func newSessionIdle(timeout time.Duration) *sessionIdle {
	return &sessionIdle{timeout: max(timeout, 0), lastUse: make(map[string]time.Time), sweepSize: 1024}
}

// use records a use of the session id at now, and reports whether the
// session had been unused for longer than the timeout before it; an idle
// session is forgotten (its caller ends it).
func (s *sessionIdle) Use(id string, now time.Time) (idle bool) {
	if s.timeout == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.lastUse[id]; ok && now.Sub(last) > s.timeout {
		delete(s.lastUse, id)
		return true
	}
	s.lastUse[id] = now
	if len(s.lastUse) >= s.sweepSize {
		// Only sessions past their whole lifetime go: one merely idle must
		// still be found idle when it comes back.
		for sid, last := range s.lastUse {
			if now.Sub(last) > app.DashboardSessionLifetime {
				delete(s.lastUse, sid)
			}
		}
		s.sweepSize = max(1024, 2*len(s.lastUse))
	}
	return false
}

// forget drops a session that ended.
func (s *sessionIdle) Forget(id string) {
	s.mu.Lock()
	delete(s.lastUse, id)
	s.mu.Unlock()
}

// idleWords says an idle timeout in words: "30 minutes", "2 hours".
func IdleWords(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute:
		return plural(int((d+time.Minute-1)/time.Minute), "minute")
	}
	return plural(int((d+time.Second-1)/time.Second), "second")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return Itoa(n) + " " + unit + "s"
}
