package actors

import (
	"context"
	"errors"
	"fmt"

	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/instructions"
)

// Providers returns the deployment's provider instances; nil without any.
func (s *System) Providers() Providers { return s.deps.providers }

// CallbackResult is what a callback did.
type CallbackResult struct {
	// ID is the payout or collection the callback named; "" when it named
	// no instruction of ours.
	ID string
	// Settled: its authenticated final outcome settled the payout or
	// collection now. False for a duplicate, or a callback that came
	// after the end.
	Settled bool
	// Checked: the callback only prompted a status check (it is not
	// authenticated, or not final).
	Checked bool
}

// ProviderCallback hands a callback that arrived on instance name's
// ingress route to its adapter. An authenticated final outcome settles
// the payout or collection through the log, once: a duplicate callback,
// or one after a status poll settled it, changes nothing. Anything else
// only prompts an immediate status check on the leader. Errors:
// ErrUnknownProvider, ErrNoCallbacks, ErrBadCallback (the adapter
// refuses the callback), or those of the log (ErrNotLeader,
// ErrOutcomeUnknown).
func (s *System) ProviderCallback(ctx context.Context, name string, cb Callback) (CallbackResult, error) {
	var out CallbackResult
	if s.deps.providers == nil {
		return out, ErrUnknownProvider
	}
	prov, ok := s.deps.providers.Named(name)
	if !ok {
		return out, ErrUnknownProvider
	}
	n, err := prov.HandleCallback(ctx, cb)
	if err != nil {
		return out, err
	}
	in, ok := instructions.ByKey(s.Reader(), name, n.Key)
	if !ok || in.Collection != n.Collection {
		return out, nil // not ours: nothing to do
	}
	out.ID = in.ID
	if in.Closed {
		return out, nil
	}
	if !n.Authenticated || !n.Outcome.Final {
		out.Checked = true
		s.actors.Root.Send(s.deps.driver, &checkNow{id: in.ID})
		return out, nil
	}
	at := s.Now().UnixMilli()
	if ref := n.Outcome.ProviderRef; ref != "" && ref != in.ProviderRef {
		if r := s.Propose(ctx, &instructions.SetReference{At: at, ID: in.ID, ProviderRef: ref}); r.Err != nil {
			return out, r.Err
		}
	}
	var cmd ledger.Command
	if in.Collection {
		cmd = &ledger.SettleCollection{At: at, ID: in.ID, Completed: n.Outcome.Completed, Message: n.Outcome.Message}
	} else {
		cmd = &ledger.SettlePayout{At: at, ID: in.ID, Completed: n.Outcome.Completed, Message: n.Outcome.Message}
	}
	r := s.Propose(ctx, cmd)
	switch {
	case r.Err != nil:
		return out, r.Err
	case r.Result.Err == nil:
		out.Settled = true
		if c := r.Result.Collection; c != nil && c.Status == ledger.CollectionCompleted {
			w := &worker{deps: s.deps, ctx: ctx}
			w.followOrder(c.ID)
		}
	case errors.Is(r.Result.Err, ledger.ErrConflict):
		// Settled already, by a status poll or an earlier callback.
	default:
		return out, fmt.Errorf("actors: the ledger refused a callback's outcome: %w", r.Result.Err)
	}
	// The worker, if one runs, finds it final at once.
	s.actors.Root.Send(s.deps.driver, &checkNow{id: in.ID})
	return out, nil
}

// ErrNoDepositProvider: no instance takes deposits for the method.
var ErrNoDepositProvider = errors.New("actors: no provider instance takes deposits by this method")

// ProvisionDeposit derives the deposit details of a new crypto address
// (owner, its id) from the instance that takes deposits by method: the
// ledger allocates the instance's next deposit index first, so that every
// node and every later leader derives the same details from it. An index
// allocated for an address that is then not created is a gap, which costs
// nothing.
func (s *System) ProvisionDeposit(ctx context.Context, owner, method, currency string) (address, tag string, err error) {
	if s.deps.providers == nil {
		return "", "", ErrNoDepositProvider
	}
	prov, ok := s.deps.providers.For(method, DirectionDeposits)
	if !ok {
		return "", "", ErrNoDepositProvider
	}
	r := s.Propose(ctx, &deposits.AllocateIndex{At: s.Now().UnixMilli(), Provider: prov.Name()})
	if r.Err != nil {
		return "", "", r.Err
	}
	if r.Result.Err != nil {
		return "", "", r.Result.Err
	}
	index := deposits.ProviderOf(r.Result).DepositIndexes - 1
	return prov.ProvisionDeposit(ctx, DepositRequest{Owner: owner, Index: index, Method: method, Currency: currency})
}
