package ledger

// Order deposits under a reference: POST /v1/simulations/order-deposit is
// idempotent by its externalReference, like the other deposit simulations.
// The first deposit under a reference records an OrderDeposit keyed by it
// (orderDepositKind's lookup, never removed, so the reference is never
// forgotten); a retry with the same order, amount and outcome answers that
// record and the order as it is now, Replayed, and anything else under the
// reference is a duplicate. A deposit the order refuses records nothing: a
// bad request changes nothing, and its reference stays free.
//
// A record never changes, so it is closed from the start: it is in memory
// (with its pending lookup key) only during the batch that made it, and in
// the state store after, where the lookup filter proves a new reference
// new without a read.

// OrderDeposit is a deposit into an order made under an externalReference,
// as it was asked for and what it moved.
type OrderDeposit struct {
	// ID is the collection id the deposit drew ("col_…"): the order's
	// collection leg when the funds landed, otherwise booked nowhere.
	ID                string
	OrgID             string
	OrderID           string
	ExternalReference string
	Requested         Minor // the amount asked for; 0: the default (DepositOrder.Amount)
	Outcome           DepositOutcome
	Amount            Minor // the amount deposited (DepositOrder.Sent)
	CreatedAt         int64 // on the organization's clock
}

// orderDepositKind: a deposit record never changes; it is found by its
// reference. No list by organization: it is read only by reference.
var orderDepositKind = &kind[OrderDeposit]{
	tag: tagOrderDeposit, name: "order deposit",
	id:  func(d *OrderDeposit) (string, string) { return d.ID, d.OrgID },
	enc: encodeByFields[OrderDeposit], dec: decodeByFields[OrderDeposit],
	open: func(*OrderDeposit) bool { return false },
	lookups: []lookup[OrderDeposit]{
		{name: indexReference, ref: func(d *OrderDeposit) (string, string) { return d.OrgID, d.ExternalReference }},
	},
	unlisted: true,
}

// applyWithReference is a deposit into order o under c's reference: the
// reference's record answers a retry before the order's state is looked
// at; a new reference deposits, and records the deposit if it was made.
func (c *DepositOrder) applyWithReference(s *State, o Order) Result {
	if prev, ok := s.orders.deposits.byReference(c.OrgID, c.ExternalReference); ok {
		if e := prev.replayOf(c); e != nil {
			return Result{Err: e}
		}
		return Result{Replayed: true, Order: &o, OrderDeposit: &prev}
	}
	if err := CheckID(c.CollectionID, "col_"); err != nil {
		return Result{Err: err}
	}
	if s.orders.deposits.taken(c.CollectionID) {
		return Result{Err: Errorf(CodeConflict, "order deposit %s already exists", c.CollectionID)}
	}
	r := c.deposit(s, o)
	if r.Err != nil {
		return r
	}
	d := OrderDeposit{
		ID: c.CollectionID, OrgID: c.OrgID, OrderID: c.OrderID, ExternalReference: c.ExternalReference,
		Requested: c.Amount, Outcome: c.Outcome, Amount: c.Sent(r.Order),
		CreatedAt: s.OrgNow(c.OrgID, c.At),
	}
	s.orders.deposits.insert(d)
	r.OrderDeposit = &d
	return r
}

// replayOf is nil when c repeats the deposit d records (the same order,
// amount and outcome), else the contract's duplicate naming d's order.
func (d *OrderDeposit) replayOf(c *DepositOrder) *Error {
	if d.OrderID == c.OrderID && d.Requested == c.Amount && d.Outcome == c.Outcome {
		return nil
	}
	return Duplicate("Order deposit", d.OrderID)
}

// Sent is the amount the deposit concerned, given the order after it: the
// amount asked for, else the amount the order received, else the amount
// it expected.
func (c *DepositOrder) Sent(after *Order) Minor {
	switch {
	case c.Amount != 0:
		return c.Amount
	case after.ReceivedAmount != 0:
		return after.ReceivedAmount
	}
	return after.Expected()
}

// OrderDepositByReference returns an organization's order deposit by the
// reference it was made under, however long ago.
func (r *Reader) OrderDepositByReference(orgID, ref string) (OrderDeposit, bool) {
	return readByReference(r, orderDepositKind, orgID, ref)
}

func (o *OrderDeposit) fields(f *Codec) {
	f.Str(&o.ID)
	f.Str(&o.OrgID)
	f.Str(&o.OrderID)
	f.Str(&o.ExternalReference)
	FieldMinor(f, &o.Requested)
	FieldU8(f, &o.Outcome)
	FieldMinor(f, &o.Amount)
	f.Varint(&o.CreatedAt)
}
