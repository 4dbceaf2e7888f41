package money

import (
	"payments/http/core"
	"payments/ledger"
)

// Payouts, orders and quotes move money from one currency to another and
// take their amount on exactly one side, from or to: the caller names what
// leaves or what arrives, never both.

// sideBody is a side of a money movement as a request gives it: the
// method's code, the account, the money, and the holder's KYC. A side that
// takes more (an order's destination tag) embeds it.
type sideBody struct {
	Code          *string `json:"code"`
	AccountNumber *string `json:"accountNumber"`
	core.MoneyBody
	KYC core.JSONObject `json:"kyc"`
}

// amountSide is the side that carries a two-sided request's amount, and the
// amount given there. Both sides is a problem on to.amount; neither is one
// on the side missing names, the side a request of its kind usually
// carries; the side is 0 after either.
func amountSide(p *core.Problems, from, to core.Amount, missing ledger.Side) (ledger.Side, core.Amount) {
	switch {
	case from.Set && to.Set:
		p.Add("to.amount", "must not be given together with from.amount: put the amount on exactly one side")
	case from.Set:
		return ledger.SideFrom, from
	case to.Set:
		return ledger.SideTo, to
	default:
		p.Add(sideField(missing), "is required (or "+sideField(otherSide(missing))+"): put the amount on exactly one side")
	}
	return 0, core.Amount{}
}

// bySide is of from and to the one that belongs to side.
func bySide[T any](side ledger.Side, from, to T) T {
	if side == ledger.SideFrom {
		return from
	}
	return to
}

// otherSide is the side opposite side.
func otherSide(side ledger.Side) ledger.Side {
	return bySide(side, ledger.SideTo, ledger.SideFrom)
}

// sideField names the request field that carries the amount on side.
func sideField(side ledger.Side) string {
	return bySide(side, "from.amount", "to.amount")
}
