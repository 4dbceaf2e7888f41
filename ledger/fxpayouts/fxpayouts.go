// Package fxpayouts is the ledger's cross-currency payouts: a payout
// debited from the organization's balance in one currency (from) and
// delivered in another (to). It is a feature of the ledger's kernel
// (ledger/feature.go): its create is applied by ledger.State.Apply in log
// order like every other command, and answers finally by reference
// (ledger.Decided, through ledger.RegisterDecided) as a payout, under the
// payouts' references.
//
// The application layer (actors/app) prices the payout at the current
// all-in rate and carries both amounts, the rate and the fee in Create, so
// the ledger never reads a rate and a replay is exact. In one Apply it
// books:
//
//	from balance   −(fromAmount + fee)
//	FX clearing(from)        +fromAmount      fee revenue(from) +fee
//	FX clearing(to)          −toAmount
//	payouts clearing(to)     +toAmount
//
// so the journal sums to zero in each currency. From there the payout is
// the kernel's ordinary payout of toAmount in the to currency, with its FX
// details (ledger.Payout.FX): the rail settles it from payouts clearing,
// and on failure the kernel reverses the FX legs too, so the from balance
// gets back exactly fromAmount + fee, whatever the rate.
//
// The payout's record and events keep the FX details inside their frozen
// bytes, so the kernel keeps them (ledger.PayoutFX), their entry types and
// the create's kind numbers (ledger.KindCreateFXPayout, which package
// keycontrols charges among the kernel's payouts).
package fxpayouts

import "payments/ledger"

// Create debits FromAmount + Fee from the organization's FromCurrency
// balance, converts FromAmount into ToAmount of Spec.Currency at Rate, and
// records a pending payout of ToAmount, in one Apply or not at all. Spec
// is the caller's request: its Amount is the amount on the side it fixed
// (FromAmount or ToAmount).
type Create struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              ledger.PayoutSpec
	MethodType        ledger.MethodType
	Fee               ledger.Minor // in FromCurrency
	Reservation       uint64
	FromCurrency      string
	FromAmount        ledger.Minor
	ToAmount          ledger.Minor
	Rate              string
}

// Kind is frozen: a payout that names its bank has a kind of its own, with
// the routing number appended (ledger/routing.go).
func (c *Create) Kind() ledger.Kind {
	if c.Spec.RoutingNumber != "" {
		return ledger.KindCreateFXPayoutRouted
	}
	return ledger.KindCreateFXPayout
}

// Fields reads or writes the create's fields, the routing number aside.
func (c *Create) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.ExternalReference)
	c.Spec.Fields(f)
	ledger.FieldMethodType(f, &c.MethodType)
	ledger.FieldMinor(f, &c.Fee)
	f.Uvarint(&c.Reservation)
	f.Str(&c.FromCurrency)
	ledger.FieldMinor(f, &c.FromAmount, &c.ToAmount)
	f.Str(&c.Rate)
}

func (c *Create) Encode(e *ledger.Encoder) {
	c.Fields(e.Codec())
	if c.Spec.RoutingNumber != "" { // appended (ledger/routing.go)
		e.Str(c.Spec.RoutingNumber)
	}
}

func init() {
	ledger.RegisterFieldsCommand[Create](ledger.KindCreateFXPayout)
	ledger.RegisterCommand(ledger.KindCreateFXPayoutRouted, func(d *ledger.Decoder) ledger.Command {
		c := new(Create)
		c.Fields(d.Codec())
		c.Spec.RoutingNumber = ledger.ReadRoutingNumber(d)
		return c
	})
	for _, k := range []ledger.Kind{ledger.KindCreateFXPayout, ledger.KindCreateFXPayoutRouted} {
		ledger.RegisterDecided(k, ledger.DecidedResource{
			Resource: ledger.RefusedPayout,
			// The kernel answers for a payout's references and attempts
			// itself (ledger/decided.go): these are asked only of a
			// result that carries no payout.
			Referenced: func(s *ledger.State, org, ref string) bool {
				_, ok := s.PayoutByReference(org, ref)
				return ok
			},
			Attempt: func(*ledger.Result) string { return "" },
			Stamp:   func(*ledger.State, *ledger.Result, string) {},
		})
	}
}

func (c *Create) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "pay_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	from, to, err := ledger.LookupCrossPair(c.FromCurrency, c.Spec.Currency, c.FromAmount, c.ToAmount,
		ledger.FieldInvalid("from.currency", "must differ from to.currency for a cross-currency payout"))
	if err != nil {
		return ledger.Result{Err: err}
	}
	switch {
	case c.Fee < 0 || c.Fee > ledger.AmountMax:
		return ledger.Result{Err: ledger.FieldInvalid("fee", "is out of range")}
	case c.Spec.AmountSide == ledger.SideFrom && c.Spec.Amount != c.FromAmount,
		c.Spec.AmountSide == ledger.SideTo && c.Spec.Amount != c.ToAmount,
		c.Spec.AmountSide != ledger.SideFrom && c.Spec.AmountSide != ledger.SideTo:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "payout amount does not match its side")}
	case !ledger.ValidRate(c.Rate):
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "rate %q is not a positive decimal", c.Rate)}
	case c.ExternalReference == "":
		return ledger.Result{Err: ledger.FieldInvalid("externalReference", "is required")}
	}
	if err := ledger.CheckRoutingNumber(&c.Spec); err != nil {
		return ledger.Result{Err: err}
	}
	n := ledger.NewPayout{
		At: c.At, ID: c.ID, OrgID: c.OrgID, ExternalReference: c.ExternalReference, Spec: &c.Spec,
		MethodType: c.MethodType, Fee: c.Fee, Reservation: c.Reservation,
		Currency: from.Code, FXFrom: from.Code, Principal: c.FromAmount,
	}
	account, r, done := s.DebitForPayout(&n)
	if done {
		return r
	}
	postings := []ledger.Posting{
		{Account: account.Number, Type: ledger.EntryFXPayoutDebit, Amount: -c.FromAmount},
		{Account: s.SystemAccount(ledger.PurposeFXClearing, from.Code, c.At), Type: ledger.EntryFXPayoutClearing, Amount: c.FromAmount},
		{Account: s.SystemAccount(ledger.PurposeFXClearing, to.Code, c.At), Type: ledger.EntryFXPayoutClearing, Amount: -c.ToAmount},
		{Account: s.SystemAccount(ledger.PurposePayoutsClearing, to.Code, c.At), Type: ledger.EntryPayoutCredit, Amount: c.ToAmount},
	}
	if c.Fee > 0 { // fee revenue in from's currency is opened only by a fee
		postings = ledger.AppendFeePostings(postings, account.Number, s.SystemAccount(ledger.PurposeFeeRevenue, from.Code, c.At), c.Fee)
	}
	if _, err := s.Book(c.At, c.ID, c.ExternalReference, postings); err != nil {
		return ledger.Result{Err: err}
	}
	spec := c.Spec
	spec.Amount = c.ToAmount
	return s.InsertNewPayout(&n, account.Number, spec,
		&ledger.PayoutFX{PayoutID: c.ID, OrgID: c.OrgID, FromCurrency: from.Code, FromAmount: c.FromAmount, Rate: c.Rate})
}

// Decision is what Decided compares a retry by (ledger.DecidedOp): the
// from currency and the request's spec, not the amounts or the rate the
// leader priced it at.
func (c *Create) Decision(e *ledger.Encoder) (org, ref, id string, at int64) {
	e.U8(1)
	e.Str(c.FromCurrency)
	c.Spec.Fields(e.Codec())
	if c.Spec.RoutingNumber != "" {
		e.Str(c.Spec.RoutingNumber)
	}
	return c.OrgID, c.ExternalReference, c.ID, c.At
}

// Charged makes a cross-currency payout a debit spend caps charge
// (ledger.ChargedOp).
func (c *Create) Charged(s *ledger.State) (org, ref string, taken bool) {
	_, taken = s.PayoutByReference(c.OrgID, c.ExternalReference)
	return c.OrgID, c.ExternalReference, taken
}

// ChargedID is the payout the create made.
func (c *Create) ChargedID(res *ledger.Result) string {
	if res.Payout == nil {
		return ""
	}
	return res.Payout.ID
}
