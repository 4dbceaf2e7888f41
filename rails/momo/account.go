package momo

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// LookupName returns the account holder's name for a phone number (MoMo's
// basicuserinfo), through the disbursement product when it is configured,
// else the collection product. ErrNotFound: no MoMo account.
func (a *Adapter) LookupName(ctx context.Context, _ string, accountNumber string) (string, error) {
	if !validMSISDN(accountNumber) {
		return "", provider.Errorf(provider.ErrRejected, "momo: %s is not a phone number with its country code", outbound.Mask(accountNumber))
	}
	p := a.disbursement
	if p == nil {
		p = a.collection
	}
	resp, _, err := a.call(ctx, p, http.MethodGet, "/"+p.name+"/v1_0/accountholder/msisdn/"+accountNumber+"/basicuserinfo", nil, nil)
	if err := a.readResult("account holder "+outbound.Mask(accountNumber), resp, err); err != nil {
		return "", err
	}
	var info struct {
		Name       string `json:"name"`
		GivenName  string `json:"given_name"`
		FamilyName string `json:"family_name"`
	}
	if err := json.Unmarshal(resp.Body, &info); err != nil {
		return "", provider.Errorf(provider.ErrUnavailable, "momo account holder: unreadable answer")
	}
	name := strings.TrimSpace(info.Name)
	if name == "" {
		name = strings.TrimSpace(info.GivenName + " " + info.FamilyName)
	}
	if name == "" {
		return "", provider.Errorf(provider.ErrNotFound, "momo account holder %s: no name", outbound.Mask(accountNumber))
	}
	return name, nil
}

// Balances returns the available balance of each configured product's
// account (Account is "collection" or "disbursement").
func (a *Adapter) Balances(ctx context.Context) ([]provider.Balance, error) {
	var out []provider.Balance
	for _, p := range []*product{a.collection, a.disbursement} {
		if p == nil {
			continue
		}
		resp, _, err := a.call(ctx, p, http.MethodGet, "/"+p.name+"/v1_0/account/balance", nil, nil)
		if err := a.readResult(p.name+" balance", resp, err); err != nil {
			return nil, err
		}
		var b struct {
			AvailableBalance flexString `json:"availableBalance"`
			Currency         string     `json:"currency"`
		}
		if err := json.Unmarshal(resp.Body, &b); err != nil {
			return nil, provider.Errorf(provider.ErrUnavailable, "momo %s balance: unreadable answer", p.name)
		}
		minor, err := parseAmount(string(b.AvailableBalance), a.cfg.Exponent)
		if err != nil {
			return nil, provider.Errorf(provider.ErrUnavailable, "momo %s balance: %v", p.name, err)
		}
		out = append(out, provider.Balance{Currency: b.Currency, AmountMinor: minor, Exponent: a.cfg.Exponent, Account: p.name})
	}
	return out, nil
}
