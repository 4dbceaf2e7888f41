package momo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"payments/rails/provider"
)

// ErrBadCallback is returned for a callback that cannot be read or names
// no instruction; the ingress answers it with a 400 and believes nothing.
var ErrBadCallback = errors.New("momo: bad callback")

// HandleCallback reads a MoMo callback. MoMo does not sign its callbacks,
// so the notification is never Authenticated: it names the instruction
// (by the ref and op the adapter put in X-Callback-Url, or else by the
// externalId in the body) and carries what the body claims only as a hint;
// the caller asks PayoutStatus or CollectionStatus before believing it.
// MoMo sends one callback per transaction and never retries it, so a
// status poll must cover a callback that never comes.
func (a *Adapter) HandleCallback(_ context.Context, cb provider.Callback) (provider.Notification, error) {
	var r result
	if err := json.Unmarshal(cb.Body, &r); err != nil {
		return provider.Notification{}, fmt.Errorf("%w: unreadable body", ErrBadCallback)
	}
	q, _ := url.ParseQuery(cb.Query)
	op := requestToPay
	switch q.Get("op") {
	case transfer.path:
		op = transfer
	case requestToPay.path:
	default:
		if r.Payee != nil && r.Payer == nil {
			op = transfer
		}
	}
	key := q.Get("ref")
	if key == "" {
		// No ref in the URL (an ingress that dropped the query): the key
		// is derived from our id, which MoMo echoes as externalId.
		p, err := a.product(op.product)
		if err != nil || r.ExternalID == "" {
			return provider.Notification{}, fmt.Errorf("%w: it names no instruction", ErrBadCallback)
		}
		key = referenceID(p, string(r.ExternalID))
	}
	if !validReferenceID(key) {
		return provider.Notification{}, fmt.Errorf("%w: ref %q is not a reference id", ErrBadCallback, key)
	}
	return provider.Notification{
		Key:           key,
		Collection:    op.product == collection,
		Authenticated: false,
		Outcome:       a.outcome(r, op.pending),
	}, nil
}
