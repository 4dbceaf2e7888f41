package mpesa

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

const (
	stkPushPath  = "/mpesa/stkpush/v1/processrequest"
	stkQueryPath = "/mpesa/stkpushquery/v1/query"
)

// password is the STK Password: base64(shortcode + passkey + timestamp),
// with the timestamp it was made for (yyyyMMddHHmmss, Nairobi time).
func (a *Adapter) password() (pw, timestamp string) {
	timestamp = a.now().In(nairobi).Format("20060102150405")
	return base64.StdEncoding.EncodeToString([]byte(a.cfg.ShortCode + a.cfg.Passkey.Reveal() + timestamp)), timestamp
}

// PrepareCollection checks the instruction (ErrRejected wrapping
// ErrFractionalAmount for cents) and returns its key: ours, derived from
// in.ID, not Daraja's; it names the collection in the callback URL.
// Daraja's CheckoutRequestID comes back from Submit (or the callback) as
// ProviderRef.
func (a *Adapter) PrepareCollection(_ context.Context, in provider.Instruction) (provider.Prepared, error) {
	return a.prepare(a.stkEnabled, "collections", in, key("stk", a.cfg.ShortCode, in.ID))
}

// SubmitCollection sends the STK push: the payer is prompted on their
// phone. StatePending with ProviderRef = CheckoutRequestID once Daraja took
// it. The adapter implements SendOnce: after an unknown outcome this
// process refuses to send the same key again (ErrUnknownOutcome), and the
// caller must not ask another process to.
func (a *Adapter) SubmitCollection(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	amount, err := a.beginSend(a.stkEnabled, "collections", "stk push", in, p.Key)
	if err != nil {
		return provider.Outcome{}, err
	}
	pw, ts := a.password()
	body := map[string]any{
		"BusinessShortCode": a.cfg.ShortCode,
		"Password":          pw,
		"Timestamp":         ts,
		"TransactionType":   a.cfg.TransactionType,
		"Amount":            amount,
		"PartyA":            in.AccountNumber,
		"PartyB":            a.cfg.PartyB,
		"PhoneNumber":       in.AccountNumber,
		"CallBackURL":       a.callbackURL(eventSTK, p.Key),
		"AccountReference":  text(strings.TrimPrefix(in.ID, "col_"), "Payment", 12),
		"TransactionDesc":   text(in.Narration, "Payment", 13),
	}
	resp, wrote, err := a.call(ctx, stkPushPath, body)
	if err == nil && resp.Status == 200 {
		var r struct {
			CheckoutRequestID   string     `json:"CheckoutRequestID"`
			ResponseCode        flexString `json:"ResponseCode"`
			ResponseDescription string     `json:"ResponseDescription"`
		}
		if json.Unmarshal(resp.Body, &r) == nil {
			if r.ResponseCode == "0" && r.CheckoutRequestID != "" {
				return provider.Outcome{State: provider.StatePending, ProviderRef: r.CheckoutRequestID, CheckAfter: a.cfg.CheckAfter}, nil
			}
			if r.ResponseCode != "" {
				a.unmarkSent(p.Key)
				return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "mpesa stk push: %s (%s)", outbound.Cut(r.ResponseDescription, 200), r.ResponseCode)
			}
		}
		return provider.Outcome{}, provider.Errorf(provider.ErrUnknownOutcome, "mpesa stk push: an unreadable answer")
	}
	e := stkRefusal(resp, err)
	if e == nil {
		e = a.sendResult("stk push", resp, wrote, err)
	}
	if nothingDone(e) {
		a.unmarkSent(p.Key)
	}
	return provider.Outcome{}, e
}

// stkRefusal reads the 500.001.1001 answers that Daraja documents as
// refusals of an STK push before any prompt was shown.
func stkRefusal(resp *outbound.Response, err error) error {
	if err != nil || resp == nil {
		return nil
	}
	e := parseError(resp)
	if e.ErrorCode != "500.001.1001" {
		return nil
	}
	msg := strings.ToLower(e.ErrorMessage)
	switch {
	case strings.Contains(msg, "wrong credentials"):
		return provider.Errorf(provider.ErrAuthentication, "mpesa stk push: %s", errorText(resp))
	case strings.Contains(msg, "unable to lock subscriber"):
		return provider.Errorf(provider.ErrUnavailable, "mpesa stk push: the payer is in another transaction: %s", errorText(resp))
	case strings.Contains(msg, "merchant does not exist"):
		return provider.Errorf(provider.ErrRejected, "mpesa stk push: %s", errorText(resp))
	}
	return nil
}

// CollectionStatus asks Daraja (STK push query) where the push stands.
// It needs the CheckoutRequestID as in.ProviderRef; without it (the answer
// to Submit was lost) it answers StateUnknown: the callback names the
// CheckoutRequestID, which the caller commits before asking again.
// ErrNotFound: Daraja does not know the CheckoutRequestID.
func (a *Adapter) CollectionStatus(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	if !a.stkEnabled {
		return provider.Outcome{}, fmt.Errorf("%w: collections", ErrNotConfigured)
	}
	if in.ProviderRef == "" {
		return provider.Outcome{State: provider.StateUnknown, CheckAfter: a.cfg.CheckAfter, Message: "no CheckoutRequestID yet: the callback brings it"}, nil
	}
	pw, ts := a.password()
	resp, _, err := a.call(ctx, stkQueryPath, map[string]any{
		"BusinessShortCode": a.cfg.ShortCode, "Password": pw, "Timestamp": ts, "CheckoutRequestID": in.ProviderRef,
	})
	if err == nil {
		if resp.Status == 200 {
			var r struct {
				ResponseCode flexString `json:"ResponseCode"`
				ResultCode   flexString `json:"ResultCode"`
				ResultDesc   string     `json:"ResultDesc"`
			}
			if json.Unmarshal(resp.Body, &r) == nil && r.ResultCode != "" {
				return a.stkOutcome(string(r.ResultCode), r.ResultDesc, in.ProviderRef), nil
			}
		}
		e := parseError(resp)
		msg := strings.ToLower(e.ErrorMessage)
		switch {
		case e.ErrorCode == "500.001.1001" && strings.Contains(msg, "being processed"):
			return provider.Outcome{State: provider.StatePending, ProviderRef: in.ProviderRef, CheckAfter: a.cfg.CheckAfter}, nil
		case strings.HasPrefix(e.ErrorCode, "400.") && strings.Contains(msg, "checkoutrequestid"):
			return provider.Outcome{}, provider.Errorf(provider.ErrNotFound, "mpesa stk query: %s", errorText(resp))
		}
	}
	return provider.Outcome{}, a.readResult("stk query", resp, err)
}

// stkWords say what STK result codes mean, for a result without words.
var stkWords = map[string]string{
	"1":    "the payer's balance is insufficient",
	"1001": "the payer is in another transaction",
	"1019": "the transaction expired",
	"1025": "the prompt could not be sent",
	"1031": "the payer did not enter the PIN in time",
	"1032": "the payer cancelled",
	"1037": "the payer could not be reached",
	"2001": "the payer entered a wrong PIN",
	"9999": "the prompt could not be sent",
}

// stkOutcome reads an STK result code: 0 completed, 4999 still in
// progress, anything else a failure of this push (a new collection may be
// tried; this one never completes).
func (a *Adapter) stkOutcome(code, desc, checkoutID string) provider.Outcome {
	switch code {
	case "0":
		return provider.Outcome{State: provider.StateCompleted, ProviderRef: checkoutID}
	case "4999":
		return provider.Outcome{State: provider.StatePending, ProviderRef: checkoutID, CheckAfter: a.cfg.CheckAfter}
	}
	if desc == "" {
		desc = stkWords[code]
	}
	return provider.Outcome{State: provider.StateFailed, ProviderRef: checkoutID, Message: outbound.Cut(fmt.Sprintf("%s (%s)", desc, code), 200)}
}
