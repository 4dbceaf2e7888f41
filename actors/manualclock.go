package actors

import (
	"container/heap"
	"sync"
	"time"
)

// ManualClock is a Clock whose time moves only when Advance moves it: the
// simulator's (bench/sim), shared by its nodes as synchronised clocks
// would be, and tests'. The timers due by then fire one at a time in the
// order of their due time (then of their creation), each with the clock
// reading its due time.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers timerHeap
}

// NewManualClock returns a clock that reads start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f once the clock has been advanced by d; a d of zero or
// less fires at the next advance.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{c: c, at: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	return t
}

// Advance moves the clock d ahead, firing the timers due on the way.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for len(c.timers) > 0 && !c.timers[0].at.After(end) {
		t := heap.Pop(&c.timers).(*manualTimer)
		if t.stopped {
			continue
		}
		t.stopped = true
		c.now = t.at
		c.mu.Unlock()
		t.f() // sends to a mailbox or closes a channel: never blocks
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

type manualTimer struct {
	c       *ManualClock
	at      time.Time
	seq     uint64
	f       func()
	stopped bool // fired or stopped; guarded by c.mu
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// timerHeap orders timers by due time, then creation.
type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*manualTimer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
