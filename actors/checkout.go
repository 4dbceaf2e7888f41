package actors

import (
	"context"

	"payments/ledger"
)

// ProposeTracked commits a command that no account actor owns, like
// Propose, and hands a pending collection its result created (a mobile
// money checkout session's charge) to the rail driver at once, rather than
// at the driver's next rescan.
func (s *System) ProposeTracked(ctx context.Context, cmd ledger.Command) Reply {
	r := s.Propose(ctx, cmd)
	if madeNew(r.Result, r.Err) {
		if c := r.Result.Collection; c != nil && !c.Status.Terminal() {
			s.deps.track(nil, c)
		}
	}
	return r
}
