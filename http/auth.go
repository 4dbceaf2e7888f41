package http

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/ledger"
)

// authenticate finds the API key of a request: "Authorization: Bearer
// <key>", a key of this server's stack, known and not revoked.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (ledger.APIKey, *ledger.Error) {
	h := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	const bearer = "Bearer "
	if len(h) <= len(bearer) || !bytes.EqualFold(h[:len(bearer)], []byte(bearer)) {
		return ledger.APIKey{}, unauthorized("Invalid API key: send it as \"Authorization: Bearer sk_…\"")
	}
	secret := bytes.TrimSpace(h[len(bearer):])
	want := actors.KeyPrefix(s.cfg.Live)
	if !bytes.HasPrefix(secret, []byte(want)) {
		if bytes.HasPrefix(secret, []byte(actors.KeyPrefix(!s.cfg.Live))) {
			stack := "sandbox"
			if s.cfg.Live {
				stack = "production"
			}
			return ledger.APIKey{}, unauthorized("Invalid API key: this is the " + stack + " stack, which accepts only " + want + " keys")
		}
		return ledger.APIKey{}, unauthorized("Invalid API key")
	}
	hash := actors.KeyDigest(secret)
	st := s.cfg.Actors.Reader()
	key, found := st.APIKeyByHash(hash)
	if !found || key.Revoked {
		return ledger.APIKey{}, unauthorized("Invalid API key")
	}
	return key, nil
}

func unauthorized(msg string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnauthorized, Message: msg}
}
