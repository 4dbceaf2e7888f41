package app

import (
	"errors"

	"github.com/goccy/go-json/jsontext"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/recipients"
	"payments/rails"
)

// Payouts: one operation, CreatePayout, for a payout in one currency and
// one that converts (debited in one currency, delivered in another), to a
// destination given in full or by a saved recipient.

// Destination is where money goes, as the request gave it: nil for a
// field left out (a field given empty is given).
type Destination struct {
	AccountNumber *string
	Address       *string
	Tag           *string
	RoutingNumber *string
}

// PayoutInput is a request to create a payout, its shape checked.
type PayoutInput struct {
	ExternalReference string
	// Spec is the payout as asked, its destination aside (Destination).
	// With Spec.RecipientID, Method and Currency may be "": the recipient
	// supplies them and the destination.
	Spec ledger.PayoutSpec
	// Amount is Spec.Amount still as text, set only when the request left
	// the amount's currency to the recipient.
	Amount Amount
	// FromCurrency is the currency to debit when it is not Spec.Currency
	// (a cross-currency payout); "" or Spec.Currency otherwise.
	FromCurrency string
	Destination  Destination
}

// CreatePayout creates a payout, or answers the one its reference names.
//
// In order, as the contract's errors come: no provider on this deployment
// (503; a cross-currency payout's rate is asked first, since without it
// nothing can be priced, rail or not); the recipient (validation_error: not
// one of the organization's, inactive, or another method or currency than
// the request's); the price: a payout fixed on the from side pays its fee
// out of the amount, a cross-currency one converts at the current all-in
// rate (a retry of one that exists keeps the price it was created at, so
// that a replay is a replay whatever the rate does meanwhile); the method
// (the catalogue's rules and limits, on the amount delivered); the
// destination by the method's type; the key's spend caps; then the debited
// account's actor (actors.System.CreatePayout), which decides the rest.
func (a *App) CreatePayout(c Caller, in PayoutInput) actors.Reply {
	spec := in.Spec
	fx := in.FromCurrency != "" && spec.Currency != "" && in.FromCurrency != spec.Currency
	if a.cfg.NoProvider {
		if fx {
			if _, e := a.Rate(in.FromCurrency, spec.Currency); e != nil {
				return refused(e)
			}
		}
		return refused(NoProviderError())
	}
	// The payout its reference names, read once for both of its uses: a
	// recipient's payout made before the recipient changed, and the price
	// of a cross-currency retry.
	var earlier ledger.Payout
	var found, read bool
	prior := func() (ledger.Payout, bool) {
		if !read {
			earlier, found = a.Reader().PayoutByReference(c.OrgID, in.ExternalReference)
			read = true
		}
		return earlier, found
	}
	dest := in.Destination
	if spec.RecipientID != "" {
		if e := a.fillFromRecipient(c.OrgID, &spec, &dest, prior); e != nil {
			return refused(e)
		}
		fx = in.FromCurrency != "" && in.FromCurrency != spec.Currency
	}
	if in.Amount.Set {
		// In the currency of its side, as the front end reads the amounts
		// whose currency the request gives.
		code := spec.Currency
		if spec.AmountSide == ledger.SideFrom && in.FromCurrency != "" {
			code = in.FromCurrency
		}
		cur, _ := ledger.LookupCurrency(code)
		var p Fields
		if spec.Amount = p.Amount(sideField(spec.AmountSide), in.Amount, cur); len(p) > 0 {
			return refused(p.Err())
		}
	}

	cat := a.cfg.Catalogue
	delivered, amountField := spec.Amount, sideField(spec.AmountSide)
	principal, fee := spec.Amount, ledger.Minor(0)
	if spec.AmountSide == ledger.SideFrom {
		// from.amount is the whole debit: the fee comes out of it, and
		// what is left is converted and delivered.
		if m, ok := cat.Method(spec.Method); ok {
			if fees, ok := m.Fees(rails.Payout); ok {
				principal, fee = fees.Split(spec.Amount)
				delivered = principal
			}
		}
		if delivered <= 0 {
			return refused(ledger.FieldInvalid(amountField, "is too small to cover the fee"))
		}
	}
	var pricing *actors.FXPricing
	if fx {
		var e *ledger.Error
		if pricing, e = a.priceFXPayout(in.FromCurrency, spec, delivered, prior); e != nil {
			return refused(e)
		}
		delivered, amountField = pricing.ToAmount, "to.amount"
	}
	method, e := cat.Check(rails.Payout, "to.code", amountField, spec.Method, spec.Currency, delivered)
	if e != nil {
		return refused(e)
	}
	if e := payoutDestination(&method, &spec, dest); e != nil {
		return refused(e)
	}
	// The fee is charged in the debited currency, on the principal.
	debitCurrency, ownRate := spec.Currency, ""
	if pricing != nil {
		principal, debitCurrency = pricing.FromAmount, pricing.FromCurrency
		if spec.Currency == "USD" {
			ownRate = pricing.Rate // a payout into USD is valued at its own rate
		}
	}
	if spec.AmountSide == ledger.SideTo {
		fees, _ := method.Fees(rails.Payout) // Check: it serves payouts
		fee = fees.Fee(principal)
	}
	spend, e := a.spendFor(c, debitCurrency, ownRate)
	if e != nil {
		return refused(e)
	}
	return a.sys.CreatePayout(actors.PayoutRequest{
		OrgID:             c.OrgID,
		ExternalReference: in.ExternalReference,
		Attempt:           c.Attempt,
		Spec:              spec,
		MethodType:        method.Type,
		Principal:         principal,
		Fee:               fee,
		FX:                pricing,
		Spend:             spend,
	})
}

// fillFromRecipient completes a payout to a saved recipient with the
// recipient's method, currency and destination, and its holder's name as
// the payout's to.kyc when the request has none. A retry of a payout made
// to a recipient since deactivated or deleted still replays: its
// destination comes from that payout.
func (a *App) fillFromRecipient(org string, spec *ledger.PayoutSpec, dest *Destination, prior func() (ledger.Payout, bool)) *ledger.Error {
	id := spec.RecipientID
	r, found := recipients.Get(a.Reader(), org, id)
	earlier, replay := prior()
	replay = replay && earlier.Spec.RecipientID == id
	var to recipients.Spec
	switch {
	case replay:
		e := earlier.Spec
		to = recipients.Spec{Method: e.Method, Currency: e.Currency, AccountNumber: e.AccountNumber, Address: e.Address, Tag: e.Tag}
		if spec.ToKYC == "" {
			spec.ToKYC = e.ToKYC
		}
	case !found:
		return ledger.FieldInvalid("to.recipientId", "is not a recipient of this organization")
	case !r.Active:
		return ledger.FieldInvalid("to.recipientId", "is an inactive recipient; reactivate it with PUT /v1/recipients/"+r.ID)
	default:
		to = r.Spec
		if spec.ToKYC == "" {
			name, _ := jsontext.AppendQuote(nil, to.AccountName)
			spec.ToKYC = `{"accountName":` + string(name) + `}`
		}
	}
	var p Fields
	if spec.Method != "" && spec.Method != to.Method {
		p.Add("to.code", "must be the recipient's method "+to.Method+", or left out")
	}
	if spec.Currency != "" && spec.Currency != to.Currency {
		p.Add("to.currency", "must be the recipient's currency "+to.Currency+", or left out")
	}
	if e := p.Err(); e != nil {
		return e
	}
	spec.Method, spec.Currency = to.Method, to.Currency
	if to.Address != "" {
		dest.Address = &to.Address
		if to.Tag != "" {
			dest.Tag = &to.Tag
		}
	} else {
		dest.AccountNumber = &to.AccountNumber
	}
	return nil
}

// priceFXPayout prices a cross-currency payout of amount (what is
// converted) on spec's side: at the current all-in rate, the side the
// caller left out computed (rails.ConvertTo rounds the from amount up,
// rails.ConvertFrom the to amount down). A retry of a cross-currency payout
// that exists with the same amounts keeps the price it was created at; a
// changed retry is priced afresh, and the ledger refuses it as a duplicate.
func (a *App) priceFXPayout(from string, spec ledger.PayoutSpec, amount ledger.Minor, prior func() (ledger.Payout, bool)) (*actors.FXPricing, *ledger.Error) {
	to, side := spec.Currency, spec.AmountSide
	if prev, found := prior(); found && prev.FX != nil && from == prev.FX.FromCurrency && to == prev.Spec.Currency &&
		side == prev.Spec.AmountSide && amount == prev.RequestedSpec().Amount {
		return &actors.FXPricing{FromCurrency: from, FromAmount: prev.FX.FromAmount, ToAmount: prev.Spec.Amount, Rate: prev.FX.Rate}, nil
	}
	r, e := a.Rate(from, to)
	if e != nil {
		return nil, e
	}
	fx := &actors.FXPricing{FromCurrency: from, Rate: r.String()}
	var err error
	if side == ledger.SideFrom {
		fx.FromAmount = amount
		fx.ToAmount, err = rails.ConvertFrom(r, amount)
	} else {
		fx.ToAmount = amount
		fx.FromAmount, err = rails.ConvertTo(r, amount)
	}
	switch {
	case err != nil:
		return nil, ledger.FieldInvalid(sideField(side), "is out of range at the current rate "+r.String())
	case fx.ToAmount <= 0:
		return nil, ledger.FieldInvalid(sideField(side), "is too small: it converts to nothing in "+to+" at the current rate "+r.String())
	}
	return fx, nil
}

// payoutDestination checks the destination by the method's type and puts
// it in spec: an address (and tag) on the method's chain for crypto, a
// phone number for mobile money, a bank account number otherwise, with the
// bank's routing number where the method takes one.
func payoutDestination(m *rails.Method, spec *ledger.PayoutSpec, d Destination) *ledger.Error {
	var p Fields
	switch m.Type {
	case ledger.MethodCrypto:
		spec.Address = p.Text("to.address", d.Address, true, 128)
		spec.Tag = p.Text("to.tag", d.Tag, false, 64)
		if spec.Address != "" {
			if err := rails.ValidateAddress(m.Chain, spec.Address); err != nil {
				p.Add("to.address", AddressReason(err))
			}
		}
		if d.AccountNumber != nil {
			p.Add("to.accountNumber", "must not be given for a crypto method; use to.address")
		}
		if d.RoutingNumber != nil {
			p.Add("to.routingNumber", "is not used by a crypto method")
		}
	default:
		spec.AccountNumber = p.Text("to.accountNumber", d.AccountNumber, true, 50)
		if spec.AccountNumber != "" {
			if m.Type == ledger.MethodMobileMoney {
				spec.AccountNumber = p.Phone("to.accountNumber", spec.AccountNumber)
			} else {
				p.Alnum("to.accountNumber", spec.AccountNumber, 5, 34)
			}
		}
		if d.Address != nil {
			p.Add("to.address", "must not be given for a "+m.Type.APIName()+" method; use to.accountNumber")
		}
		if d.Tag != nil {
			p.Add("to.tag", "is only for crypto methods")
		}
		// A bank whose rail routes by bank code may be named by it.
		spec.RoutingNumber = p.Text("to.routingNumber", d.RoutingNumber, false, 64)
		if _, routed := m.Field("routingNumber"); d.RoutingNumber != nil && !routed {
			p.Add("to.routingNumber", "is not used by "+m.Code)
		} else if spec.RoutingNumber != "" && !m.Routes(spec.RoutingNumber) {
			p.Add("to.routingNumber", "must be one of the bank codes listed in GET /v1/capabilities/"+m.Country+"/"+m.Code)
		}
	}
	return p.Err()
}

// AddressReason is why an address is refused, in words for the caller.
func AddressReason(err error) string {
	var ae *rails.AddressError
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return "is not valid on this chain"
}

// sideField names the request field that carried the amount.
func sideField(side ledger.Side) string {
	if side == ledger.SideFrom {
		return "from.amount"
	}
	return "to.amount"
}

// spendFor is what a debit made by the caller's key counts against its
// caps: the rate of the debited currency to USD (the operation's own where
// given, else the current one). With no rate to be had, a key without caps
// still moves money (uncounted), and a key with caps is refused 503. A
// caller without a key counts nothing.
func (a *App) spendFor(c Caller, debitCurrency, ownRate string) (*actors.Spend, *ledger.Error) {
	if c.Key == nil {
		return nil, nil
	}
	sp := &actors.Spend{KeyID: c.Key.ID, USDRate: ownRate}
	if debitCurrency == "USD" || ownRate != "" {
		return sp, nil
	}
	r, e := a.Rate(debitCurrency, "USD")
	if e != nil {
		k := c.Key.Caps
		if k.PerTransaction == nil && k.Daily == nil && k.Monthly == nil {
			return nil, nil
		}
		return nil, e
	}
	sp.USDRate = r.String()
	return sp, nil
}

// NoProviderError is the refusal of money movement on a production
// deployment without provider adapters.
func NoProviderError() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnavailable,
		Message: "No payment provider is configured on this deployment; nothing was done"}
}
