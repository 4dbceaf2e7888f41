package momo

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// product is one MoMo product's credentials and its cached access token.
type product struct {
	name  string
	creds Credentials
	tok   outbound.TokenCache
}

// bearer returns a token valid for at least TokenRefreshBefore, fetching a
// new one when the cached one is older.
func (p *product) bearer(ctx context.Context, a *Adapter) (string, error) {
	return p.tok.Get(a.now, a.cfg.TokenRefreshBefore, func(now time.Time) (string, time.Time, error) {
		return p.fetchToken(ctx, a, now)
	})
}

// fetchToken asks MoMo for a new token and returns it with its expiry.
func (p *product) fetchToken(ctx context.Context, a *Adapter, now time.Time) (string, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base.String()+"/"+p.name+"/token/", bytes.NewReader(nil))
	if err != nil {
		return "", time.Time{}, err
	}
	req.SetBasicAuth(p.creds.APIUser.Reveal(), p.creds.APIKey.Reveal())
	req.Header.Set("Ocp-Apim-Subscription-Key", p.creds.SubscriptionKey.Reveal())
	resp, _, err := outbound.Send(a.client, req)
	if err != nil {
		// A token request moves nothing: whatever happened, nothing was done.
		return "", time.Time{}, &provider.Error{Kind: provider.ErrUnavailable, Message: "momo " + p.name + " token", Err: err}
	}
	switch {
	case resp.Status == http.StatusOK:
	case resp.Status == http.StatusTooManyRequests:
		return "", time.Time{}, &provider.Error{Kind: provider.ErrRateLimited, Message: "momo " + p.name + " token", RetryAfter: outbound.RetryAfter(resp.Header, now, retryAfterDefault)}
	case resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden:
		return "", time.Time{}, provider.Errorf(provider.ErrAuthentication, "momo %s token: %s", p.name, errorText(resp))
	default:
		return "", time.Time{}, provider.Errorf(provider.ErrUnavailable, "momo %s token: %s", p.name, errorText(resp))
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(resp.Body, &t); err != nil || t.AccessToken == "" || t.ExpiresIn <= 0 {
		return "", time.Time{}, provider.Errorf(provider.ErrUnavailable, "momo %s token: an answer without a token", p.name)
	}
	return t.AccessToken, now.Add(time.Duration(t.ExpiresIn) * time.Second), nil
}
