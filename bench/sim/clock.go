package sim

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"payments/actors"
)

// simClock is the simulation's fake clock, shared by the three nodes as
// synchronised clocks would be. It is every node's leader clock (the At of
// the commands it stamps, so the ledger's deadlines) and the clock of the
// rail driver, the sandbox rail and the webhook retries. Time moves only
// when pace advances it; the timers due by then fire one at a time in the
// order of their due time (then of their creation), each with the clock
// reading its due time.
type simClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers timerHeap

	jumps atomic.Int64 // seeded jumps ahead, for the report
}

func newSimClock(start time.Time) *simClock { return &simClock{now: start} }

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f once the clock has been advanced by d; a d of zero or
// less fires at the next advance.
func (c *simClock) AfterFunc(d time.Duration, f func()) actors.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &simTimer{c: c, at: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	return t
}

// advance moves the clock d ahead, firing the timers due on the way.
func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for len(c.timers) > 0 && !c.timers[0].at.After(end) {
		t := heap.Pop(&c.timers).(*simTimer)
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

// Timing of the fake clock: it is advanced every clockTick of real time by
// a seeded step averaging clockTick, and one step in clockJumpOdds jumps
// ahead by up to clockJumpMax at once, making every settlement and retry
// due by then fire together, in their due order. With the jumps it runs
// about twice as fast as real time (Report.Simulated says how fast), close
// enough to it that Raft's timeouts and the clients' give-ups, which stay
// real, keep their meaning.
const (
	clockTick     = 2 * time.Millisecond
	clockJumpOdds = 100
	clockJumpMax  = 500 * time.Millisecond
)

// pace advances the clock until ctx ends, by steps drawn from rng.
func (c *simClock) pace(ctx context.Context, rng *rand.Rand) {
	tick := time.NewTicker(clockTick)
	defer tick.Stop()
	for {
		step := time.Duration(rng.Int64N(int64(2*clockTick) + 1))
		if rng.IntN(clockJumpOdds) == 0 {
			step += time.Duration(rng.Int64N(int64(clockJumpMax))) + 1
			c.jumps.Add(1)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.advance(step)
		}
	}
}

type simTimer struct {
	c       *simClock
	at      time.Time
	seq     uint64
	f       func()
	stopped bool // fired or stopped; guarded by c.mu
}

func (t *simTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// timerHeap orders timers by due time, then creation.
type timerHeap []*simTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*simTimer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
