package mpesa

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// bearer returns a token valid for at least TokenRefreshBefore.
func (a *Adapter) bearer(ctx context.Context) (string, error) {
	return a.tok.Get(a.now, a.cfg.TokenRefreshBefore, func(now time.Time) (string, time.Time, error) {
		return a.fetchToken(ctx, now)
	})
}

// fetchToken asks Daraja for a new token and returns it with its expiry.
func (a *Adapter) fetchToken(ctx context.Context, now time.Time) (string, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/oauth/v1/generate?grant_type=client_credentials", nil)
	if err != nil {
		return "", time.Time{}, err
	}
	req.SetBasicAuth(a.cfg.ConsumerKey.Reveal(), a.cfg.ConsumerSecret.Reveal())
	resp, _, err := outbound.Send(a.client, req)
	if err != nil {
		return "", time.Time{}, &provider.Error{Kind: provider.ErrUnavailable, Message: "mpesa token", Err: err}
	}
	switch {
	case resp.Status == http.StatusOK:
	case resp.Status == http.StatusTooManyRequests:
		return "", time.Time{}, &provider.Error{Kind: provider.ErrRateLimited, Message: "mpesa token", RetryAfter: outbound.RetryAfter(resp.Header, now, retryAfterDefault)}
	case resp.Status >= 400 && resp.Status < 500:
		return "", time.Time{}, provider.Errorf(provider.ErrAuthentication, "mpesa token: %s", errorText(resp))
	default:
		return "", time.Time{}, provider.Errorf(provider.ErrUnavailable, "mpesa token: %s", errorText(resp))
	}
	var t struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"` // Daraja sends a string
	}
	if err := json.Unmarshal(resp.Body, &t); err != nil || t.AccessToken == "" {
		return "", time.Time{}, provider.Errorf(provider.ErrUnavailable, "mpesa token: an answer without a token")
	}
	secs, err := strconv.ParseInt(string(bytes.Trim(t.ExpiresIn, `" `)), 10, 64)
	if err != nil || secs <= 0 {
		return "", time.Time{}, provider.Errorf(provider.ErrUnavailable, "mpesa token: expires_in %s", t.ExpiresIn)
	}
	return t.AccessToken, now.Add(time.Duration(secs) * time.Second), nil
}
