package admin

import (
	"payments/http/core"
	"payments/ledger"
)

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
		Status: o.Status, CreatedAt: core.Timestamp(o.CreatedAt), UpdatedAt: core.Timestamp(o.UpdatedAt),
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
		ID: k.ID, Name: k.Name, Secret: core.Optional(secret), Hint: k.Hint, Scopes: k.Scopes.Names(),
		Status: status, CreatedAt: core.Timestamp(k.CreatedAt), RevokedAt: core.OptionalTimestamp(k.RevokedAt),
	}
}
