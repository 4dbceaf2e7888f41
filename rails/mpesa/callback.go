package mpesa

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"payments/rails/provider"
)

// ErrBadCallback is returned for a callback that cannot be read, or that
// does not present the token of the URL the adapter gave Daraja; the
// ingress answers it with a 400 and believes nothing.
var ErrBadCallback = errors.New("mpesa: bad callback")

// HandleCallback reads a Daraja callback. Daraja signs nothing; the
// adapter gave each instruction its own callback URLs, carrying the event,
// the key and a token (an HMAC under the callback secret), and a callback
// without the right token is refused. Then:
//
//   - an STK push result is never Authenticated: the caller confirms it
//     with CollectionStatus (the STK push query answers at once). Its
//     Outcome.ProviderRef is the CheckoutRequestID, which the caller
//     commits, since CollectionStatus needs it.
//   - a B2C result, a B2C queue timeout and a transaction status result
//     are Authenticated by the token: Daraja has no query that answers
//     them synchronously, so the token is all the confirmation there is.
//     A queue timeout is a failure (Daraja documents it as the request
//     timing out before M-Pesa processed it); a status result that does
//     not say Completed or a failure, or a failed status query, is
//     StateUnknown and settles nothing.
func (a *Adapter) HandleCallback(_ context.Context, cb provider.Callback) (provider.Notification, error) {
	q, err := url.ParseQuery(cb.Query)
	if err != nil {
		return provider.Notification{}, fmt.Errorf("%w: unreadable query", ErrBadCallback)
	}
	event, k, tok := q.Get("e"), q.Get("k"), q.Get("t")
	if event == "" || k == "" || !hmac.Equal([]byte(tok), []byte(a.token(event, k))) {
		return provider.Notification{}, fmt.Errorf("%w: no valid token", ErrBadCallback)
	}
	if len(a.cfg.CallbackNets) > 0 && !a.allowed(cb.RemoteAddr) {
		return provider.Notification{}, fmt.Errorf("%w: from an address not allowed", ErrBadCallback)
	}
	n := provider.Notification{Key: k}
	switch event {
	case eventSTK:
		var body struct {
			Body struct {
				STKCallback struct {
					CheckoutRequestID string     `json:"CheckoutRequestID"`
					ResultCode        flexString `json:"ResultCode"`
					ResultDesc        string     `json:"ResultDesc"`
				} `json:"stkCallback"`
			} `json:"Body"`
		}
		if err := json.Unmarshal(cb.Body, &body); err != nil || body.Body.STKCallback.CheckoutRequestID == "" {
			return provider.Notification{}, fmt.Errorf("%w: unreadable STK result", ErrBadCallback)
		}
		s := body.Body.STKCallback
		n.Collection = true
		n.Outcome = a.stkOutcome(string(s.ResultCode), s.ResultDesc, s.CheckoutRequestID)
		if !n.Outcome.State.Final() {
			n.Outcome.CheckAfter = 0
		}
	case eventB2C, eventTS:
		r, err := readResult(cb.Body)
		if err != nil {
			return provider.Notification{}, err
		}
		n.Authenticated = true
		if event == eventB2C {
			if r.OriginatorConversationID != "" && r.OriginatorConversationID != k {
				return provider.Notification{}, fmt.Errorf("%w: the result is for another OriginatorConversationID", ErrBadCallback)
			}
			n.Outcome = b2cOutcome(string(r.ResultCode), r.ResultDesc, r.TransactionID)
		} else {
			n.Outcome = statusOutcome(r)
		}
	case eventB2CTimeout:
		n.Authenticated = true
		n.Outcome = provider.Outcome{State: provider.StateFailed, Message: "M-Pesa timed the payout out in its queue before processing it"}
	case eventTSTimeout:
		n.Authenticated = true
		n.Outcome = provider.Outcome{State: provider.StateUnknown, Message: "the status query timed out"}
	default:
		return provider.Notification{}, fmt.Errorf("%w: unknown event", ErrBadCallback)
	}
	return n, nil
}

func (a *Adapter) allowed(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	for _, n := range a.cfg.CallbackNets {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// result is the Result object of a B2C or transaction status callback.
type result struct {
	ResultType               flexString `json:"ResultType"`
	ResultCode               flexString `json:"ResultCode"`
	ResultDesc               string     `json:"ResultDesc"`
	OriginatorConversationID string     `json:"OriginatorConversationID"`
	ConversationID           string     `json:"ConversationID"`
	TransactionID            string     `json:"TransactionID"`
	ResultParameters         struct {
		ResultParameter parameters `json:"ResultParameter"`
	} `json:"ResultParameters"`
}

// parameters are Daraja's key-value list; a single one comes as an object.
type parameters []struct {
	Key   string     `json:"Key"`
	Value flexString `json:"Value"`
}

func (p *parameters) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		b = append(append([]byte("["), b...), ']')
	}
	type plain parameters
	return json.Unmarshal(b, (*plain)(p))
}

func (p parameters) get(key string) string {
	for _, kv := range p {
		if kv.Key == key {
			return string(kv.Value)
		}
	}
	return ""
}

func readResult(body []byte) (result, error) {
	var r struct {
		Result result `json:"Result"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Result.ResultCode == "" {
		return result{}, fmt.Errorf("%w: unreadable result", ErrBadCallback)
	}
	return r.Result, nil
}

// statusOutcome reads a transaction status result: the payout's state is
// the TransactionStatus parameter.
func statusOutcome(r result) provider.Outcome {
	if r.ResultCode != "0" {
		return provider.Outcome{State: provider.StateUnknown, Message: fmt.Sprintf("status query: %s (%s)", r.ResultDesc, r.ResultCode)}
	}
	p := r.ResultParameters.ResultParameter
	ref := p.get("ReceiptNo")
	switch status := p.get("TransactionStatus"); strings.ToLower(status) {
	case "completed":
		return provider.Outcome{State: provider.StateCompleted, ProviderRef: ref}
	case "failed", "cancelled", "declined", "expired":
		reason := p.get("ReasonType")
		if reason == "" {
			reason = status
		}
		return provider.Outcome{State: provider.StateFailed, ProviderRef: ref, Message: "M-Pesa reports the payout " + strings.ToLower(status) + ": " + reason}
	default:
		return provider.Outcome{State: provider.StateUnknown, Message: fmt.Sprintf("transaction status %q", status)}
	}
}
