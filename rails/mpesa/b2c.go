package mpesa

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

const transactionStatusPath = "/mpesa/transactionstatus/v1/query"

// PreparePayout checks the instruction (ErrRejected wrapping
// ErrFractionalAmount for cents) and returns its OriginatorConversationID,
// derived from in.ID and the B2C shortcode. It sends nothing.
func (a *Adapter) PreparePayout(_ context.Context, in provider.Instruction) (provider.Prepared, error) {
	return a.prepare(a.b2cEnabled, "payouts", in, key("b2c", a.cfg.B2CShortCode, in.ID))
}

// SubmitPayout sends the B2C payment request with p.Key as its
// OriginatorConversationID. StateProcessing once Daraja accepted it; the
// result comes by callback. The adapter implements SendOnce: once a send
// may have reached Daraja (an answer other than a definite "nothing was
// done"), this process never sends the key again and answers
// ErrUnknownOutcome without sending; a Daraja answer "Duplicate
// OriginatorConversationID" (if the caller broke the rule from another
// process) is read as "already taken", never as a failure.
func (a *Adapter) SubmitPayout(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	amount, err := a.beginSend(a.b2cEnabled, "payouts", "b2c", in, p.Key)
	if err != nil {
		return provider.Outcome{}, err
	}
	cred, err := a.cred.securityCredential(a.cfg.InitiatorPassword.Reveal())
	if err != nil {
		a.unmarkSent(p.Key)
		return provider.Outcome{}, err
	}
	body := map[string]any{
		"OriginatorConversationID": p.Key,
		"InitiatorName":            a.cfg.InitiatorName,
		"SecurityCredential":       cred,
		"CommandID":                a.cfg.CommandID,
		"Amount":                   amount,
		"PartyA":                   a.cfg.B2CShortCode,
		"PartyB":                   in.AccountNumber,
		"Remarks":                  text(in.Narration, "Payout", 100),
		"QueueTimeOutURL":          a.callbackURL(eventB2CTimeout, p.Key),
		"ResultURL":                a.callbackURL(eventB2C, p.Key),
		"Occasion":                 text(in.ID, "Payout", 100),
	}
	resp, wrote, err := a.call(ctx, a.cfg.B2CPath, body)
	if err == nil && resp.Status == 200 {
		var r struct {
			ConversationID      string     `json:"ConversationID"`
			ResponseCode        flexString `json:"ResponseCode"`
			ResponseDescription string     `json:"ResponseDescription"`
		}
		if json.Unmarshal(resp.Body, &r) == nil {
			if r.ResponseCode == "0" {
				return provider.Outcome{State: provider.StateProcessing, ProviderRef: r.ConversationID, CheckAfter: a.cfg.CheckAfter}, nil
			}
			if r.ResponseCode != "" {
				a.unmarkSent(p.Key)
				return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "mpesa b2c: %s (%s)", outbound.Cut(r.ResponseDescription, 200), r.ResponseCode)
			}
		}
		return provider.Outcome{}, provider.Errorf(provider.ErrUnknownOutcome, "mpesa b2c: an unreadable answer")
	}
	if err == nil && parseError(resp).ErrorCode == duplicateOriginatorCode {
		return provider.Outcome{State: provider.StateProcessing, CheckAfter: a.cfg.CheckAfter, Message: "already submitted"}, nil
	}
	e := a.sendResult("b2c", resp, wrote, err)
	if nothingDone(e) {
		a.unmarkSent(p.Key)
	}
	return provider.Outcome{}, e
}

// receipt is the shape of an M-Pesa transaction id (e.g. NLJ41HAY6Q), as
// opposed to a ConversationID (AG_…).
var receipt = regexp.MustCompile(`^[A-Z0-9]{10}$`)

// PayoutStatus asks Daraja's Transaction Status API about the payout, by
// its OriginatorConversationID (and its receipt when in.ProviderRef holds
// one). Daraja answers that query only by callback: PayoutStatus returns
// StateUnknown with CheckAfter once the query is accepted, and the answer
// arrives through HandleCallback as an authenticated notification. A
// query moves nothing: it may be asked as often as the caller likes, and
// it never fails the payout.
func (a *Adapter) PayoutStatus(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	if !a.b2cEnabled {
		return provider.Outcome{}, fmt.Errorf("%w: payouts", ErrNotConfigured)
	}
	cred, err := a.cred.securityCredential(a.cfg.InitiatorPassword.Reveal())
	if err != nil {
		return provider.Outcome{}, err
	}
	txID := ""
	if receipt.MatchString(in.ProviderRef) {
		txID = in.ProviderRef
	}
	resp, _, err := a.call(ctx, transactionStatusPath, map[string]any{
		"Initiator":              a.cfg.InitiatorName,
		"SecurityCredential":     cred,
		"CommandID":              "TransactionStatusQuery",
		"TransactionID":          txID,
		"OriginalConversationID": p.Key,
		"PartyA":                 a.cfg.B2CShortCode,
		"IdentifierType":         "4",
		"ResultURL":              a.callbackURL(eventTS, p.Key),
		"QueueTimeOutURL":        a.callbackURL(eventTSTimeout, p.Key),
		"Remarks":                "Payout status",
		"Occasion":               text(in.ID, "Payout", 100),
	})
	if err == nil && resp.Status == 200 {
		var r struct {
			ResponseCode flexString `json:"ResponseCode"`
		}
		if json.Unmarshal(resp.Body, &r) == nil && r.ResponseCode == "0" {
			return provider.Outcome{State: provider.StateUnknown, CheckAfter: a.cfg.CheckAfter, Message: "status asked: M-Pesa answers by callback"}, nil
		}
	}
	return provider.Outcome{}, a.readResult("transaction status", resp, err)
}

// b2cOutcome reads a B2C result code.
func b2cOutcome(code, desc, transactionID string) provider.Outcome {
	switch code {
	case "0":
		return provider.Outcome{State: provider.StateCompleted, ProviderRef: transactionID}
	case "15":
		// "Duplicate detected": the result of a re-sent request, not of
		// the payout; the first request's own result decides.
		return provider.Outcome{State: provider.StateUnknown, Message: "duplicate detected"}
	}
	if desc == "" {
		desc = b2cWords[code]
	}
	return provider.Outcome{State: provider.StateFailed, ProviderRef: transactionID, Message: outbound.Cut(fmt.Sprintf("%s (%s)", desc, code), 200)}
}

// b2cWords say what B2C result codes mean, for a result without words.
var b2cWords = map[string]string{
	"1":          "the B2C account's balance is insufficient",
	"2":          "less than the minimum transaction amount",
	"3":          "more than the maximum transaction amount",
	"4":          "the daily transfer limit would be exceeded",
	"8":          "the recipient's maximum balance would be exceeded",
	"11":         "the B2C account is not active",
	"2001":       "the initiator information is invalid",
	"2040":       "the recipient is not a registered M-Pesa customer",
	"8006":       "the security credential is locked",
	"SFC_IC0003": "the recipient's number does not exist",
}
