package app

import (
	"context"
	"errors"

	"payments/actors"
	"payments/ledger"
)

// Provider callbacks: a provider instance's inbound notifications, as its
// ingress route received them.

// ProviderCallbackInput is a callback as the front end received it on
// /v1/providers/{name}/callbacks. Query may carry per-instruction tokens:
// it must never reach a log.
type ProviderCallbackInput struct {
	Provider   string
	Header     map[string]string // lower-case names
	Body       []byte
	RemoteAddr string
	Query      string
}

// ProviderCallback hands a callback to its instance's adapter. An
// authenticated final outcome settles the payout or collection it names,
// once (a duplicate changes nothing); any other outcome only prompts an
// immediate status check, since an unsigned callback proves nothing. A
// callback naming nothing of ours is accepted and ignored, so that the
// provider does not send it again. Errors: not_found for an instance that
// is not configured or takes no callbacks, bad_request for one its adapter
// refuses (unreadable, without its token, from outside its addresses), or
// the actors' errors of the log.
func (a *App) ProviderCallback(ctx context.Context, in ProviderCallbackInput) (actors.CallbackResult, error) {
	r, err := a.sys.ProviderCallback(ctx, in.Provider, actors.Callback{
		Header: in.Header, Body: in.Body, RemoteAddr: in.RemoteAddr, Query: in.Query,
	})
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, actors.ErrUnknownProvider), errors.Is(err, actors.ErrNoCallbacks):
		return r, &ledger.Error{Code: ledger.CodeNotFound, Message: "No provider instance named " + in.Provider + " takes callbacks here"}
	case errors.Is(err, actors.ErrBadCallback):
		// The adapter's reasons stay in the node's log: a forger learns
		// nothing from the answer.
		return r, &ledger.Error{Code: ledger.CodeBadRequest, Message: "The callback was refused"}
	}
	var le *ledger.Error
	if errors.As(err, &le) {
		return r, le
	}
	return r, err
}
