package momo

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// product is one MoMo product's credentials and its cached access token.
type product struct {
	name  string
	creds Credentials

	mu      sync.Mutex // guards token and expires; held while a token is fetched, so one fetch serves every waiter
	token   string
	expires time.Time
}

// bearer returns a token valid for at least TokenRefreshBefore, fetching a
// new one when the cached one is older.
func (p *product) bearer(ctx context.Context, a *Adapter) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := a.now()
	if p.token != "" && now.Before(p.expires.Add(-a.cfg.TokenRefreshBefore)) {
		return p.token, nil
	}
	p.token = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base.String()+"/"+p.name+"/token/", bytes.NewReader(nil))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(p.creds.APIUser.Reveal(), p.creds.APIKey.Reveal())
	req.Header.Set("Ocp-Apim-Subscription-Key", p.creds.SubscriptionKey.Reveal())
	resp, _, err := outbound.Send(a.client, req)
	if err != nil {
		// A token request moves nothing: whatever happened, nothing was done.
		return "", &provider.Error{Kind: provider.ErrUnavailable, Message: "momo " + p.name + " token", Err: err}
	}
	switch {
	case resp.Status == http.StatusOK:
	case resp.Status == http.StatusTooManyRequests:
		return "", &provider.Error{Kind: provider.ErrRateLimited, Message: "momo " + p.name + " token", RetryAfter: outbound.RetryAfter(resp.Header, now, retryAfterDefault)}
	case resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden:
		return "", provider.Errorf(provider.ErrAuthentication, "momo %s token: %s", p.name, errorText(resp))
	default:
		return "", provider.Errorf(provider.ErrUnavailable, "momo %s token: %s", p.name, errorText(resp))
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(resp.Body, &t); err != nil || t.AccessToken == "" || t.ExpiresIn <= 0 {
		return "", provider.Errorf(provider.ErrUnavailable, "momo %s token: an answer without a token", p.name)
	}
	p.token, p.expires = t.AccessToken, now.Add(time.Duration(t.ExpiresIn)*time.Second)
	return p.token, nil
}

// invalidate forgets tok if it is still the cached token (MoMo refused it).
func (p *product) invalidate(tok string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token == tok {
		p.token = ""
	}
}
