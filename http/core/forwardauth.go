package core

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/ledger"
	"payments/ledger/disputes"
)

// The client's address across a forward. A follower relays requests to the
// leader (forward.go), so the leader sees the follower's address, not the
// client's. The follower states the client's address in
// x-payments-client-addr and signs it in x-payments-client-token:
// "<unix expiry>.<hex HMAC-SHA256>" of the address, the method, the request
// URI and the expiry, under a key derived from the cluster's replicated
// signing key (the one blob peers use, filepeers.go), so only a node that
// applies this cluster's log can vouch for an address. A copy sent by a
// client is never believed: one that does not verify is refused, and a
// follower overwrites whatever the client sent.
//
// X-Forwarded-For is believed only from --trusted-proxies: when the
// immediate sender is one, the client is the right-most address of the
// header that is not itself a trusted proxy.

const (
	clientAddrHeader    = "x-payments-client-addr"
	clientTokenHeader   = "x-payments-client-token"
	clientTokenLifetime = time.Minute
)

func forwardKey(signingKey []byte) []byte {
	m := hmac.New(sha256.New, signingKey)
	m.Write([]byte("forwarded-client"))
	return m.Sum(nil)
}

func clientToken(signingKey []byte, addr, method, uri string, expires int64) string {
	e := strconv.FormatInt(expires, 10)
	m := hmac.New(sha256.New, forwardKey(signingKey))
	m.Write([]byte(addr + "\x00" + method + "\x00" + uri + "\x00" + e))
	return e + "." + hex.EncodeToString(m.Sum(nil))
}

// signClientAddr replaces any client-supplied forwarding headers of req
// with this node's statement of the client's address. Without the
// cluster's signing key (none committed yet: no key has an allowlist) it
// states nothing.
func (s *Server) signClientAddr(ctx *fasthttp.RequestCtx, req *fasthttp.Request) {
	req.Header.Del(clientAddrHeader)
	req.Header.Del(clientTokenHeader)
	addr := s.connectionClient(ctx)
	key, _ := disputes.FileSigningKey(s.Config.Actors.Reader())
	if key == nil {
		return
	}
	a := addr.String()
	expires := time.Now().Add(clientTokenLifetime).Unix()
	req.Header.Set(clientAddrHeader, a)
	req.Header.Set(clientTokenHeader, clientToken(key, a, string(req.Header.Method()), string(req.RequestURI()), expires))
}

// forwardedClient verifies a forwarded request's statement of its client's
// address. present is false when the request carries none.
func (s *Server) forwardedClient(ctx *fasthttp.RequestCtx) (addr netip.Addr, present bool, e *ledger.Error) {
	a := ctx.Request.Header.Peek(clientAddrHeader)
	token := string(ctx.Request.Header.Peek(clientTokenHeader))
	if len(a) == 0 && token == "" {
		return netip.Addr{}, false, nil
	}
	deny := &ledger.Error{Code: ledger.CodeForbidden,
		Message: "The " + clientAddrHeader + " header is internal to the cluster and this one does not verify; nothing was done"}
	addr, err := netip.ParseAddr(string(a))
	es, _, ok := strings.Cut(token, ".")
	expires, perr := strconv.ParseInt(es, 10, 64)
	now := time.Now()
	if err != nil || !ok || perr != nil || now.Unix() > expires || expires > now.Add(2*clientTokenLifetime).Unix() {
		return netip.Addr{}, true, deny
	}
	key, _ := disputes.FileSigningKey(s.Config.Actors.Reader())
	want := clientToken(key, string(a), string(ctx.Method()), string(ctx.RequestURI()), expires)
	if key == nil || !hmac.Equal([]byte(token), []byte(want)) {
		return netip.Addr{}, true, deny
	}
	return addr, true, nil
}

// clientAddr is the address of the client a request is judged by: the one
// a follower vouched for, else the immediate sender, or behind a trusted
// proxy the right-most X-Forwarded-For address that is not one. known is
// false when no address can be believed: a statement that does not verify
// (checkForwardedClient refuses those first), or a request a follower
// relayed without one.
func (s *Server) clientAddr(ctx *fasthttp.RequestCtx) (netip.Addr, bool) {
	if addr, present, e := s.forwardedClient(ctx); present {
		return addr, e == nil
	}
	if s.FromPeer(ctx) { // relayed by a follower that could not vouch (checkout_public.go)
		return netip.Addr{}, false
	}
	return s.connectionClient(ctx), true
}

// connectionClient is the client of the request's own connection: its
// sender, or behind a trusted proxy the right-most X-Forwarded-For address
// that is not one.
func (s *Server) connectionClient(ctx *fasthttp.RequestCtx) netip.Addr {
	remote, _ := netip.AddrFromSlice(ctx.RemoteIP())
	remote = remote.Unmap()
	if !s.trustedProxy(remote) {
		return remote
	}
	xff := ctx.Request.Header.PeekAll(fasthttp.HeaderXForwardedFor)
	var hops []string
	for _, h := range xff {
		for _, part := range bytes.Split(h, []byte(",")) {
			hops = append(hops, strings.TrimSpace(string(part)))
		}
	}
	client := remote
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			return client // a hop that is not an address: the last believed one
		}
		client = a.Unmap()
		if !s.trustedProxy(client) {
			break
		}
	}
	return client
}

func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.Config.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// checkForwardedClient refuses a request whose statement of its client's
// address does not verify (a client's forgery, or a stale copy).
//
// The verified address is noted for the request log, which then need not
// read the headers again.
func (s *Server) checkForwardedClient(ctx *fasthttp.RequestCtx) *ledger.Error {
	addr, present, e := s.forwardedClient(ctx)
	if present && e == nil {
		if st := requestStateOf(ctx); st != nil {
			st.clientIP, st.clientVouched = addr, true
		}
	}
	return e
}
