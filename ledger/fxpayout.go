package ledger

// What the kernel keeps of cross-currency payouts (package fxpayouts
// creates them). A cross-currency payout is the kernel's payout with its FX
// details (Payout.FX), which the payout record and its events keep inside
// their frozen bytes: the kernel keeps them, their codec, the entry types
// its legs are booked under and, since settlePayout refunds it, the
// reversal of a failed one's FX legs.

// KindCreateFXPayout is package fxpayouts' create (CreatePayout's kind 5
// is frozen). It stays here because package keycontrols charges it among
// the kernel's payouts.
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

func (fx *PayoutFX) fields(f *Codec) {
	f.Str(&fx.PayoutID, &fx.OrgID, &fx.FromCurrency)
	FieldMinor(f, &fx.FromAmount)
	f.Str(&fx.Rate)
}

func init() {
	registerPurpose(PurposeFXClearing, "fx_clearing")
	registerEntryType(EntryFXPayoutDebit, "fx_payout_debit", "payout")
	registerEntryType(EntryFXPayoutClearing, "fx_payout_clearing", "payout")
	registerEntryType(EntryFXPayoutReversal, "fx_payout_reversal", "payout")
	registerPayoutSubject(SubjectFXPayout, withFX)
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
