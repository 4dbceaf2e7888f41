package actors

import (
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
	"payments/ledger/fxpayouts"
	"payments/ledger/keycontrols"
)

// accountKey names a balance account: one per organization and currency.
type accountKey struct {
	org      string
	currency string
}

// accountMessage is a request routed to the actor of one account.
type accountMessage interface {
	account() accountKey
}

type payoutRequest struct {
	key        accountKey
	ref        string
	attempt    string // the request attempt (PayoutRequest.Attempt)
	spec       ledger.PayoutSpec
	methodType ledger.MethodType
	principal  ledger.Minor // PayoutRequest.Principal
	fee        ledger.Minor
	fx         *FXPricing // cross-currency; key.currency is its FromCurrency
	spend      *Spend     // the key's spend caps (spend.go); nil counts nothing
	reply      chan<- Reply
}

type collectionRequest struct {
	key        accountKey
	ref        string
	attempt    string
	spec       ledger.CollectionSpec
	methodType ledger.MethodType
	fee        ledger.Minor
	reply      chan<- Reply
}

type fundRequest struct {
	key    accountKey
	ref    string
	amount ledger.Minor
	reply  chan<- Reply
}

func (m *payoutRequest) account() accountKey     { return m.key }
func (m *collectionRequest) account() accountKey { return m.key }
func (m *fundRequest) account() accountKey       { return m.key }

// routed is what the actors a router owns (an account's, an order's, a
// quote's) have in common: the key they serve, how many routed requests
// they have taken, and how many of their proposals await their results.
type routed[K comparable] struct {
	key      K
	deps     *deps
	received uint64 // routed requests taken, for passivation
	inFlight int    // proposals not yet answered
}

// applied carries a command's result from the proposer back to the actor
// that proposed it, with what the actor does with it.
type applied struct {
	result ledger.Result
	err    error
	then   func(actor.Context, ledger.Result, error)
}

// propose sends cmd to the log; once it is applied (or has failed), then
// runs in the actor with its result.
func (a *routed[K]) propose(ctx actor.Context, cmd ledger.Command, then func(actor.Context, ledger.Result, error)) error {
	self, root := ctx.Self(), a.deps.root
	err := a.deps.proposer.Propose(cmd, func(r ledger.Result, err error) {
		root.Send(self, &applied{result: r, err: err, then: then})
	})
	if err == nil {
		a.inFlight++
	}
	return err
}

// receive takes the messages every routed actor takes alike, and reports
// whether it took the one in ctx whole: the actor's start and its idle
// checks, and its proposals' results (it runs what the actor does with
// each). A routed request, a message of type R, it counts as taken and
// leaves to the actor.
func receive[R any, K comparable](ctx actor.Context, a *routed[K]) (took bool) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.scheduleIdleCheck(ctx)
	case *idleCheck:
		a.checkIdle(ctx, m)
	case *applied:
		a.inFlight--
		m.then(ctx, m.result, m.err)
	case R:
		a.received++
		return false
	default:
		return false
	}
	return true
}

// idleCheck is a routed actor's reminder to itself: if it has taken no
// request since it scheduled the check (received is unchanged) and has
// nothing in flight, it is idle. (protoactor's own receive timeout races with
// message processing under the race detector, so it is not used.)
type idleCheck struct {
	received uint64
}

// scheduleIdleCheck sends the actor of ctx its idle check after the idle
// timeout.
func (a *routed[K]) scheduleIdleCheck(ctx actor.Context) {
	self, root, check := ctx.Self(), a.deps.root, &idleCheck{received: a.received}
	time.AfterFunc(a.deps.idleTimeout, func() { root.Send(self, check) })
}

// checkIdle answers an idle check m: idle (no request taken since m was
// scheduled, and no proposal in flight), the actor asks its router to stop
// it; otherwise it schedules the next check.
func (a *routed[K]) checkIdle(ctx actor.Context, m *idleCheck) {
	if m.received == a.received && a.inFlight == 0 {
		ctx.Send(ctx.Parent(), &passivate[K]{key: a.key, received: a.received})
		return
	}
	a.scheduleIdleCheck(ctx)
}

// passivate asks a router to stop an idle actor of key K (an account's, an
// order's, a quote's). received is how many routed messages the actor has
// taken; the router stops it only if it has sent no more than that, so no
// request is ever lost to a stopped actor.
type passivate[K comparable] struct {
	key      K
	received uint64
}

// accountRouter owns the account actors: it spawns one on the first message
// for an account, forwards every request to it, and stops it when idle.
type accountRouter struct {
	deps     *deps
	children routedChildren[accountKey]
}

type routedChild struct {
	pid  *actor.PID
	sent uint64
}

// routedChildren are a router's actors, one a key, with how many messages
// it has sent each.
type routedChildren[K comparable] map[K]*routedChild

// forward sends m to the actor of key, spawning it from props first when
// there is none.
func (cs routedChildren[K]) forward(ctx actor.Context, key K, m any, props func() *actor.Props) {
	c, ok := cs[key]
	if !ok {
		c = &routedChild{pid: ctx.Spawn(props())}
		cs[key] = c
	}
	c.sent++
	ctx.Send(c.pid, m)
}

// passivate stops the actor of key when it is the one asking and has
// received every message sent to it.
func (cs routedChildren[K]) passivate(ctx actor.Context, key K, received uint64) {
	c, ok := cs[key]
	if ok && c.sent == received && ctx.Sender() != nil && c.pid.Equal(ctx.Sender()) {
		delete(cs, key)
		ctx.Stop(c.pid)
	}
}

func (r *accountRouter) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case accountMessage:
		key := m.account()
		r.children.forward(ctx, key, m, func() *actor.Props {
			return r.deps.props(func() actor.Actor { return newAccountActor(key, r.deps) },
				actor.WithDispatcher(sharedReaderDispatcher()))
		})
	case *passivate[accountKey]:
		r.children.passivate(ctx, m.key, m.received)
	}
}

// accountActor serializes everything that touches one balance account: the
// idempotency of its references and the reservation of funds for debits in
// flight. It never waits for the log: it proposes and goes on with the next
// message, so many debits of a hot account are in flight at once.
//
// Reservations: each debit gets a number, increasing, carried in its
// command. The ledger records on the account the highest number it applied
// (ledger.Account.Reservation). A debit whose number is at or below that is
// already in the balance the actor reads; those above it are in flight and
// held back from what new debits can draw on. This keeps the fast check
// exact without waiting for results: N concurrent payouts against a balance
// that covers K of them are K acceptances, not fewer.
type accountActor struct {
	routed[accountKey]
	ids *idSource

	nextReservation uint64
	reservations    []reservation // in number order
	reservedMinor   ledger.Minor  // sum of reservations

	payouts     map[string]*waitingPayout
	collections map[string]*waitingCollection
	fundings    map[string]*waitingFunding
}

type reservation struct {
	number uint64
	amount ledger.Minor
}

type waitingPayout struct {
	id      string
	spec    ledger.PayoutSpec
	fx      bool
	waiters []waiter // the first proposed it
	// others are requests under the same reference with other details:
	// they are decided once this one is (a duplicate if it made the
	// payout, on their own if it did not).
	others []*payoutRequest
}

// waiter is a request waiting for a create in flight: the one that
// proposed it, or a retry that joined it, each with its attempt.
type waiter struct {
	reply   chan<- Reply
	attempt string
}

type waitingCollection struct {
	id      string
	spec    ledger.CollectionSpec
	waiters []waiter
}

type waitingFunding struct {
	amount  ledger.Minor
	waiters []waiter
}

func newAccountActor(key accountKey, d *deps) *accountActor {
	return &accountActor{
		routed:      routed[accountKey]{key: key, deps: d},
		ids:         newIDSource(),
		payouts:     make(map[string]*waitingPayout),
		collections: make(map[string]*waitingCollection),
		fundings:    make(map[string]*waitingFunding),
	}
}

func (a *accountActor) Receive(ctx actor.Context) {
	if receive[accountMessage](ctx, &a.routed) {
		return
	}
	switch m := ctx.Message().(type) {
	case *payoutRequest:
		a.payout(ctx, m)
	case *collectionRequest:
		a.collection(ctx, m)
	case *fundRequest:
		a.fund(ctx, m)
	}
}

func (a *accountActor) payout(ctx actor.Context, m *payoutRequest) {
	if w, ok := a.payouts[m.ref]; ok {
		if w.spec == m.spec && w.fx == (m.fx != nil) {
			w.waiters = append(w.waiters, waiter{m.reply, m.attempt})
		} else {
			// A duplicate only if the one in flight makes the payout.
			w.others = append(w.others, m)
		}
		return
	}
	// The operation priced the payout (actors/app): the principal and the
	// fee, in the debited currency. A from.amount is the whole debit: the
	// command carries the principal.
	spec := m.spec
	principal, fee := m.principal, m.fee
	if m.spec.AmountSide == ledger.SideFrom {
		spec.Amount = principal
	}
	st := a.deps.state.Reader()
	if existing, found := st.PayoutByReference(a.key.org, m.ref); found {
		// The same request: the same spec as given, from the same
		// balance. A positive answer from state is true however far
		// behind the state is: the payout exists.
		switch {
		case existing.RequestedSpec() != spec || existing.FromCurrency() != a.key.currency:
			m.reply <- Reply{Result: ledger.Result{Err: ledger.Duplicate("Payout", existing.ID)}}
		default:
			m.reply <- Reply{Result: ledger.Result{Replayed: replayed(existing.Attempt, m.attempt), Payout: &existing}}
		}
		return
	}
	account, hasAccount := st.AccountFor(a.key.org, a.key.currency)
	a.releaseApplied(account.Reservation)
	required := principal + fee
	var available ledger.Minor
	if hasAccount {
		available = account.Available() - a.reservedMinor
	}
	at := a.deps.now().UnixMilli()
	var charge keycontrols.Charge
	if m.spend != nil {
		var e *ledger.Error
		if charge, e = m.spend.charge(a.deps.state, a.key.org, required, a.key.currency, at); e != nil {
			m.reply <- Reply{Result: ledger.Result{Err: e}}
			return
		}
	}
	id := a.ids.next("pay_" + strings.ToLower(m.spec.Currency) + "_")
	payout := &ledger.CreatePayout{
		At:                at,
		ID:                id,
		OrgID:             a.key.org,
		ExternalReference: m.ref,
		Spec:              spec,
		MethodType:        m.methodType,
		Fee:               fee,
	}
	var cmd ledger.Command = payout
	if m.fx != nil {
		cmd = m.fx.create(payout)
	}
	if refusal, refused := st.Refusal(a.key.org, ledger.RefusedPayout, m.ref); refused {
		// Refused before: the refusal is final for the reference.
		m.reply <- Reply{Result: refusal.Replay(cmd)}
		return
	}
	// A debit the balance covers reserves the funds. One it does not is
	// not refused here: the state read may be behind the log (a new
	// leader, an attempt of the same reference still on its way), and a
	// refusal is final for the reference. The ledger decides it in log
	// order, and records a refusal.
	var number uint64
	if available >= required {
		number = max(a.nextReservation, account.Reservation+1)
		a.nextReservation = number + 1
		switch c := cmd.(type) {
		case *ledger.CreatePayout:
			c.Reservation = number
		case *fxpayouts.Create:
			c.Reservation = number
		}
	}
	if m.spend != nil {
		cmd = &keycontrols.Charged{Charge: charge, Op: cmd}
	}
	cmd = &ledger.Decided{Attempt: m.attempt, Op: cmd}
	if err := a.propose(ctx, cmd, func(ctx actor.Context, r ledger.Result, err error) {
		a.payoutApplied(ctx, m.ref, number, r, err)
	}); err != nil {
		m.reply <- Reply{Err: err}
		return
	}
	if number != 0 {
		a.reservations = append(a.reservations, reservation{number, required})
		a.reservedMinor += required
	}
	a.payouts[m.ref] = &waitingPayout{id: id, spec: m.spec, fx: m.fx != nil, waiters: []waiter{{m.reply, m.attempt}}}
}

// create is the command that creates payout c converted on these terms.
func (p *FXPricing) create(c *ledger.CreatePayout) *fxpayouts.Create {
	return &fxpayouts.Create{
		At:                c.At,
		ID:                c.ID,
		OrgID:             c.OrgID,
		ExternalReference: c.ExternalReference,
		Spec:              c.Spec,
		MethodType:        c.MethodType,
		Fee:               c.Fee,
		FromCurrency:      p.FromCurrency,
		FromAmount:        p.FromAmount,
		ToAmount:          p.ToAmount,
		Rate:              p.Rate,
	}
}

// payoutApplied takes the result of the payout under ref that reserved
// number (0 for none).
func (a *accountActor) payoutApplied(ctx actor.Context, ref string, number uint64, r ledger.Result, err error) {
	if number != 0 {
		a.release(number)
	}
	w, ok := landed(a.payouts, ref, r, err)
	if !ok {
		return
	}
	if madeNew(r, err) {
		a.deps.track(r.Payout, nil)
	}
	// The state now holds what the reference names (or, if the outcome is
	// unknown, nothing can be said): the requests with other details are
	// decided against it.
	for _, o := range w.others {
		a.payout(ctx, o)
	}
}

// answer replies to everyone waiting on one reference: the first caller gets
// the result as it is, the ones who joined while it was in flight get it as
// a replay of the same resource, unless they are the first's attempt
// relayed again.
func answer(waiters []waiter, r ledger.Result, err error) {
	for i, w := range waiters {
		res := r
		if i > 0 && err == nil && r.Err == nil && replayed(waiters[0].attempt, w.attempt) {
			res.Replayed = true
		}
		w.reply <- Reply{Result: res, Err: err}
	}
}

// joined is a create in flight that requests wait on: the one that
// proposed it, then the retries that joined it.
type joined interface{ waiting() []waiter }

func (w *waitingPayout) waiting() []waiter     { return w.waiters }
func (w *waitingCollection) waiting() []waiter { return w.waiters }
func (w *waitingFunding) waiting() []waiter    { return w.waiters }

// landed takes the result of the create in flight under ref: it answers
// the requests waiting on it and forgets it. It returns it, and false
// when none was in flight.
func landed[W joined](inFlight map[string]W, ref string, r ledger.Result, err error) (W, bool) {
	w, ok := inFlight[ref]
	if ok {
		delete(inFlight, ref)
		answer(w.waiting(), r, err)
	}
	return w, ok
}

// madeNew reports whether a command's result is a resource it created: it
// applied, was not refused and was no replay of an earlier one.
func madeNew(r ledger.Result, err error) bool { return err == nil && r.Err == nil && !r.Replayed }

// replayed reports whether a request of attempt that finds a resource
// created by attempt creator is a replay: it is not when both are the
// same attempt (a relay of the request that created it).
func replayed(creator, attempt string) bool { return creator == "" || creator != attempt }

// releaseApplied drops reservations the ledger has applied: their debits are
// in the balance already.
func (a *accountActor) releaseApplied(appliedNumber uint64) {
	i := 0
	for i < len(a.reservations) && a.reservations[i].number <= appliedNumber {
		a.reservedMinor -= a.reservations[i].amount
		i++
	}
	if i > 0 {
		a.reservations = append(a.reservations[:0], a.reservations[i:]...)
	}
}

// release drops one reservation, whether it was applied or failed.
func (a *accountActor) release(number uint64) {
	for i, r := range a.reservations {
		if r.number == number {
			a.reservedMinor -= r.amount
			a.reservations = append(a.reservations[:i], a.reservations[i+1:]...)
			return
		}
	}
}

func (a *accountActor) collection(ctx actor.Context, m *collectionRequest) {
	if w, ok := a.collections[m.ref]; ok {
		if w.spec == m.spec {
			w.waiters = append(w.waiters, waiter{m.reply, m.attempt})
		} else {
			m.reply <- Reply{Result: ledger.Result{Err: ledger.Duplicate("Collection", w.id)}}
		}
		return
	}
	var existing ledger.Collection
	var found bool
	st := a.deps.state.Reader()
	existing, found = st.CollectionByReference(a.key.org, m.ref)
	if found {
		if existing.Spec == m.spec {
			m.reply <- Reply{Result: ledger.Result{Replayed: replayed(existing.Attempt, m.attempt), Collection: &existing}}
		} else {
			m.reply <- Reply{Result: ledger.Result{Err: ledger.Duplicate("Collection", existing.ID)}}
		}
		return
	}
	cmd := &ledger.CreateCollection{
		At:                a.deps.now().UnixMilli(),
		ID:                a.ids.next("col_"),
		OrgID:             a.key.org,
		ExternalReference: m.ref,
		Spec:              m.spec,
		MethodType:        m.methodType,
		Fee:               m.fee,
	}
	if refusal, refused := st.Refusal(a.key.org, ledger.RefusedCollection, m.ref); refused {
		m.reply <- Reply{Result: refusal.Replay(cmd)} // final for the reference
		return
	}
	if err := a.propose(ctx, &ledger.Decided{Attempt: m.attempt, Op: cmd}, func(_ actor.Context, r ledger.Result, err error) {
		a.collectionApplied(m.ref, r, err)
	}); err != nil {
		m.reply <- Reply{Err: err}
		return
	}
	a.collections[m.ref] = &waitingCollection{id: cmd.ID, spec: m.spec, waiters: []waiter{{m.reply, m.attempt}}}
}

func (a *accountActor) collectionApplied(ref string, r ledger.Result, err error) {
	if _, ok := landed(a.collections, ref, r, err); ok && madeNew(r, err) {
		a.deps.track(nil, r.Collection)
	}
}

func (a *accountActor) fund(ctx actor.Context, m *fundRequest) {
	if w, ok := a.fundings[m.ref]; ok {
		if w.amount == m.amount {
			w.waiters = append(w.waiters, waiter{reply: m.reply})
		} else {
			m.reply <- Reply{Result: ledger.Result{Err: ledger.FundingConflict()}}
		}
		return
	}
	cmd := &ledger.FundBalance{
		At:                a.deps.now().UnixMilli(),
		OrgID:             a.key.org,
		Currency:          a.key.currency,
		Amount:            m.amount,
		ExternalReference: m.ref,
	}
	if err := a.propose(ctx, cmd, func(_ actor.Context, r ledger.Result, err error) {
		a.fundApplied(m.ref, r, err)
	}); err != nil {
		m.reply <- Reply{Err: err}
		return
	}
	a.fundings[m.ref] = &waitingFunding{amount: m.amount, waiters: []waiter{{reply: m.reply}}}
}

func (a *accountActor) fundApplied(ref string, r ledger.Result, err error) {
	landed(a.fundings, ref, r, err)
}

// accountIdleTimeout is how long an account actor lives without messages.
const accountIdleTimeout = 2 * time.Minute
