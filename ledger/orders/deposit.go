package orders

import "payments/ledger"

// Order deposits under a reference: POST /v1/simulations/order-deposit is
// idempotent by its externalReference, like the other deposit simulations.
// The first deposit under a reference records a Deposit keyed by it
// (depositKind's lookup, never removed, so the reference is never
// forgotten); a retry with the same order, amount and outcome answers that
// record and the order as it is now, Replayed, and anything else under the
// reference is a duplicate. A deposit the order refuses records nothing: a
// bad request changes nothing, and its reference stays free.
//
// A record never changes, so it is closed from the start: it is in memory
// (with its pending lookup key) only during the batch that made it, and in
// the state store after, where the lookup filter proves a new reference
// new without a read.

// Deposit is a deposit into an order made under an externalReference,
// as it was asked for and what it moved.
type Deposit struct {
	// ID is the collection id the deposit drew ("col_…"): the order's
	// collection leg when the funds landed, otherwise booked nowhere.
	ID                string
	OrgID             string
	OrderID           string
	ExternalReference string
	Requested         ledger.Minor // the amount asked for; 0: the default (DepositCommand.Amount)
	Outcome           DepositOutcome
	Amount            ledger.Minor // the amount deposited (DepositCommand.Sent)
	CreatedAt         int64        // on the organization's clock
}

// depositKind: a deposit record never changes; it is found by its
// reference. No list by organization: it is read only by reference.
var depositKind = ledger.NewUnlistedRecordKind(ledger.ReceiptSpec(ledger.RecordSpec[Deposit]{
	Tag: ledger.TagOrderDeposit, Name: "order deposit",
	ID:     func(d *Deposit) (string, string) { return d.ID, d.OrgID },
	Fields: (*Deposit).fields,
}, func(d *Deposit) (string, string) { return d.OrgID, d.ExternalReference }))

// applyWithReference is a deposit into order o under c's reference: the
// reference's record answers a retry before the order's state is looked
// at; a new reference deposits, and records the deposit if it was made.
func (c *DepositCommand) applyWithReference(s *ledger.State, o Order) ledger.Result {
	b := feature.Of(s)
	if prev, ok := b.deposits.Find(ledger.IndexReference, ledger.RefKey(c.OrgID, c.ExternalReference)); ok {
		if e := prev.replayOf(c); e != nil {
			return ledger.Result{Err: e}
		}
		return ledger.Result{Replayed: true, Value: &Deposited{Order: &o, Deposit: &prev}}
	}
	if err := ledger.CheckID(c.CollectionID, "col_"); err != nil {
		return ledger.Result{Err: err}
	}
	if b.deposits.Taken(c.CollectionID) {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "order deposit %s already exists", c.CollectionID)}
	}
	r := c.deposit(s, o)
	if r.Err != nil {
		return r
	}
	d := Deposit{
		ID: c.CollectionID, OrgID: c.OrgID, OrderID: c.OrderID, ExternalReference: c.ExternalReference,
		Requested: c.Amount, Outcome: c.Outcome, Amount: c.Sent(Of(r)),
		CreatedAt: s.OrgNow(c.OrgID, c.At),
	}
	b.deposits.Insert(d)
	r.Value = &Deposited{Order: Of(r), Deposit: &d}
	return r
}

// replayOf is nil when c repeats the deposit d records (the same order,
// amount and outcome), else the contract's duplicate naming d's order.
func (d *Deposit) replayOf(c *DepositCommand) *ledger.Error {
	if d.OrderID == c.OrderID && d.Requested == c.Amount && d.Outcome == c.Outcome {
		return nil
	}
	return ledger.Duplicate("Order deposit", d.OrderID)
}

// Sent is the amount the deposit concerned, given the order after it: the
// amount asked for, else the amount the order received, else the amount
// it expected.
func (c *DepositCommand) Sent(after *Order) ledger.Minor {
	switch {
	case c.Amount != 0:
		return c.Amount
	case after.ReceivedAmount != 0:
		return after.ReceivedAmount
	}
	return after.Expected()
}

// DepositByReference returns an organization's order deposit by the
// reference it was made under, however long ago.
func DepositByReference(r *ledger.Reader, orgID, ref string) (Deposit, bool) {
	return ledger.ReadByReference(r, depositKind, orgID, ref)
}

func (o *Deposit) fields(f *ledger.Codec) {
	f.Str(&o.ID, &o.OrgID, &o.OrderID, &o.ExternalReference)
	ledger.FieldMinor(f, &o.Requested)
	ledger.FieldU8(f, &o.Outcome)
	ledger.FieldMinor(f, &o.Amount)
	f.Varint(&o.CreatedAt)
}
