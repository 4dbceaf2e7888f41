package core

import (
	"bytes"
	"context"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
)

// Provider callback ingress: one route per configured provider instance,
// /v1/providers/{name}/callbacks, where MTN MoMo (PUT in its sandbox, POST
// in production) and M-Pesa Daraja send their notifications. No API key:
// the instance's adapter authenticates what it can (an M-Pesa URL token),
// and what it cannot only prompts a status check. Followers relay the
// request to the leader, which hands it to App.ProviderCallback.
//
// The query string carries the adapters' per-instruction tokens, so it is
// copied for the adapter and then cleared from the request before the
// request log sees it; the log records the callback as a request of no
// organization (the operator's unattributed records), without its body:
// a provider's body names phone numbers and amounts, field names no
// redaction rule can judge.

// providerCallbackBodyBytesMax bounds a callback's body: providers send a
// few kilobytes at most.
const providerCallbackBodyBytesMax = 64 << 10

// providerOps is what the callback route calls of the application API.
type providerOps interface {
	ProviderCallback(ctx context.Context, in app.ProviderCallbackInput) (actors.CallbackResult, error)
}

type providerCallbackJSON struct {
	Received bool `json:"received"`
}

func (s *Server) providerRoutes() {
	h := s.providerCallback
	s.router.POST("/v1/providers/{name}/callbacks", h)
	s.router.PUT("/v1/providers/{name}/callbacks", h)
}

func (s *Server) providerCallback(ctx *fasthttp.RequestCtx) {
	if st := requestStateOf(ctx); st != nil {
		st.unrouted = true // recorded with no key and no organization
	}
	query := string(ctx.URI().QueryString())
	defer ctx.URI().SetQueryString("") // never in the request log
	if !s.Begin(ctx) {
		return
	}
	if ctx.Request.Header.ContentLength() > providerCallbackBodyBytesMax {
		ctx.SetConnectionClose()
		WriteError(ctx, BodyTooLarge(providerCallbackBodyBytesMax))
		return
	}
	if e := s.ReadBody(ctx); e != nil {
		WriteError(ctx, e)
		return
	}
	body := ctx.Request.Body()
	if len(body) > providerCallbackBodyBytesMax {
		WriteError(ctx, BodyTooLarge(providerCallbackBodyBytesMax))
		return
	}
	if done, e := s.RelayToLeader(ctx); done {
		return
	} else if e != nil {
		WriteError(ctx, e)
		return
	}
	ops, ok := s.Config.App.(providerOps)
	if !ok || s.Config.Actors == nil {
		WriteError(ctx, &ledger.Error{Code: ledger.CodeNotFound, Message: "No provider instance takes callbacks here"})
		return
	}
	name, _ := ctx.UserValue("name").(string)
	in := app.ProviderCallbackInput{Provider: name, Header: map[string]string{}, Body: bytes.Clone(body), Query: query}
	// The client as the adapter judges it (an allow-list of the
	// provider's addresses): the one a follower vouched for, or behind a
	// trusted proxy the address it names.
	if addr, known := s.clientAddr(ctx); known {
		in.RemoteAddr = addr.String()
	}
	ctx.Request.Header.VisitAll(func(k, v []byte) {
		if len(in.Header) < 64 {
			in.Header[string(bytes.ToLower(k))] = string(v)
		}
	})
	cctx, cancel := context.WithTimeout(context.Background(), s.Config.CommitTimeout)
	defer cancel()
	if _, err := ops.ProviderCallback(cctx, in); err != nil {
		if le, ok := err.(*ledger.Error); ok {
			WriteError(ctx, le)
		} else {
			WriteError(ctx, errorFromActors(err))
		}
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, providerCallbackJSON{Received: true})
}
