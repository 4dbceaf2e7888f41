package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
	"payments/ledger/conversions"
)

// Quote actors: one per quote (and organization), spawned on the first
// execution request, stopped when idle. A quote executes once; the actor
// serializes the executions of its quote, so the requests that arrive while
// one is in flight join it and get its result instead of proposing again.
// Requests that arrive after it was applied read the executed quote and get
// the ledger's answer (bad_request, naming the conversion).
//
// An execution may carry the caller's externalReference. A reference that
// already names a conversion is answered from it before anything else
// (the conversion itself, replayed, for the same quote; duplicate for
// another), so a retry finds its conversion after the quote executed, and
// long after. Only requests with the in-flight execution's reference join
// it; one with another reference waits for it to apply and is then
// considered afresh, and gets the answer its own request deserves.
//
// The conversion's debit does not pass through the debited account's
// actor: it carries no reservation. That is safe because the ledger checks
// the balance when it applies ExecuteQuote, and the account actor's fast
// check is a bound, not the authority: an account actor that accepted a
// payout on a balance a conversion has since drawn on sees the ledger refuse
// it with insufficient_funds at apply time, and its reservation numbers,
// which only payouts carry, stay exact. Nothing can overdraw the balance.

// quoteKey names a quote actor. The organization is part of the key, so a
// request with another organization's quote id reaches an actor of its own
// and finds nothing.
type quoteKey struct {
	org string
	id  string
}

type executeRequest struct {
	key     quoteKey
	ref     string // the caller's externalReference, or ""
	attempt string // see PayoutRequest.Attempt
	reply   chan<- Reply
}

// quoteVisit runs fn on a quote actor, between its messages: tests look at
// an actor's state this way without racing it (see export_test.go).
type quoteVisit struct {
	key quoteKey
	fn  func(*quoteActor)
}

// quoteRouter owns the quote actors, as accountRouter owns account actors.
type quoteRouter struct {
	deps     *deps
	children routedChildren[quoteKey]
}

func (r *quoteRouter) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *executeRequest:
		key := m.key
		r.children.forward(ctx, key, m, func() *actor.Props {
			return r.deps.props(func() actor.Actor { return &quoteActor{routed: routed[quoteKey]{key: key, deps: r.deps}} })
		})
	case *quoteVisit:
		if c, ok := r.children[m.key]; ok {
			ctx.Send(c.pid, m)
		} else {
			m.fn(nil)
		}
	case *passivate[quoteKey]:
		r.children.passivate(ctx, m.key, m.received)
	}
}

type quoteActor struct {
	routed[quoteKey]
	waiters []waiter // the execution in flight, if any: its callers in arrival order
	ref     string   // the reference of the execution in flight
	// later are requests with another reference than the execution in
	// flight, considered again once it applied.
	later []*executeRequest
}

func (a *quoteActor) Receive(ctx actor.Context) {
	if receive[*executeRequest](ctx, &a.routed) {
		return
	}
	switch m := ctx.Message().(type) {
	case *executeRequest:
		a.execute(ctx, m)
	case *quoteVisit:
		m.fn(a)
	}
}

// executed answers the execution in flight, then considers the requests
// that waited for it.
func (a *quoteActor) executed(ctx actor.Context, r ledger.Result, err error) {
	waiters, later := a.waiters, a.later
	a.waiters, a.later = nil, nil
	answer(waiters, r, err)
	for _, m := range later {
		a.execute(ctx, m)
	}
}

func (a *quoteActor) execute(ctx actor.Context, m *executeRequest) {
	if len(a.waiters) > 0 {
		if m.ref == a.ref {
			a.waiters = append(a.waiters, waiter{m.reply, m.attempt})
		} else {
			a.later = append(a.later, m)
		}
		return
	}
	at := a.deps.now().UnixMilli()
	// The fast path: refuse at once what the ledger would refuse for the
	// quote's state. The balance is the ledger's to check.
	st := a.deps.state.Reader()
	q, found := conversions.GetQuote(st, a.key.org, a.key.id, at)
	now := st.OrgNow(a.key.org, at)
	if !found {
		m.reply <- Reply{Result: ledger.Result{Err: &ledger.Error{Code: ledger.CodeNotFound, Message: "Conversion quote not found"}}}
		return
	}
	if prev, found := conversions.ByReference(st, a.key.org, m.ref); found {
		conv, e := prev.ReplayOf(a.key.id)
		if e != nil {
			m.reply <- Reply{Result: ledger.Result{Err: e}}
		} else {
			m.reply <- Reply{Result: ledger.Result{Replayed: replayed(conv.Attempt, m.attempt), Value: &conversions.Execution{Conversion: &conv, Quote: &q}}}
		}
		return
	}
	cmd := &conversions.ExecuteQuote{At: at, OrgID: a.key.org, QuoteID: a.key.id, ConversionID: NewID("conv_"), ExternalReference: m.ref}
	if refusal, refused := st.Refusal(a.key.org, conversions.Refused, m.ref); refused {
		// Refused before: the refusal is final for the reference.
		m.reply <- Reply{Result: refusal.Replay(cmd)}
		return
	}
	if e := q.CheckExecutable(now); e != nil {
		m.reply <- Reply{Result: ledger.Result{Err: e}}
		return
	}
	var proposed ledger.Command = cmd
	if m.ref != "" {
		proposed = &ledger.Decided{Attempt: m.attempt, Op: cmd} // its refusal is final for the reference
	}
	if err := a.propose(ctx, proposed, a.executed); err != nil {
		m.reply <- Reply{Err: err}
		return
	}
	a.waiters, a.ref = []waiter{{m.reply, m.attempt}}, m.ref
}

// ExecuteQuote converts at a pending quote of the organization, under the
// caller's externalReference ref ("" for none). The first caller's Reply
// carries the new conversion; callers with the same reference that arrive
// while that execution is in flight, or later, get the same conversion
// with Result.Replayed set. Refusals are in Result.Err: not_found for an
// unknown quote, duplicate for a reference that names a conversion of
// another quote, bad_request for an expired or executed one (ExistingID
// naming its conversion), insufficient_funds; under a reference, a refusal
// is final for it. attempt names the client's request (see
// PayoutRequest.Attempt). It waits as CreatePayout does.
func (s *System) ExecuteQuote(orgID, quoteID, ref, attempt string) Reply {
	return s.askVia(s.quotes, func(reply chan<- Reply) any {
		return &executeRequest{key: quoteKey{orgID, quoteID}, ref: ref, attempt: attempt, reply: reply}
	})
}

func spawnQuoteRouter(as *actor.ActorSystem, d *deps) *actor.PID {
	return as.Root.Spawn(d.props(func() actor.Actor {
		return &quoteRouter{deps: d, children: make(routedChildren[quoteKey])}
	}))
}
