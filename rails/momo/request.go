package momo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// call sends one request of product p with a bearer token, the target
// environment and the subscription key. A 401 (the token expired or was
// revoked early) is answered once by a new token and the same request: MoMo
// refused it at the gateway, so nothing was done. wrote reports whether any
// attempt reached the wire.
func (a *Adapter) call(ctx context.Context, p *product, method, path string, header map[string]string, body any) (resp *outbound.Response, wrote bool, err error) {
	var payload []byte
	if body != nil {
		if payload, err = json.Marshal(body); err != nil {
			return nil, false, err
		}
	}
	bearer := func() (string, error) { return p.bearer(ctx, a) }
	build := func(tok string) (*http.Request, error) {
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, a.base.String()+path, rd)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Target-Environment", a.cfg.TargetEnvironment)
		req.Header.Set("Ocp-Apim-Subscription-Key", p.creds.SubscriptionKey.Reveal())
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return req, nil
	}
	refused := func(r *outbound.Response) bool { return r.Status == http.StatusUnauthorized }
	return outbound.SendWithToken(a.client, &p.tok, bearer, build, refused)
}

// apiError is MoMo's error body: {"code": "...", "message": "..."}; the API
// gateway's own refusals say {"statusCode": 401, "message": "..."}.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func parseError(resp *outbound.Response) apiError { return outbound.Decode[apiError](resp) }

// errorText is a short description of a refusal for messages: MoMo's code
// and message, or the HTTP status.
func errorText(resp *outbound.Response) string {
	e := parseError(resp)
	return outbound.Refusal(resp.Status, e.Code, e.Message)
}

// definiteCodes are the 5xx codes MTN documents as refusals of the request
// itself (nothing was queued): a wrong environment, callback host or
// currency, or a user without permission.
var definiteCodes = map[string]bool{
	"NOT_ALLOWED":                    true,
	"NOT_ALLOWED_TARGET_ENVIRONMENT": true,
	"INVALID_CALLBACK_URL_HOST":      true,
	"INVALID_CURRENCY":               true,
}

// createResult classifies the answer to a create (transfer, requesttopay)
// sent with the instruction's X-Reference-Id.
func (a *Adapter) createResult(what string, accepted provider.State, resp *outbound.Response, wrote bool, err error) (provider.Outcome, error) {
	if err != nil {
		var pe *provider.Error
		if asProviderError(err, &pe) {
			return provider.Outcome{}, err // a token failure: nothing was sent
		}
		if !wrote {
			return provider.Outcome{}, &provider.Error{Kind: provider.ErrUnavailable, Message: "momo " + what + ": not sent", Err: err}
		}
		return provider.Outcome{}, &provider.Error{Kind: provider.ErrUnknownOutcome, Message: "momo " + what + ": no answer", Err: err}
	}
	switch s := resp.Status; {
	case s == http.StatusAccepted:
		return provider.Outcome{State: accepted, CheckAfter: a.cfg.CheckAfter}, nil
	case s == http.StatusConflict:
		// The X-Reference-Id is already taken. Keys are drawn per
		// instruction, so it was taken by an earlier Submit of this same
		// Prepared whose answer we did not get: nothing new was done and
		// the status tells where the first stands.
		return provider.Outcome{State: accepted, CheckAfter: a.cfg.CheckAfter, Message: "already submitted"}, nil
	case s == http.StatusBadRequest:
		return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "momo %s: %s", what, errorText(resp))
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return provider.Outcome{}, provider.Errorf(provider.ErrAuthentication, "momo %s: %s", what, errorText(resp))
	case s == http.StatusTooManyRequests:
		return provider.Outcome{}, &provider.Error{Kind: provider.ErrRateLimited, Message: "momo " + what + ": " + errorText(resp), RetryAfter: outbound.RetryAfter(resp.Header, a.now(), retryAfterDefault)}
	case s >= 500 && definiteCodes[parseError(resp).Code]:
		return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "momo %s: %s", what, errorText(resp))
	case s >= 500:
		return provider.Outcome{}, provider.Errorf(provider.ErrUnknownOutcome, "momo %s: %s", what, errorText(resp))
	default:
		// 404 and other 4xx: the request reached a route that does not
		// take it (a wrong base URL); nothing was queued.
		return provider.Outcome{}, provider.Errorf(provider.ErrUnavailable, "momo %s: %s", what, errorText(resp))
	}
}

// readResult classifies the answer to a GET (status, name, balance): a GET
// changes nothing, so a failure is never an unknown outcome.
func (a *Adapter) readResult(what string, resp *outbound.Response, err error) error {
	if err != nil {
		var pe *provider.Error
		if asProviderError(err, &pe) {
			return err
		}
		return &provider.Error{Kind: provider.ErrUnavailable, Message: "momo " + what, Err: err}
	}
	switch s := resp.Status; {
	case s == http.StatusOK:
		return nil
	case s == http.StatusNotFound:
		return provider.Errorf(provider.ErrNotFound, "momo %s: %s", what, errorText(resp))
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return provider.Errorf(provider.ErrAuthentication, "momo %s: %s", what, errorText(resp))
	case s == http.StatusTooManyRequests:
		return &provider.Error{Kind: provider.ErrRateLimited, Message: "momo " + what + ": " + errorText(resp), RetryAfter: outbound.RetryAfter(resp.Header, a.now(), retryAfterDefault)}
	default:
		return provider.Errorf(provider.ErrUnavailable, "momo %s: %s", what, errorText(resp))
	}
}

func asProviderError(err error, target **provider.Error) bool {
	pe, ok := err.(*provider.Error)
	if ok {
		*target = pe
	}
	return ok
}
