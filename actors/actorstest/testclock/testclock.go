// Package testclock is a clock a test moves by hand, for code that reads
// the time through a func() time.Time. The request log's and the load
// generator's tests share it.
//
// Never: it fires no timers; code that waits on the clock's time needs a
// clock of its own that does.
package testclock

import (
	"sync"
	"time"
)

// Clock reads the time it was set to, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock that reads now.
func New(now time.Time) *Clock { return &Clock{now: now} }

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
