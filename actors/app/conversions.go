package app

import (
	"payments/actors"
	"payments/ledger"
	"payments/ledger/conversions"
	"payments/rails"
)

// Quotes and conversions. A quote is priced at the current all-in rate:
// the side the caller left out is computed from it (rails.ConvertFrom
// rounds the bought amount down, rails.ConvertTo rounds the sold amount
// up, so the house never gives more than the rate), and the ledger records
// both amounts and the rate string as given. Executing goes through the
// quote's actor (actors.System.ExecuteQuote).

// QuoteInput is a request for a quote, its shape checked: the amount on
// one side, in that side's currency.
type QuoteInput struct {
	FromCurrency string
	ToCurrency   string
	Side         ledger.Side
	Amount       ledger.Minor
}

// CreateQuote prices a conversion at the current rate and records the
// quote. Refusals: bad_request for a currency the rate source does not
// price, rate_unavailable, validation_error for an amount that buys
// nothing or is too large to convert.
func (a *App) CreateQuote(c Caller, in QuoteInput) actors.Reply {
	cmd := &conversions.CreateQuote{OrgID: c.OrgID, FromCurrency: in.FromCurrency, ToCurrency: in.ToCurrency, Side: in.Side}
	rate, e := a.Rate(in.FromCurrency, in.ToCurrency)
	if e != nil {
		return refused(e)
	}
	var err error
	if in.Side == ledger.SideFrom {
		cmd.FromAmount = in.Amount
		cmd.ToAmount, err = rails.ConvertFrom(rate, in.Amount)
		if err == nil && cmd.ToAmount == 0 {
			return refused(ledger.FieldInvalid("from.amount", "is too small: at the rate "+rate.String()+" it buys less than the smallest unit of "+in.ToCurrency))
		}
	} else {
		cmd.ToAmount = in.Amount
		cmd.FromAmount, err = rails.ConvertTo(rate, in.Amount)
	}
	if err != nil || cmd.FromAmount > ledger.AmountMax || cmd.ToAmount > ledger.AmountMax {
		return refused(ledger.FieldInvalid(sideField(in.Side), "is too large to convert"))
	}
	cmd.Rate = rate.String()
	cmd.ID = actors.NewID("qte_")
	cmd.At = a.sys.Now().UnixMilli()
	return a.propose(cmd)
}

// ExecuteConversion converts at a pending quote of the organization, under
// the caller's externalReference ref ("" for none); see
// actors.System.ExecuteQuote for the answers.
func (a *App) ExecuteConversion(c Caller, quoteID, ref string) actors.Reply {
	return a.sys.ExecuteQuote(c.OrgID, quoteID, ref, c.Attempt)
}
