package actors

import (
	"context"
	"time"
)

// Clock is the time source of what the service waits for in the world
// outside: a rail's outcome, the driver's backoff and retries, the next
// look for passed deadlines, webhook retries. Production uses the system
// clock; tests and the simulator (bench/sim) inject one they advance by
// hand.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface{ Stop() bool }

type systemClock struct{ now func() time.Time }

func (c systemClock) Now() time.Time                            { return c.now() }
func (c systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// SystemClock is the real clock.
func SystemClock() Clock { return systemClock{time.Now} }

// Sleep waits d on clock c. It returns false, at once, when ctx ends
// first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	fired := make(chan struct{})
	t := c.AfterFunc(d, func() { close(fired) })
	defer t.Stop()
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		return false
	}
}
