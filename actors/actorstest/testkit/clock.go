package testkit

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand, for code that reads the time
// through a func() time.Time; safe for concurrent use. It fires no timers:
// code that waits on the clock's time needs a clock of its own that does.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
