package momo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// operation is what differs between a transfer (a payout, disbursement
// product) and a request to pay (a collection, collection product).
type operation struct {
	product string
	path    string         // under /{product}/v1_0/
	pending provider.State // what MoMo's PENDING means for it
}

var (
	transfer     = operation{product: disbursement, path: "transfer", pending: provider.StateProcessing}
	requestToPay = operation{product: collection, path: "requesttopay", pending: provider.StatePending}
)

// Narrations are cut to MoMo's limit for payerMessage and payeeNote.
const narrationSizeMax = 160

func (a *Adapter) check(in provider.Instruction) error {
	switch {
	case in.ID == "":
		return provider.Errorf(provider.ErrRejected, "momo: the instruction has no id")
	case !strings.EqualFold(in.Currency, a.cfg.Currency):
		return provider.Errorf(provider.ErrRejected, "momo: %s serves %s, not %s", a.cfg.Name, a.cfg.Currency, in.Currency)
	case in.Exponent != a.cfg.Exponent:
		return provider.Errorf(provider.ErrRejected, "momo: %s has %d decimal places here, the instruction %d", a.cfg.Currency, a.cfg.Exponent, in.Exponent)
	case in.AmountMinor <= 0:
		return provider.Errorf(provider.ErrRejected, "momo: the amount must be positive")
	case !validMSISDN(in.AccountNumber):
		return provider.Errorf(provider.ErrRejected, "momo: %s is not a phone number with its country code", outbound.Mask(in.AccountNumber))
	}
	return nil
}

func validMSISDN(s string) bool { return len(s) >= 8 && len(s) <= 15 && outbound.Digits(s) }

// narration keeps what MoMo accepts in a note (it refuses some punctuation,
// the apostrophe among them) and cuts it to its limit.
func narration(s, fallback string) string {
	out := outbound.PlainText(s, " .,-_:/")
	if out == "" {
		out = fallback
	}
	return outbound.Cut(out, narrationSizeMax)
}

func (a *Adapter) prepare(op operation, in provider.Instruction) (provider.Prepared, error) {
	p, err := a.product(op.product)
	if err != nil {
		return provider.Prepared{}, err
	}
	if err := a.check(in); err != nil {
		return provider.Prepared{}, err
	}
	return provider.Prepared{Key: referenceID(p, in.ID)}, nil
}

func (a *Adapter) submit(ctx context.Context, op operation, in provider.Instruction, prep provider.Prepared) (provider.Outcome, error) {
	p, err := a.product(op.product)
	if err != nil {
		return provider.Outcome{}, err
	}
	if err := a.check(in); err != nil {
		return provider.Outcome{}, err
	}
	if !validReferenceID(prep.Key) {
		return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "momo: prepared key %q is not a version 4 UUID", prep.Key)
	}
	amount, err := formatAmount(in.AmountMinor, in.Exponent)
	if err != nil {
		return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "momo: %v", err)
	}
	note := narration(in.Narration, in.ID)
	body := map[string]any{
		"amount":       amount,
		"currency":     a.cfg.Currency,
		"externalId":   in.ID,
		"payerMessage": note,
		"payeeNote":    note,
	}
	counterparty := party{PartyIDType: "MSISDN", PartyID: in.AccountNumber}
	if op.product == collection {
		body["payer"] = counterparty
	} else {
		body["payee"] = counterparty
	}
	header := map[string]string{"X-Reference-Id": prep.Key}
	if a.cfg.CallbackURL != "" {
		header["X-Callback-Url"] = a.cfg.CallbackURL + "?" + url.Values{"op": {op.path}, "ref": {prep.Key}}.Encode()
	}
	resp, wrote, err := a.call(ctx, p, http.MethodPost, "/"+p.name+"/v1_0/"+op.path, header, body)
	return a.createResult(op.path, op.pending, resp, wrote, err)
}

func (a *Adapter) status(ctx context.Context, op operation, in provider.Instruction, prep provider.Prepared) (provider.Outcome, error) {
	p, err := a.product(op.product)
	if err != nil {
		return provider.Outcome{}, err
	}
	if !validReferenceID(prep.Key) {
		return provider.Outcome{}, provider.Errorf(provider.ErrRejected, "momo: prepared key %q is not a version 4 UUID", prep.Key)
	}
	resp, _, err := a.call(ctx, p, http.MethodGet, "/"+p.name+"/v1_0/"+op.path+"/"+prep.Key, nil, nil)
	if err := a.readResult(op.path+" status", resp, err); err != nil {
		return provider.Outcome{}, err
	}
	var r result
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		return provider.Outcome{}, provider.Errorf(provider.ErrUnavailable, "momo %s status: unreadable answer: %v", op.path, err)
	}
	out := a.outcome(r, op.pending)
	if out.State == provider.StateCompleted {
		if err := a.checkMatches(r, in); err != nil {
			return provider.Outcome{}, err
		}
	}
	return out, nil
}

// PreparePayout returns the payout's X-Reference-Id, derived from in.ID
// (see referenceID). It sends nothing. It answers ErrRejected for an
// instruction MoMo would refuse (another currency, a malformed number).
func (a *Adapter) PreparePayout(_ context.Context, in provider.Instruction) (provider.Prepared, error) {
	return a.prepare(transfer, in)
}

// SubmitPayout sends a disbursement transfer with p.Key as X-Reference-Id.
// It answers StateProcessing once MoMo accepted it (202), and also when MoMo
// says the reference is taken (409): an earlier Submit of the same Prepared
// got through, and nothing new was done. Submitting the same Prepared again
// is always safe.
func (a *Adapter) SubmitPayout(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	return a.submit(ctx, transfer, in, p)
}

// PayoutStatus asks MoMo where the transfer stands. ErrNotFound: MoMo never
// took it (Submit it again with the same Prepared).
func (a *Adapter) PayoutStatus(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	return a.status(ctx, transfer, in, p)
}

// PrepareCollection returns the request to pay's X-Reference-Id.
func (a *Adapter) PrepareCollection(_ context.Context, in provider.Instruction) (provider.Prepared, error) {
	return a.prepare(requestToPay, in)
}

// SubmitCollection sends a request to pay: the payer is prompted on their
// phone. StatePending once accepted (or already taken, 409).
func (a *Adapter) SubmitCollection(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	return a.submit(ctx, requestToPay, in, p)
}

// CollectionStatus asks MoMo where the request to pay stands.
func (a *Adapter) CollectionStatus(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	return a.status(ctx, requestToPay, in, p)
}

func (a *Adapter) String() string { return fmt.Sprintf("momo(%s)", a.cfg.Name) }
