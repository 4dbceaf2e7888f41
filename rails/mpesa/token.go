package mpesa

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// tokenCache is the OAuth access token, shared by every operation.
type tokenCache struct {
	mu      sync.Mutex // held while a token is fetched, so one fetch serves every waiter
	token   string
	expires time.Time
}

// bearer returns a token valid for at least TokenRefreshBefore.
func (a *Adapter) bearer(ctx context.Context) (string, error) {
	c := &a.tok
	c.mu.Lock()
	defer c.mu.Unlock()
	now := a.now()
	if c.token != "" && now.Before(c.expires.Add(-a.cfg.TokenRefreshBefore)) {
		return c.token, nil
	}
	c.token = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/oauth/v1/generate?grant_type=client_credentials", nil)
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(a.cfg.ConsumerKey.Reveal(), a.cfg.ConsumerSecret.Reveal())
	resp, _, err := outbound.Send(a.client, req)
	if err != nil {
		return "", &provider.Error{Kind: provider.ErrUnavailable, Message: "mpesa token", Err: err}
	}
	switch {
	case resp.Status == http.StatusOK:
	case resp.Status == http.StatusTooManyRequests:
		return "", &provider.Error{Kind: provider.ErrRateLimited, Message: "mpesa token", RetryAfter: outbound.RetryAfter(resp.Header, now, retryAfterDefault)}
	case resp.Status >= 400 && resp.Status < 500:
		return "", provider.Errorf(provider.ErrAuthentication, "mpesa token: %s", errorText(resp))
	default:
		return "", provider.Errorf(provider.ErrUnavailable, "mpesa token: %s", errorText(resp))
	}
	var t struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"` // Daraja sends a string
	}
	if err := json.Unmarshal(resp.Body, &t); err != nil || t.AccessToken == "" {
		return "", provider.Errorf(provider.ErrUnavailable, "mpesa token: an answer without a token")
	}
	secs, err := strconv.ParseInt(string(bytes.Trim(t.ExpiresIn, `" `)), 10, 64)
	if err != nil || secs <= 0 {
		return "", provider.Errorf(provider.ErrUnavailable, "mpesa token: expires_in %s", t.ExpiresIn)
	}
	c.token, c.expires = t.AccessToken, now.Add(time.Duration(secs)*time.Second)
	return c.token, nil
}

func (a *Adapter) invalidate(tok string) {
	a.tok.mu.Lock()
	defer a.tok.mu.Unlock()
	if a.tok.token == tok {
		a.tok.token = ""
	}
}
