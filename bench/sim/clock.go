package sim

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"payments/actors"
)

// simClock is the simulation's fake clock (actors.ManualClock), shared by
// the three nodes as synchronised clocks would be. It is every node's
// leader clock (the At of the commands it stamps, so the ledger's
// deadlines) and the clock of the rail driver, the sandbox rail and the
// webhook retries. Time moves only when pace advances it.
type simClock struct {
	*actors.ManualClock

	jumps atomic.Int64 // seeded jumps ahead, for the report
}

func newSimClock(start time.Time) *simClock {
	return &simClock{ManualClock: actors.NewManualClock(start)}
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
			c.Advance(step)
		}
	}
}
