package app

import (
	"payments/actors"
	"payments/ledger"
	"payments/ledger/orders"
	"payments/rails"
)

// Orders: a customer's money in through one method, paid out through
// another (package ledger/orders has the rules of an order's life).

// OrderInput is a request to create an order, its shape checked: the
// amount on one side, in that side's currency; the account numbers and
// tag as given (checked here, by their methods' types).
type OrderInput struct {
	ExternalReference string
	Spec              orders.Spec
}

// CreateOrder creates an order, or answers the one its reference names.
//
// It prices the order: from.amount is what the customer sends, the
// destination method's fee comes out of it and the rest is converted and
// delivered; to.amount is delivered exactly, the customer asked for it plus
// the fee. A cross-currency order locks the current rate. Both methods
// must carry their currencies and take their amounts (the source's
// limits first: an amount the customer cannot send is named by the
// source's bounds; one the destination cannot deliver by the
// destination's). A bank order's money arrives as a transfer into a
// virtual account: the catalogue's collections flag is about charging a
// payer, which banks do not offer, so the bank rail is checked as the
// transfer rail it is. Then the account numbers by their methods' types,
// the deposit instructions (provisioned on the sandbox; a production
// order is paid by mobile money alone: liveOrderOrigin), the key's spend
// caps (the payout leg, from the destination currency's balance), and the
// order's actor (actors.System.CreateOrder).
func (a *App) CreateOrder(c Caller, in OrderInput) actors.Reply {
	if a.cfg.NoProvider {
		return refused(NoProviderError())
	}
	req := actors.OrderRequest{OrgID: c.OrgID, ExternalReference: in.ExternalReference, Attempt: c.Attempt, Spec: in.Spec}
	spec := &req.Spec
	amountField := sideField(spec.AmountSide)
	cat := a.cfg.Catalogue
	if e := a.liveOrderOrigin(spec.FromMethod); e != nil {
		return refused(e) // before the rate: no retry makes such an order
	}

	principal, fromSideFee := spec.Amount, ledger.Minor(0)
	if spec.AmountSide == ledger.SideFrom {
		if m, ok := cat.Method(spec.ToMethod); ok {
			if fees, ok := m.Fees(rails.Payout); ok {
				principal, fromSideFee = fees.Split(spec.Amount)
			}
		}
		if principal <= 0 {
			return refused(ledger.FieldInvalid(amountField, "is too small to cover the fee"))
		}
	}
	req.FromAmount, req.ToAmount = principal, principal
	fromField, toField := amountField, amountField
	if spec.FromCurrency != spec.ToCurrency {
		rate, e := a.Rate(spec.FromCurrency, spec.ToCurrency)
		if e != nil {
			return refused(e)
		}
		req.Rate = rate.String()
		var err error
		if spec.AmountSide == ledger.SideFrom {
			req.ToAmount, err = rails.ConvertFrom(rate, principal)
		} else {
			req.FromAmount, err = rails.ConvertTo(rate, spec.Amount)
		}
		if err != nil {
			return refused(ledger.FieldInvalid(amountField, "is too large to convert"))
		}
		if req.FromAmount == 0 || req.ToAmount == 0 {
			return refused(ledger.FieldInvalid(amountField, "is too small: it converts to nothing at rate "+req.Rate))
		}
		// Each method's bounds are in its own currency: the field of that
		// side is the one they name.
		fromField, toField = "from.amount", "to.amount"
	}

	toMethod, e := cat.CheckMethod(rails.Payout, "to.code", spec.ToMethod, spec.ToCurrency)
	if e != nil {
		return refused(e)
	}
	req.ToMethodType = toMethod.Type
	// The order's fee is its payout's: the destination method's, charged
	// in the origin currency on what is converted.
	toFees, _ := toMethod.Fees(rails.Payout) // CheckMethod: it serves payouts
	req.Fee = toFees.Fee(req.FromAmount)
	if spec.AmountSide == ledger.SideFrom {
		req.Fee = fromSideFee
	}
	if req.FromAmount > ledger.AmountMax-req.Fee {
		return refused(ledger.FieldInvalid(amountField, "is out of range"))
	}
	dir := rails.Collection
	if m, ok := cat.Method(spec.FromMethod); ok && m.Type == ledger.MethodBankTransfer {
		dir = rails.Payout
	}
	fromMethod, e := cat.CheckMethod(dir, "from.code", spec.FromMethod, spec.FromCurrency)
	if e == nil {
		e = fromMethod.CheckAmount(fromField, req.FromAmount+req.Fee)
	}
	if e == nil {
		e = toMethod.CheckAmount(toField, req.ToAmount)
	}
	if e != nil {
		return refused(e)
	}
	req.FromMethodType = fromMethod.Type
	if e := orderAccounts(&fromMethod, &toMethod, spec); e != nil {
		return refused(e)
	}

	o, _ := a.Reader().Organization(c.OrgID)
	instructions, err := rails.SandboxDepositInstructions(fromMethod, o.Name, spec.FromAccountNumber)
	if err != nil {
		return refused(ledger.FieldInvalid("from.code", "cannot receive deposits: "+err.Error()))
	}
	req.Instructions = instructions

	// The payout leg leaves the destination currency's balance: its USD
	// value is the principal where the origin is USD (converted at the
	// order's own rate), else at the current rate of the destination.
	if spec.FromCurrency == "USD" && spec.ToCurrency != "USD" {
		if c.Key != nil {
			usd := req.FromAmount
			req.Spend = &actors.Spend{KeyID: c.Key.ID, USD: &usd}
		}
	} else if req.Spend, e = a.spendFor(c, spec.ToCurrency, ""); e != nil {
		return refused(e)
	}
	return a.sys.CreateOrder(req)
}

// liveOrderOrigin refuses, on the production stack, an order whose money
// would arrive anywhere but through a provider: the sandbox's deposit
// addresses and bank accounts are no one's, and a provider's deposit feed
// credits only the crypto addresses it issued, so a production order is
// paid by mobile money (its collection prompt goes through the method's
// provider). A method the deployment does not offer at all is left to
// the catalogue's checks, which say that no provider serves it.
func (a *App) liveOrderOrigin(code string) *ledger.Error {
	if !a.cfg.Live {
		return nil
	}
	m, ok := a.cfg.Catalogue.Method(code)
	if !ok || m.Type == ledger.MethodMobileMoney {
		return nil
	}
	return ledger.FieldInvalid("from.code", code+": orders on this deployment are paid by mobile money; no provider issues "+
		m.Type.APIName()+" deposit instructions for orders yet")
}

// orderAccounts checks an order's account numbers by their methods'
// types: the payer's phone for a mobile money origin (which gets the
// prompt), none for an origin whose instructions the order provisions; the
// destination's address (and tag) on its chain, phone or bank account.
func orderAccounts(from, to *rails.Method, spec *orders.Spec) *ledger.Error {
	var p Fields
	switch from.Type {
	case ledger.MethodMobileMoney:
		if spec.FromAccountNumber == "" {
			p.Add("from.accountNumber", "is required for a mobile money order: the payer's phone number, which gets the prompt")
		} else {
			spec.FromAccountNumber = p.Phone("from.accountNumber", spec.FromAccountNumber)
		}
	default:
		if spec.FromAccountNumber != "" {
			p.Add("from.accountNumber", "must not be given for a "+from.Type.APIName()+" order: the order provisions where the customer sends the funds")
		}
	}
	switch to.Type {
	case ledger.MethodCrypto:
		// to.accountNumber is the destination address, checked by the
		// chain's own rules.
		if err := rails.ValidateAddress(to.Chain, spec.ToAccountNumber); err != nil {
			p.Add("to.accountNumber", AddressReason(err))
		}
		if spec.ToTag != "" {
			if err := rails.ValidateTag(to.Chain, spec.ToTag); err != nil {
				p.Add("to.tag", AddressReason(err))
			}
		}
	case ledger.MethodMobileMoney:
		spec.ToAccountNumber = p.Phone("to.accountNumber", spec.ToAccountNumber)
	default:
		p.Alnum("to.accountNumber", spec.ToAccountNumber, 5, 34)
	}
	if spec.ToTag != "" && to.Type != ledger.MethodCrypto {
		p.Add("to.tag", "is only for crypto methods")
	}
	return p.Err()
}
