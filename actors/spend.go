package actors

import (
	"sync"
	"time"
	_ "time/tzdata" // every node reads organizations' timezones from the same table

	"payments/ledger"
	"payments/ledger/keycontrols"
)

// Spend caps (package ledger/keycontrols): the actor that proposes a debit
// is the one that knows its amount, fee and rate, so it prices the debit in
// USD and finds the organization's calendar period, and carries both in the
// command; Apply checks the key's caps and counts the charge with the debit.

// Spend is the key a debit is made with and how to value it in USD. A nil
// *Spend counts nothing (a debit no key asked for).
type Spend struct {
	KeyID string
	// USDRate is units of USD per unit of the debited currency: the rate
	// the operation itself uses where one side is USD, else the current
	// rate. Unused when the debited currency is USD.
	USDRate string
	// USD, when set, is the debit's value outright (an order from a USD
	// origin: its principal, converted at the order's own rate).
	USD *ledger.Minor
}

// charge prices a debit of amount in currency at leader time at.
func (sp *Spend) charge(st StateReader, org string, amount ledger.Minor, currency string, at int64) (keycontrols.Charge, *ledger.Error) {
	usd := ledger.Minor(0)
	if sp.USD != nil {
		usd = *sp.USD
	} else {
		v, err := keycontrols.USDValue(amount, currency, sp.USDRate)
		if err != nil {
			return keycontrols.Charge{}, &ledger.Error{Code: ledger.CodeRateUnavailable,
				Message: "The USD value of this operation cannot be had right now, so the key's spend caps cannot be checked; nothing was done, retry shortly"}
		}
		usd = v
	}
	return keycontrols.Charge{KeyID: sp.KeyID, USD: usd, Period: SpendPeriodAt(st.Reader(), org, at)}, nil
}

// SpendPeriodAt is the organization's calendar day and month when the
// leader's clock reads at (its sandbox clock offset included), in its
// timezone; an unknown timezone is UTC.
func SpendPeriodAt(r *ledger.Reader, org string, at int64) ledger.SpendPeriod {
	loc := time.UTC
	if o, ok := r.Organization(org); ok {
		loc = location(o.Timezone)
	}
	return keycontrols.PeriodOf(time.UnixMilli(r.OrgNow(org, at)).In(loc))
}

var locations sync.Map // IANA name → *time.Location

// location loads a timezone once; an empty or unknown name is UTC.
func location(name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		l = time.UTC
	}
	locations.Store(name, l)
	return l
}
