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

type MoneyJSON struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

func FirstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

type OrganizationJSON struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Country         string `json:"country"`
	Timezone        string `json:"timezone"`
	DefaultCurrency string `json:"defaultCurrency"`
	Status          string `json:"status"`
	CreatedAt       string `json:"createdAt"`
	UpdatedAt       string `json:"updatedAt"`
}

func RenderOrganization(o *ledger.Organization) OrganizationJSON {
	return OrganizationJSON{
		ID: o.ID, Name: o.Name, Country: o.Country, Timezone: o.Timezone, DefaultCurrency: o.DefaultCurrency,
		Status: o.Status, CreatedAt: Timestamp(o.CreatedAt), UpdatedAt: Timestamp(o.UpdatedAt),
	}
}

type keyJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Secret    *string  `json:"secret,omitempty"` // only when created
	Hint      string   `json:"hint"`
	Scopes    []string `json:"scopes"`
	Status    string   `json:"status"`
	CreatedAt string   `json:"createdAt"`
	RevokedAt *string  `json:"revokedAt"`
	// Controls (keycontrols.go).
	SpendCaps   spendCapsJSON  `json:"spendCaps"`
	SpendUsage  spendUsageJSON `json:"spendUsage"`
	IPAllowlist []string       `json:"ipAllowlist"`
}

func renderKey(k *ledger.APIKey, secret string) keyJSON {
	status := "active"
	if k.Revoked {
		status = "revoked"
	}
	return keyJSON{
		ID: k.ID, Name: k.Name, Secret: Optional(secret), Hint: k.Hint, Scopes: k.Scopes.Names(),
		Status: status, CreatedAt: Timestamp(k.CreatedAt), RevokedAt: OptionalTimestamp(k.RevokedAt),
	}
}
