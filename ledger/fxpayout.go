package ledger

// Cross-currency payouts.
//
// A cross-currency payout is debited from the organization's balance in
// one currency (from) and delivered in another (to). The caller (package
// http) prices it at the current all-in rate and carries both amounts, the
// rate and the fee in CreateFXPayout, so the ledger never reads a rate and
// a replay is exact. In one Apply it books:
//
//	from balance   −(fromAmount + fee)
//	FX clearing(from)        +fromAmount      fee revenue(from) +fee
//	FX clearing(to)          −toAmount
//	payouts clearing(to)     +toAmount
//
// so the journal sums to zero in each currency. From there the payout is an
// ordinary payout of toAmount in the to currency: the rail settles it from
// payouts clearing. On failure settlePayout reverses the FX legs too, and
// the from balance gets back exactly fromAmount + fee, whatever the rate.
//
// CreatePayout (kind 5) is frozen, so a cross-currency payout is a command
// of its own; the payout's stored record carries its FX details
// (Payout.FX).

// KindCreateFXPayout creates a cross-currency payout.
const KindCreateFXPayout Kind = 12

// Entry types of cross-currency payouts. Frozen.
const (
	EntryFXPayoutDebit    EntryType = 35 // the from balance pays the payout's from amount
	EntryFXPayoutClearing EntryType = 36 // the FX clearing accounts' side of the conversion
	EntryFXPayoutReversal EntryType = 37 // a failed payout's conversion, reversed
)

// PurposeFXClearing is the service's account, one per currency, that takes
// the other side of every conversion leg: a cross-currency payout's, an
// order's and a conversion's (package conversions). Frozen.
const PurposeFXClearing AccountPurpose = 20

// SubjectFXPayout tags events about a cross-currency payout: the payout
// record and its FX details. Frozen.
const SubjectFXPayout SubjectKind = 11

// PayoutFX is what a cross-currency payout adds to its payout: the balance
// it was debited from and at which rate. The payout's Spec is in the to
// currency, its Fee and AccountNumber in the from currency.
type PayoutFX struct {
	PayoutID     string
	OrgID        string
	FromCurrency string
	FromAmount   Minor
	Rate         string // units of to currency per from currency, all-in
}

// FromCurrency is the currency of the debited balance.
func (p Payout) FromCurrency() string {
	if p.FX != nil {
		return p.FX.FromCurrency
	}
	return p.Spec.Currency
}

// FromAmount is the principal taken from the debited balance, fee aside.
func (p Payout) FromAmount() Minor {
	if p.FX != nil {
		return p.FX.FromAmount
	}
	return p.Spec.Amount
}

// RequestedSpec is the spec as the caller gave it: for a cross-currency
// payout fixed on the from side, its amount is the from amount.
func (p Payout) RequestedSpec() PayoutSpec {
	spec := p.Spec
	if p.FX != nil && spec.AmountSide == SideFrom {
		spec.Amount = p.FX.FromAmount
	}
	return spec
}

// CreateFXPayout debits FromAmount + Fee from the organization's
// FromCurrency balance, converts FromAmount into ToAmount of
// Spec.Currency at Rate, and records a pending payout of ToAmount, in one
// Apply or not at all. Spec is the caller's request: its Amount is the
// amount on the side it fixed (FromAmount or ToAmount).
type CreateFXPayout struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              PayoutSpec
	MethodType        MethodType
	Fee               Minor // in FromCurrency
	Reservation       uint64
	FromCurrency      string
	FromAmount        Minor
	ToAmount          Minor
	Rate              string
}

func (c *CreateFXPayout) Kind() Kind {
	if c.Spec.RoutingNumber != "" {
		return KindCreateFXPayoutRouted // routing.go
	}
	return KindCreateFXPayout
}

func (c *CreateFXPayout) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.ExternalReference)
	c.Spec.fields(f)
	FieldMethodType(f, &c.MethodType)
	FieldMinor(f, &c.Fee)
	f.Uvarint(&c.Reservation)
	f.Str(&c.FromCurrency)
	FieldMinor(f, &c.FromAmount, &c.ToAmount)
	f.Str(&c.Rate)
}

func (c *CreateFXPayout) Encode(e *Encoder) {
	c.fields(e.Codec())
	if c.Spec.RoutingNumber != "" { // appended (routing.go)
		e.Str(c.Spec.RoutingNumber)
	}
}

func encodePayoutFX(e *Encoder, f *PayoutFX) {
	e.Str(f.PayoutID)
	e.Str(f.OrgID)
	e.Str(f.FromCurrency)
	e.Varint(int64(f.FromAmount))
	e.Str(f.Rate)
}

func decodePayoutFX(d *Decoder) PayoutFX {
	return PayoutFX{PayoutID: d.Str(), OrgID: d.Str(), FromCurrency: d.Str(), FromAmount: Minor(d.Varint()), Rate: d.Str()}
}

func init() {
	registerPurpose(PurposeFXClearing, "fx_clearing")
	registerFields[CreateFXPayout](KindCreateFXPayout)
	registerEntryType(EntryFXPayoutDebit, "fx_payout_debit", "payout")
	registerEntryType(EntryFXPayoutClearing, "fx_payout_clearing", "payout")
	registerEntryType(EntryFXPayoutReversal, "fx_payout_reversal", "payout")
	registerSubject(SubjectFXPayout,
		func(e *Encoder, s Subject) {
			p := s.(Payout)
			p.fields(e.Codec())
			encodePayoutFX(e, p.FX)
		},
		func(d *Decoder) Subject {
			var p Payout
			p.fields(d.Codec())
			fx := decodePayoutFX(d)
			p.FX = &fx
			return p
		})
}

func (c *CreateFXPayout) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "pay_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	from, to, err := lookupCurrencyPair(c.FromCurrency, c.Spec.Currency)
	if err != nil {
		return Result{Err: err}
	}
	switch {
	case from.Code == to.Code:
		return Result{Err: FieldInvalid("from.currency", "must differ from to.currency for a cross-currency payout")}
	case c.FromAmount <= 0 || c.FromAmount > AmountMax:
		return Result{Err: FieldInvalid("from.amount", "is out of range")}
	case c.ToAmount <= 0 || c.ToAmount > AmountMax:
		return Result{Err: FieldInvalid("to.amount", "is out of range")}
	case c.Fee < 0 || c.Fee > AmountMax:
		return Result{Err: FieldInvalid("fee", "is out of range")}
	case c.Spec.AmountSide == SideFrom && c.Spec.Amount != c.FromAmount,
		c.Spec.AmountSide == SideTo && c.Spec.Amount != c.ToAmount,
		c.Spec.AmountSide != SideFrom && c.Spec.AmountSide != SideTo:
		return Result{Err: Errorf(CodeValidation, "payout amount does not match its side")}
	case !validRate(c.Rate):
		return Result{Err: Errorf(CodeValidation, "rate %q is not a positive decimal", c.Rate)}
	case c.ExternalReference == "":
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	if err := checkRoutingNumber(&c.Spec); err != nil {
		return Result{Err: err}
	}
	n := newPayout{
		At: c.At, ID: c.ID, OrgID: c.OrgID, ExternalReference: c.ExternalReference, Spec: &c.Spec,
		MethodType: c.MethodType, Fee: c.Fee, Reservation: c.Reservation,
		Currency: from.Code, FXFrom: from.Code, Principal: c.FromAmount,
	}
	account, r, done := s.debitForPayout(&n)
	if done {
		return r
	}
	postings := []Posting{
		{account.Number, EntryFXPayoutDebit, -c.FromAmount},
		{s.systemAccount(PurposeFXClearing, from.Code, c.At), EntryFXPayoutClearing, c.FromAmount},
		{s.systemAccount(PurposeFXClearing, to.Code, c.At), EntryFXPayoutClearing, -c.ToAmount},
		{s.systemAccount(PurposePayoutsClearing, to.Code, c.At), EntryPayoutCredit, c.ToAmount},
	}
	if c.Fee > 0 { // fee revenue in from's currency is opened only by a fee
		postings = appendFeePostings(postings, account.Number, s.systemAccount(PurposeFeeRevenue, from.Code, c.At), c.Fee)
	}
	if _, err := s.book(c.At, c.ID, c.ExternalReference, postings); err != nil {
		return Result{Err: err}
	}
	spec := c.Spec
	spec.Amount = c.ToAmount
	return s.insertNewPayout(&n, account.Number, spec,
		&PayoutFX{PayoutID: c.ID, OrgID: c.OrgID, FromCurrency: from.Code, FromAmount: c.FromAmount, Rate: c.Rate})
}

// fxRefundPostings reverses a failed cross-currency payout: the payout's
// to amount leaves payouts clearing back to FX clearing, and the from
// amount and fee return from FX clearing and fee revenue to the balance.
func (s *State) fxRefundPostings(p Payout, fx PayoutFX, at int64) []Posting {
	to := p.Spec.Currency
	postings := []Posting{
		{s.systemAccount(PurposePayoutsClearing, to, at), EntryPayoutSettlement, -p.Spec.Amount},
		{s.systemAccount(PurposeFXClearing, to, at), EntryFXPayoutReversal, p.Spec.Amount},
		{s.systemAccount(PurposeFXClearing, fx.FromCurrency, at), EntryFXPayoutReversal, -fx.FromAmount},
		{p.AccountNumber, EntryPayoutRefund, fx.FromAmount},
	}
	if p.Fee > 0 {
		postings = append(postings,
			Posting{s.systemAccount(PurposeFeeRevenue, fx.FromCurrency, at), EntryFeeRevenue, -p.Fee},
			Posting{p.AccountNumber, EntryFeeRefund, p.Fee})
	}
	return postings
}

// validRate accepts a positive decimal without sign or exponent: digits,
// at most one point, not all zeros.
func validRate(r string) bool {
	if r == "" || len(r) > 64 || r[0] == '.' || r[len(r)-1] == '.' {
		return false
	}
	point, nonzero := false, false
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == '.' && !point:
			point = true
		case c >= '1' && c <= '9':
			nonzero = true
		case c != '0':
			return false
		}
	}
	return nonzero
}
