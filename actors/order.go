package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
	"payments/ledger/keycontrols"
	"payments/ledger/orders"
)

// Orders. Each order has an actor of its own, named by its organization
// and externalReference: the one thing known about an order before it has
// an id, so that concurrent creates with one reference meet in one mailbox
// (the first proposes, the others join it or are duplicates). Deposits into
// the order's instructions go to the same actor, found through the order's
// reference. Like account actors, order actors are spawned on the first
// message by a router and passivated when idle.
//
// The actor never waits for the log. When a command it proposed starts a
// leg (the mobile money prompt at creation, the payout when a deposit
// lands), it hands the leg to the rail driver at once rather than leave it
// for the driver's periodic rescan.

type orderKey struct {
	org string
	ref string
}

// orderMessage is a request routed to the actor of one order.
type orderMessage interface {
	order() orderKey
}

type orderCreate struct {
	key   orderKey
	req   OrderRequest
	reply chan<- Reply
}

type orderDeposit struct {
	key     orderKey
	orderID string
	amount  ledger.Minor
	outcome orders.DepositOutcome
	ref     string // the deposit's externalReference, or ""
	reply   chan<- Reply
}

func (m *orderCreate) order() orderKey  { return m.key }
func (m *orderDeposit) order() orderKey { return m.key }

// OrderRequest is a validated request to create an order: the caller's
// spec and what the front end priced and provisioned for it.
type OrderRequest struct {
	OrgID             string
	ExternalReference string
	Attempt           string // see PayoutRequest
	Spec              orders.Spec
	FromMethodType    ledger.MethodType
	ToMethodType      ledger.MethodType
	FromAmount        ledger.Minor
	ToAmount          ledger.Minor
	Fee               ledger.Minor
	Rate              string
	Instructions      orders.Instructions
	// Spend counts the order's payout leg (ToAmount, from the destination
	// currency's balance) against the key's caps; nil counts nothing.
	Spend *Spend
}

// CreateOrder creates an order, or returns the one its reference already
// names; see CreatePayout for the waiting.
func (s *System) CreateOrder(req OrderRequest) Reply {
	return s.askVia(s.orders, func(reply chan<- Reply) any {
		return &orderCreate{key: orderKey{req.OrgID, req.ExternalReference}, req: req, reply: reply}
	})
}

// DepositOrder records money arriving at an order's instructions (a
// sandbox simulation); amount 0 means the expected amount, or the amount
// awaiting confirmations. Under a reference ref it is idempotent: the
// ledger answers a retry from the deposit the reference names (Replayed)
// and refuses another deposit under it as a duplicate.
func (s *System) DepositOrder(orgID, orderID string, amount ledger.Minor, outcome orders.DepositOutcome, ref string) Reply {
	st := s.deps.state.Reader()
	o, ok := orders.Get(st, orgID, orderID)
	if !ok {
		return Reply{Result: ledger.Result{Err: &ledger.Error{Code: ledger.CodeNotFound, Message: "Order not found"}}}
	}
	return s.askVia(s.orders, func(reply chan<- Reply) any {
		return &orderDeposit{key: orderKey{orgID, o.ExternalReference}, orderID: orderID, amount: amount, outcome: outcome, ref: ref, reply: reply}
	})
}

// orderRouter owns the order actors; see accountRouter.
type orderRouter struct {
	deps     *deps
	children routedChildren[orderKey]
}

func (r *orderRouter) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case orderMessage:
		key := m.order()
		r.children.forward(ctx, key, m, func() *actor.Props {
			return r.deps.props(func() actor.Actor { return newOrderActor(key, r.deps) })
		})
	case *passivate[orderKey]:
		r.children.passivate(ctx, m.key, m.received)
	}
}

// orderActor serializes everything that touches one order.
type orderActor struct {
	routed[orderKey]
	ids      *idSource
	creating *waitingOrder // the create in flight, if any
}

type waitingOrder struct {
	id      string
	spec    orders.Spec
	waiters []waiter
}

func newOrderActor(key orderKey, d *deps) *orderActor {
	return &orderActor{routed: routed[orderKey]{key: key, deps: d}, ids: newIDSource()}
}

func (a *orderActor) Receive(ctx actor.Context) {
	if receive[orderMessage](ctx, &a.routed) {
		return
	}
	switch m := ctx.Message().(type) {
	case *orderCreate:
		a.create(ctx, m)
	case *orderDeposit:
		a.deposit(ctx, m)
	}
}

func (a *orderActor) create(ctx actor.Context, m *orderCreate) {
	req := &m.req
	if w := a.creating; w != nil {
		if w.spec == req.Spec {
			w.waiters = append(w.waiters, waiter{m.reply, req.Attempt})
		} else {
			m.reply <- Reply{Result: ledger.Result{Err: ledger.Duplicate("Order", w.id)}}
		}
		return
	}
	st := a.deps.state.Reader()
	existing, found := orders.ByReference(st, a.key.org, a.key.ref)
	if found {
		if existing.Spec == req.Spec {
			m.reply <- Reply{Result: ledger.Result{Replayed: replayed(existing.Attempt, req.Attempt), Value: &existing}}
		} else {
			m.reply <- Reply{Result: ledger.Result{Err: ledger.Duplicate("Order", existing.ID)}}
		}
		return
	}
	cmd := &orders.Create{
		At:                a.deps.now().UnixMilli(),
		ID:                a.ids.next("ord_"),
		OrgID:             a.key.org,
		ExternalReference: a.key.ref,
		Spec:              req.Spec,
		FromMethodType:    req.FromMethodType,
		ToMethodType:      req.ToMethodType,
		FromAmount:        req.FromAmount,
		ToAmount:          req.ToAmount,
		Fee:               req.Fee,
		Rate:              req.Rate,
		Instructions:      req.Instructions,
	}
	if req.FromMethodType == ledger.MethodMobileMoney {
		cmd.CollectionID = a.ids.next("col_")
	}
	if refusal, refused := st.Refusal(a.key.org, orders.Refused, a.key.ref); refused {
		// Refused before: the refusal is final for the reference.
		m.reply <- Reply{Result: refusal.Replay(cmd)}
		return
	}
	var proposed ledger.Command = cmd
	if req.Spend != nil {
		charge, e := req.Spend.charge(a.deps.state, a.key.org, req.ToAmount, req.Spec.ToCurrency, cmd.At)
		if e != nil {
			m.reply <- Reply{Result: ledger.Result{Err: e}}
			return
		}
		proposed = &keycontrols.Charged{Charge: charge, Op: cmd}
	}
	proposed = &ledger.Decided{Attempt: req.Attempt, Op: proposed} // its refusal is final for the reference
	if err := a.propose(ctx, proposed, a.created); err != nil {
		m.reply <- Reply{Err: err}
		return
	}
	a.creating = &waitingOrder{id: cmd.ID, spec: req.Spec, waiters: []waiter{{m.reply, req.Attempt}}}
}

func (a *orderActor) created(_ actor.Context, r ledger.Result, err error) {
	w := a.creating
	if w == nil {
		return
	}
	a.creating = nil
	answer(w.waiters, r, err)
	if madeNew(r, err) {
		a.deps.track(nil, r.Collection)
	}
}

func (a *orderActor) deposit(ctx actor.Context, m *orderDeposit) {
	cmd := &orders.DepositCommand{
		At:                a.deps.now().UnixMilli(),
		OrgID:             a.key.org,
		OrderID:           m.orderID,
		CollectionID:      a.ids.next("col_"),
		Amount:            m.amount,
		Outcome:           m.outcome,
		ExternalReference: m.ref,
	}
	if err := a.propose(ctx, cmd, func(_ actor.Context, r ledger.Result, err error) {
		m.reply <- Reply{Result: r, Err: err}
		if err == nil && r.Err == nil {
			a.deps.track(r.Payout, nil)
		}
	}); err != nil {
		m.reply <- Reply{Err: err}
	}
}

// followOrder hands the driver the payout an order started when its
// collection leg settled, so it is submitted now rather than at the next
// rescan.
func (w *worker) followOrder(collectionID string) {
	var p ledger.Payout
	var found bool
	st := w.deps.state.Reader()
	if o, ok := orders.OfLeg(st, collectionID); ok && o.PayoutID != "" {
		p, found = st.Payout(o.PayoutID)
	}
	if found && !p.Status.Terminal() {
		w.deps.track(&p, nil)
	}
}
