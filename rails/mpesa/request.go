package mpesa

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// apiError is Daraja's synchronous error body.
type apiError struct {
	RequestID    string `json:"requestId"`
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
}

func parseError(resp *outbound.Response) apiError { return outbound.Decode[apiError](resp) }

// errorText is a short description of a refusal for messages: Daraja's
// error code and message, or the HTTP status.
func errorText(resp *outbound.Response) string {
	e := parseError(resp)
	return outbound.Refusal(resp.Status, e.ErrorCode, e.ErrorMessage)
}

// invalidTokenCodes are Daraja's answers to an expired or unknown token,
// which it gives on some APIs with other statuses than 401.
var invalidTokenCodes = map[string]bool{"404.001.03": true, "401.002.01": true, "400.003.01": true}

// rateCodes are Daraja's spike arrest and quota refusals.
var rateCodes = map[string]bool{"500.003.02": true, "500.003.03": true}

// Daraja's refusal of a B2C whose OriginatorConversationID it has seen.
const duplicateOriginatorCode = "500.002.1001"

// call posts body to path with a bearer token. A refused token (expired
// early, revoked) is answered once by a new token and the same request:
// Daraja's gateway refused it, so nothing reached M-Pesa. wrote reports
// whether any attempt reached the wire.
func (a *Adapter) call(ctx context.Context, path string, body any) (resp *outbound.Response, wrote bool, err error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, false, err
	}
	bearer := func() (string, error) { return a.bearer(ctx) }
	build := func(tok string) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		return req, nil
	}
	refused := func(r *outbound.Response) bool {
		return r.Status == http.StatusUnauthorized || invalidTokenCodes[parseError(r).ErrorCode]
	}
	return outbound.SendWithToken(a.client, &a.tok, bearer, build, refused)
}

// sendResult classifies the failure of a request that moves money (an STK
// push, a B2C payment): err from call, or a response that is not 200.
func (a *Adapter) sendResult(what string, resp *outbound.Response, wrote bool, err error) error {
	if err != nil {
		if _, ok := err.(*provider.Error); ok {
			return err // the token: nothing was sent
		}
		if !wrote {
			return &provider.Error{Kind: provider.ErrUnavailable, Message: "mpesa " + what + ": not sent", Err: err}
		}
		return &provider.Error{Kind: provider.ErrUnknownOutcome, Message: "mpesa " + what + ": no answer", Err: err}
	}
	if err := a.refusal(what, resp); err != nil {
		return err
	}
	switch s, code := resp.Status, parseError(resp).ErrorCode; {
	case s >= 400 && s < 500 && strings.HasPrefix(code, "400."):
		return provider.Errorf(provider.ErrRejected, "mpesa %s: %s", what, errorText(resp))
	case s >= 400 && s < 500:
		// A route that does not take the request (a wrong base URL or
		// method): nothing was queued.
		return provider.Errorf(provider.ErrUnavailable, "mpesa %s: %s", what, errorText(resp))
	}
	return provider.Errorf(provider.ErrUnknownOutcome, "mpesa %s: %s", what, errorText(resp))
}

// readResult classifies the failure of a query: a query moves nothing, so
// a failure is never an unknown outcome nor a rejection of the instruction.
func (a *Adapter) readResult(what string, resp *outbound.Response, err error) error {
	if err != nil {
		if _, ok := err.(*provider.Error); ok {
			return err
		}
		return &provider.Error{Kind: provider.ErrUnavailable, Message: "mpesa " + what, Err: err}
	}
	if err := a.refusal(what, resp); err != nil {
		return err
	}
	return provider.Errorf(provider.ErrUnavailable, "mpesa %s: %s", what, errorText(resp))
}

// refusal classifies the refusals any request may get, whatever it asked:
// a rate limit or a refused token; nil for another answer.
func (a *Adapter) refusal(what string, resp *outbound.Response) error {
	code := parseError(resp).ErrorCode
	switch s := resp.Status; {
	case s == http.StatusTooManyRequests || rateCodes[code]:
		return &provider.Error{Kind: provider.ErrRateLimited, Message: "mpesa " + what + ": " + errorText(resp), RetryAfter: outbound.RetryAfter(resp.Header, a.now(), retryAfterDefault)}
	case s == http.StatusUnauthorized || s == http.StatusForbidden || invalidTokenCodes[code]:
		return provider.Errorf(provider.ErrAuthentication, "mpesa %s: %s", what, errorText(resp))
	}
	return nil
}
