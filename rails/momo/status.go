package momo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// party is a payer or payee.
type party struct {
	PartyIDType string `json:"partyIdType"`
	PartyID     string `json:"partyId"`
}

// result is MoMo's representation of a transfer or request to pay, as a
// status answer and a callback carry it.
type result struct {
	Amount                 flexString      `json:"amount"`
	Currency               string          `json:"currency"`
	FinancialTransactionID flexString      `json:"financialTransactionId"`
	ExternalID             flexString      `json:"externalId"`
	Payer                  *party          `json:"payer,omitempty"`
	Payee                  *party          `json:"payee,omitempty"`
	Status                 string          `json:"status"`
	Reason                 json.RawMessage `json:"reason,omitempty"`
}

// flexString takes a JSON string or number (MoMo's examples show both for
// amounts and ids).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = flexString(n.String())
	return nil
}

// reasonText is the reason of a failure: MoMo sends a code, or an object
// with a code and a message.
func reasonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var code string
	var message string
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &code)
	} else {
		var e apiError
		_ = json.Unmarshal(raw, &e)
		code, message = e.Code, e.Message
	}
	if message == "" {
		message = reasonWords[code]
	}
	return outbound.CodeMessage(code, message)
}

// reasonWords say what MoMo's failure reasons mean, for a reason that
// comes without a message.
var reasonWords = map[string]string{
	"APPROVAL_REJECTED":             "the payer declined",
	"EXPIRED":                       "the payer did not approve in time",
	"TRANSACTION_CANCELED":          "the transaction was cancelled",
	"PAYER_NOT_FOUND":               "the payer has no MoMo account",
	"PAYEE_NOT_FOUND":               "the payee has no MoMo account",
	"NOT_ENOUGH_FUNDS":              "insufficient funds",
	"PAYER_LIMIT_REACHED":           "the payer's limit is reached",
	"PAYEE_NOT_ALLOWED_TO_RECEIVE":  "the payee may not receive",
	"NOT_ALLOWED":                   "not allowed",
	"INTERNAL_PROCESSING_ERROR":     "MoMo could not process the transaction",
	"SERVICE_UNAVAILABLE":           "MoMo was unavailable",
	"COULD_NOT_PERFORM_TRANSACTION": "MoMo could not perform the transaction",
}

// outcome reads a result. pending is the state of MoMo's PENDING: a
// request to pay awaits its payer, a transfer is moving.
func (a *Adapter) outcome(r result, pending provider.State) provider.Outcome {
	switch strings.ToUpper(r.Status) {
	case "SUCCESSFUL":
		return provider.Outcome{State: provider.StateCompleted, ProviderRef: string(r.FinancialTransactionID)}
	case "FAILED", "REJECTED", "TIMEOUT":
		msg := reasonText(r.Reason)
		if msg == "" {
			msg = "MoMo reported the transaction " + strings.ToLower(r.Status)
		}
		return provider.Outcome{State: provider.StateFailed, ProviderRef: string(r.FinancialTransactionID), Message: msg}
	case "PENDING", "ONGOING", "CREATED":
		return provider.Outcome{State: pending, CheckAfter: a.cfg.CheckAfter}
	}
	return provider.Outcome{State: provider.StateUnknown, CheckAfter: a.cfg.CheckAfter, Message: fmt.Sprintf("MoMo status %q", r.Status)}
}

// checkMatches refuses a completed result whose amount or currency is not
// the instruction's: that is not our transfer, or MoMo moved another sum,
// and either needs a person, not a settlement.
func (a *Adapter) checkMatches(r result, in provider.Instruction) error {
	if r.Currency != "" && !strings.EqualFold(r.Currency, in.Currency) {
		return provider.Errorf(provider.ErrUnknownOutcome, "momo reports currency %s for %s, the instruction is in %s", r.Currency, in.ID, in.Currency)
	}
	if r.Amount != "" {
		got, err := parseAmount(string(r.Amount), in.Exponent)
		if err != nil || got != in.AmountMinor {
			return provider.Errorf(provider.ErrUnknownOutcome, "momo reports amount %s for %s, the instruction is %d minor units", r.Amount, in.ID, in.AmountMinor)
		}
	}
	return nil
}
