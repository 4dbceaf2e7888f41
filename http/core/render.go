package core

import (
	"time"

	"payments/ledger"
)

// The API's resource shapes. Amounts are decimal strings in the currency's
// precision; timestamps are ISO 8601 UTC with milliseconds; absent optional
// values are null, as the contract shows them.

const TimeLayout = "2006-01-02T15:04:05.000Z"

func Timestamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(TimeLayout)
}

func OptionalTimestamp(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := Timestamp(ms)
	return &s
}

func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func Money(m ledger.Minor, currency string) string {
	cur, _ := ledger.LookupCurrency(currency)
	return ledger.FormatMinor(m, cur)
}

// MoneyJSON is an amount of money as the contract shows it: the decimal
// amount in its currency's precision, beside the currency. A body whose
// amount and currency are one money value embeds it, so that the two
// members stand flat in the body, amount first.
type MoneyJSON struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// MoneyOf is m minor units of currency as the contract shows them.
func MoneyOf(m ledger.Minor, currency string) MoneyJSON {
	return MoneyJSON{Money(m, currency), currency}
}

func FirstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
