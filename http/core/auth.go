package core

import (
	"bytes"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/keycontrols"
)

// authenticate finds the API key of a request: "Authorization: Bearer
// <key>", a key of this server's stack, known and not revoked.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (ledger.APIKey, *ledger.Error) {
	secret, ok := bearerSecret(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	if !ok {
		return ledger.APIKey{}, unauthorized("Invalid API key: send it as \"Authorization: Bearer sk_…\"")
	}
	want := actors.KeyPrefix(s.Config.Live)
	if !bytes.HasPrefix(secret, []byte(want)) {
		if bytes.HasPrefix(secret, []byte(actors.KeyPrefix(!s.Config.Live))) {
			stack := "sandbox"
			if s.Config.Live {
				stack = "production"
			}
			return ledger.APIKey{}, unauthorized("Invalid API key: this is the " + stack + " stack, which accepts only " + want + " keys")
		}
		return ledger.APIKey{}, unauthorized("Invalid API key")
	}
	hash := actors.KeyDigest(secret)
	st := s.Config.Actors.Reader()
	key, found := st.APIKeyByHash(hash)
	if !found || key.Revoked {
		return ledger.APIKey{}, unauthorized("Invalid API key")
	}
	return key, nil
}

// bearerSecret is the key an Authorization header presents as "Bearer
// <key>" (the scheme in any case), trimmed; false when it presents none.
func bearerSecret(authorization []byte) ([]byte, bool) {
	const bearer = "Bearer "
	if len(authorization) <= len(bearer) || !bytes.EqualFold(authorization[:len(bearer)], []byte(bearer)) {
		return nil, false
	}
	return bytes.TrimSpace(authorization[len(bearer):]), true
}

func unauthorized(msg string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnauthorized, Message: msg}
}

// allowlistCheck refuses a key used from an address its allowlist does
// not name.
func (s *Server) allowlistCheck(ctx *fasthttp.RequestCtx, key *ledger.APIKey) *ledger.Error {
	if key.Allowlist == "" {
		return nil
	}
	addr, known := s.clientAddr(ctx)
	if !known {
		return &ledger.Error{Code: ledger.CodeForbidden,
			Message: "This API key has an IP allowlist and the caller's address could not be established; nothing was done"}
	}
	if !keycontrols.AllowlistPermits(key.Allowlist, addr) {
		return &ledger.Error{Code: ledger.CodeForbidden,
			Message: "The caller's address " + addr.Unmap().String() + " is not on this API key's IP allowlist"}
	}
	return nil
}

// ParseTrustedProxies reads --trusted-proxies: CIDR prefixes or addresses,
// comma-separated.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var entries []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	canonical, e := keycontrols.ParseAllowlist("trusted-proxies", entries)
	if e != nil {
		msg := e.Message
		for _, f := range e.Fields {
			msg += "; " + f.Field + " " + f.Message
		}
		return nil, &ledger.Error{Code: ledger.CodeValidation, Message: msg}
	}
	return keycontrols.AllowlistPrefixes(canonical), nil
}
