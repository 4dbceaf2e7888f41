package app

import (
	"time"

	"payments/actors"
	"payments/ledger"
)

// The sandbox's simulations: what a real deployment leaves to the outside
// world (a balance funded, time passing, a dispute opened and ruled on) done
// on request. They exist only on the sandbox stack.

// sandboxOnly refuses a simulation on the production stack.
func (a *App) sandboxOnly() *ledger.Error {
	if a.cfg.Live {
		return &ledger.Error{Code: ledger.CodeNotFound, Message: "Simulations exist only on the sandbox stack"}
	}
	return nil
}

// FundBalance credits the caller's balance in currency at once, idempotent
// by ref: the same reference again replays the funding.
func (a *App) FundBalance(c Caller, currency string, amount ledger.Minor, ref string) actors.Reply {
	if e := a.sandboxOnly(); e != nil {
		return refused(e)
	}
	return a.sys.FundBalance(c.OrgID, currency, amount, ref)
}

// ClockAdvanced is what advancing the sandbox clock answers: the commit's
// reply (Result.Clock, the organization's offset) and the leader's time it
// was advanced at, so that the organization's time now is At plus the
// offset.
type ClockAdvanced struct {
	actors.Reply
	At time.Time
}

// AdvanceClock moves the caller's sandbox clock forward by d (whole
// milliseconds, at most ledger.ClockAdvanceMax), expiring at once what the
// jump passed.
func (a *App) AdvanceClock(c Caller, d time.Duration) ClockAdvanced {
	if e := a.sandboxOnly(); e != nil {
		return ClockAdvanced{Reply: refused(e)}
	}
	at := a.sys.Now()
	return ClockAdvanced{a.propose(&ledger.AdvanceClock{At: at.UnixMilli(), OrgID: c.OrgID, Millis: d.Milliseconds()}), at}
}
