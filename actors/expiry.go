package actors

import (
	"context"
	"sync/atomic"
	"time"

	"payments/ledger"
)

// The expiry ticker proposes a ledger Tick when a deadline has passed (a
// quote, order or checkout session expiring), so that the transition and
// its event are committed like any other change. It runs on the leader
// only; the state keeps its deadlines in a heap and publishes the earliest
// (Views.NextDeadline), so a look costs nothing, and a new leader picks up
// where the old one left off.
//
// It is a goroutine rather than an actor: it holds no state but the
// leadership flag, and it only ever reads the state and proposes.

// ExpiryInterval is how often the leader looks for passed deadlines, on
// Config.Clock.
const ExpiryInterval = time.Second

type expiryTicker struct {
	leading atomic.Bool
	stop    context.CancelFunc
	done    chan struct{}
}

func startExpiryTicker(s *System, every time.Duration) *expiryTicker {
	ctx, stop := context.WithCancel(context.Background())
	t := &expiryTicker{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		for Sleep(ctx, s.deps.clock, every) {
			if t.leading.Load() {
				s.ExpireDue()
			}
		}
	}()
	return t
}

func (t *expiryTicker) close() {
	t.stop()
	<-t.done
}

// ExpireDue proposes a Tick if a deadline has passed at the leader's
// clock, and waits for it to apply. The ticker calls it every
// ExpiryInterval; tests call it to expire at once.
func (s *System) ExpireDue() error {
	at := s.deps.now().UnixMilli()
	if next := s.deps.state.Reader().NextDeadline(); next == 0 || next > at {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.commitTimeout)
	defer cancel()
	return s.Propose(ctx, &ledger.Tick{At: at}).Err
}
