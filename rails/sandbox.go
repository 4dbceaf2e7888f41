package rails

import (
	"context"
	"fmt"
	"sync"
	"time"

	"payments/actors"
	"payments/ledger"
)

// SandboxTiming sets how long the simulated rails take. Tests shorten it.
type SandboxTiming struct {
	SubmitLatency     time.Duration // a submission's round trip
	Settlement        time.Duration // from submission to a final outcome
	Timeout           time.Duration // how long a timing-out submission hangs
	DelayedCompletion time.Duration // scenario 50
	CustomerTimeout   time.Duration // scenario 52: the prompt's window
}

// DefaultSandboxTiming is close enough to a real rail to show every status in
// a UI, and short enough for a demo.
var DefaultSandboxTiming = SandboxTiming{
	SubmitLatency:     5 * time.Millisecond,
	Settlement:        500 * time.Millisecond,
	Timeout:           2 * time.Second,
	DelayedCompletion: 10 * time.Second,
	CustomerTimeout:   5 * time.Second,
}

// Sandbox simulates payout and mobile money rails deterministically: the
// amount picks the outcome (see PayoutTrigger and CollectionTrigger). It
// remembers when it accepted each instruction, to know when the outcome is
// due; after a restart it has forgotten, and answers at once with the same
// outcome. Safe for concurrent use.
type Sandbox struct {
	timing SandboxTiming
	clock  actors.Clock

	mu        sync.Mutex
	submitted map[string]time.Time // instruction id → accepted at
	polled    map[string]int       // collection id → status calls (scenario 99)
}

var _ actors.Rail = (*Sandbox)(nil)

// NewSandbox returns a sandbox rail with the given timing, on the system
// clock.
func NewSandbox(timing SandboxTiming) *Sandbox {
	return NewSandboxOnClock(timing, actors.SystemClock())
}

// NewSandboxOnClock returns a sandbox rail whose latencies and settlements
// run on clock: the simulator's fake clock (bench/sim).
func NewSandboxOnClock(timing SandboxTiming, clock actors.Clock) *Sandbox {
	return &Sandbox{
		timing:    timing,
		clock:     clock,
		submitted: make(map[string]time.Time),
		polled:    make(map[string]int),
	}
}

func (s *Sandbox) sleep(ctx context.Context, d time.Duration) error {
	if !actors.Sleep(ctx, s.clock, d) {
		return ctx.Err()
	}
	return nil
}

func (s *Sandbox) accept(id string) {
	s.mu.Lock()
	if _, ok := s.submitted[id]; !ok {
		s.submitted[id] = s.clock.Now()
	}
	s.mu.Unlock()
}

// due reports whether the outcome of id is due after wait, and how long is
// left otherwise. An id the sandbox never saw (it restarted) is due now.
func (s *Sandbox) due(id string, wait time.Duration) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.submitted[id]
	if !ok {
		return true, 0
	}
	left := wait - s.clock.Now().Sub(at)
	if left > 0 {
		return false, left
	}
	return true, 0
}

func (s *Sandbox) forget(id string) {
	s.mu.Lock()
	delete(s.submitted, id)
	delete(s.polled, id)
	s.mu.Unlock()
}

// SubmitPayout hands a payout to the simulated rail. Submitting the same
// payout twice is harmless: the rail keys instructions by payout id.
func (s *Sandbox) SubmitPayout(ctx context.Context, p ledger.Payout) (string, error) {
	return s.submit(ctx, p.ID, PayoutTrigger.Select(p.Spec.Amount, p.Spec.Currency))
}

// submit takes instruction id after the submit latency and returns the
// rail's reference for it; when outcome is a timeout, it answers
// ErrRailTimeout once the timeout has passed.
func (s *Sandbox) submit(ctx context.Context, id string, outcome Outcome) (string, error) {
	if err := s.sleep(ctx, s.timing.SubmitLatency); err != nil {
		return "", err
	}
	s.accept(id)
	if outcome == OutcomeTimeoutThenReconciled {
		if err := s.sleep(ctx, s.timing.Timeout); err != nil {
			return "", err
		}
		return "", actors.ErrRailTimeout
	}
	return "sbx_" + id, nil
}

// PayoutOutcome reports the payout's final outcome once it is due.
func (s *Sandbox) PayoutOutcome(ctx context.Context, p ledger.Payout) (actors.RailOutcome, error) {
	if err := ctx.Err(); err != nil {
		return actors.RailOutcome{}, err
	}
	if ok, left := s.due(p.ID, s.timing.Settlement); !ok {
		return actors.RailOutcome{CheckAfter: left}, nil
	}
	s.forget(p.ID)
	switch PayoutTrigger.Select(p.Spec.Amount, p.Spec.Currency) {
	case OutcomeRejected:
		return actors.RailOutcome{Final: true, Message: "Rejected by the receiving provider (sandbox: amount ending in .01)"}, nil
	case OutcomeTimeoutThenReconciled:
		return actors.RailOutcome{Final: true, Completed: true, Message: "Reconciled as completed after the rail timed out (sandbox: amount ending in .03)"}, nil
	default:
		return actors.RailOutcome{Final: true, Completed: true}, nil
	}
}

// StartCollection prompts the payer on their phone.
func (s *Sandbox) StartCollection(ctx context.Context, c ledger.Collection) (string, error) {
	return s.submit(ctx, c.ID, CollectionTrigger.Select(c.Spec.Amount, c.Spec.Currency))
}

// CollectionOutcome reports whether the payer approved, once it is known.
func (s *Sandbox) CollectionOutcome(ctx context.Context, c ledger.Collection) (actors.RailOutcome, error) {
	if err := ctx.Err(); err != nil {
		return actors.RailOutcome{}, err
	}
	outcome := CollectionTrigger.Select(c.Spec.Amount, c.Spec.Currency)
	wait := s.timing.Settlement
	switch outcome {
	case OutcomeDelayedCompletion:
		wait = s.timing.DelayedCompletion
	case OutcomeCustomerTimeout:
		wait = s.timing.CustomerTimeout
	case OutcomeTransientErrorThenReconciled:
		s.mu.Lock()
		s.polled[c.ID]++
		first := s.polled[c.ID] == 1
		s.mu.Unlock()
		if first {
			return actors.RailOutcome{}, fmt.Errorf("sandbox: provider unavailable (scenario 99): %w", actors.ErrRailTransient)
		}
	}
	if ok, left := s.due(c.ID, wait); !ok {
		return actors.RailOutcome{CheckAfter: left}, nil
	}
	s.forget(c.ID)
	switch outcome {
	case OutcomeRejected:
		return actors.RailOutcome{Final: true, Message: "Rejected by the provider (sandbox: amount ending in .01)"}, nil
	case OutcomeFailed:
		return actors.RailOutcome{Final: true, Message: "The payer declined the prompt (sandbox: amount ending in .51)"}, nil
	case OutcomeCustomerTimeout:
		return actors.RailOutcome{Final: true, Message: "The payer did not approve the prompt in time (sandbox: amount ending in .52)"}, nil
	case OutcomeTimeoutThenReconciled:
		return actors.RailOutcome{Final: true, Completed: true, Message: "Reconciled as completed after the rail timed out (sandbox: amount ending in .03)"}, nil
	case OutcomeTransientErrorThenReconciled:
		return actors.RailOutcome{Final: true, Completed: true, Message: "Reconciled as completed after a transient provider error (sandbox: amount ending in .99)"}, nil
	default:
		return actors.RailOutcome{Final: true, Completed: true}, nil
	}
}
