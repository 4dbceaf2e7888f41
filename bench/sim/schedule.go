package sim

import (
	"math/rand/v2"
	"time"

	"payments/actors/app"
	"payments/ledger/conversions"
)

// scheduler injects faults, drawn from its seeded source, at drawn
// intervals. Every step draws the same numbers whatever happens, so the
// sequence of fault choices is the seed's; which node is "the leader" when
// a fault targets it is the run's.
type scheduler struct {
	c      *cluster
	rng    *rand.Rand
	counts map[string]int
	logf   func(string, ...any)

	crashed   *simNode
	restartAt time.Time

	// violate records what checkStep finds.
	violate func(format string, args ...any)
}

func (s *scheduler) run(d time.Duration) error {
	end := time.Now().Add(d)
	ids := []string{"n1", "n2", "n3"}
	for time.Now().Before(end) {
		pause := time.Duration(50+s.rng.IntN(250)) * time.Millisecond
		kind, a, b := s.rng.IntN(100), s.rng.IntN(3), s.rng.IntN(2)
		rate, delay := float64(5+s.rng.IntN(25))/100, time.Duration(s.rng.IntN(20))*time.Millisecond
		down := time.Duration(100+s.rng.IntN(900)) * time.Millisecond
		time.Sleep(pause)
		if s.crashed != nil && time.Now().After(s.restartAt) {
			if err := s.restart(); err != nil {
				return err
			}
		}
		other := ids[(a+1+b)%3] // a node other than ids[a]
		switch {
		case kind < 12: // one node cut off, both ways
			s.isolate(ids[a])
			s.logf("isolate %s", ids[a])
			s.count("partition")
		case kind < 22: // one link cut one way: requests arrive, answers do not
			s.c.net.setCut(ids[a], other, true)
			s.logf("cut %s → %s", ids[a], other)
			s.count("partition_asymmetric")
		case kind < 32: // the leader cut off
			if l := s.c.leader(); l != nil {
				s.isolate(l.id)
				s.logf("isolate the leader %s", l.id)
				s.count("partition_leader")
			}
		case kind < 45:
			s.c.net.setLossy(rate, delay)
			s.count("lossy")
		case kind < 60:
			s.c.net.heal()
			s.logf("heal")
			s.count("heal")
		case kind < 75 && s.crashed == nil:
			n := s.c.nodes[a]
			if b == 0 {
				if l := s.c.leader(); l != nil {
					n = l
				}
			}
			if err := s.takeDown("crash", n, s.c.crash, down); err != nil {
				return err
			}
		case kind < 80:
			s.advanceClock()
		case kind < 83 && s.crashed == nil:
			// A follower loses its data directory and comes back empty.
			n := s.c.nodes[a]
			if l := s.c.leader(); l == n {
				n = s.c.nodes[(a+1+b)%3]
			}
			if err := s.takeDown("wipe", n, s.c.wipe, down); err != nil {
				return err
			}
		case kind < 88:
			if node, _ := s.c.nodes[a].running(); node != nil {
				err := node.Snapshot() // may fail (nothing new since the last): that is fine
				first, _ := node.LogBounds()
				s.logf("snapshot %s: %v; its log starts at %d", ids[a], err, first)
				s.count("snapshot")
			}
		}
		s.checkStep()
	}
	return nil
}

// checkStep checks, between two faults, what must hold at every moment:
// each running node's applied state keeps the ledger's invariants, and
// nodes at the same applied index hold the same bytes.
func (s *scheduler) checkStep() {
	at := map[uint64][32]byte{}
	for _, n := range s.c.nodes {
		node, _ := n.running()
		if node == nil {
			continue
		}
		if err := node.Reader().Check(); err != nil {
			s.violate("during the run, invariants of %s: %v", n.id, err)
		}
		sum, applied, err := node.StateDigest()
		if err != nil {
			s.violate("during the run, state digest of %s: %v", n.id, err)
			continue
		}
		if prev, ok := at[applied]; ok && prev != sum {
			s.violate("during the run, replicas differ at applied index %d (%s among them)", applied, n.id)
		}
		at[applied] = sum
	}
}

// advanceClock jumps the other organization's sandbox clock past a
// quote's lifetime, through the leader, with the operation that POST
// /v1/simulations/advance-clock calls: its pending quotes expire in that
// Apply.
func (s *scheduler) advanceClock() {
	l := s.c.leader()
	if l == nil {
		return
	}
	_, sys := l.running()
	if sys == nil {
		return
	}
	s.count("clock_advance")
	go s.c.appOf(sys).AdvanceClock(app.Caller{OrgID: otherOrg}, (conversions.QuoteLifetimeMillis+1000)*time.Millisecond)
}

func (s *scheduler) count(kind string) { s.counts[kind]++ }

// takeDown stops n by fault (a crash or a wipe), logged and counted under
// kind, until it restarts after down.
func (s *scheduler) takeDown(kind string, n *simNode, fault func(*simNode) error, down time.Duration) error {
	s.logf("%s %s", kind, n.id)
	if err := fault(n); err != nil {
		return err
	}
	s.crashed, s.restartAt = n, time.Now().Add(down)
	s.count(kind)
	return nil
}

func (s *scheduler) isolate(id string) {
	for _, o := range s.c.nodes {
		if o.id != id {
			s.c.net.setCut(id, o.id, true)
			s.c.net.setCut(o.id, id, true)
		}
	}
}

func (s *scheduler) restart() error {
	n := s.crashed
	s.crashed = nil
	s.logf("restart %s", n.id)
	s.count("restart")
	return s.c.start(n)
}

// healAll ends the faults: the network heals and a crashed node restarts.
func (s *scheduler) healAll() error {
	s.c.net.heal()
	if s.crashed != nil {
		return s.restart()
	}
	return nil
}
