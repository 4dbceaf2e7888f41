package core

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/checkout"
	"payments/ledger"
)

// The hosted checkout: the page a payment link's url opens, and the public
// endpoints its script calls. Neither needs an API key: a link's id is the
// only authority, and every route is scoped to that one link and tells
// only what the page shows (package checkout's View). Presentation lives
// in package checkout; this file and checkout_page.go are the glue.
//
// Every checkout route is limited per client address (the socket's peer;
// X-Forwarded-For is not trusted), refuses cross-site writes (see
// crossSite), and is relayed to the leader by a follower, like the API.
// Opening a session is idempotent by the attempt key the page draws once
// per payment attempt: the session's id is derived from it, so a double
// click or a retry opens one session, not two.
//
// The page and its assets are served under /checkout, and also under the
// path of --checkout-url when that is another one; the public endpoints
// are under /v1/checkout.

const (
	checkoutPrefix    = "/checkout"
	checkoutAPIPrefix = "/v1/checkout"
	// attemptLenMin and attemptLenMax bound the payer's attempt key, in
	// characters.
	attemptLenMin, attemptLenMax = 16, 64
)

// checkoutPrefixes are the path prefixes the page is served under:
// /checkout, and the path of the configured checkout URL when it is
// another that no API route uses.
func checkoutPrefixes() []string {
	out := []string{checkoutPrefix}
	u, err := url.Parse(checkoutBase())
	if err != nil {
		return out
	}
	p := strings.TrimRight(u.Path, "/")
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	switch {
	case p == checkoutPrefix, first == "", first == "v1", first == "internal", first == "healthz", first == "readyz", first == "openapi.json":
		return out
	}
	return append(out, p)
}

func (s *Server) checkoutRoutes() {
	for _, base := range checkoutPrefixes() {
		s.router.GET(base+"/{id}", s.checkoutPage(base))
		s.router.POST(base+"/{id}", s.checkoutForm(base))
		s.router.GET(base+"/assets/{name}", s.checkoutAsset)
		s.router.GET(base+"/{id}/sessions/{sessionId}/qr.svg", s.checkoutQR)
	}
	s.router.GET(checkoutAPIPrefix+"/{id}", s.checkoutJSON(s.getPublicCheckout))
	s.router.POST(checkoutAPIPrefix+"/{id}/sessions", s.checkoutJSON(s.createPublicSession))
	s.router.GET(checkoutAPIPrefix+"/{id}/sessions/{sessionId}", s.checkoutJSON(s.getPublicSession))
	s.router.POST(checkoutAPIPrefix+"/{id}/sessions/{sessionId}/simulate", s.checkoutJSON(s.simulatePublicDeposit))
}

// checkoutGate runs what every checkout route runs first: the limit per
// client address, the cross-site check on writes, and the relay to the
// leader. It returns the error to answer, and whether the request was
// answered (relayed) already.
func (s *Server) checkoutGate(ctx *fasthttp.RequestCtx) (done bool, e *ledger.Error) {
	if !s.fromPeer(ctx) {
		if e := s.limitAddress(ctx); e != nil {
			return true, e
		}
		if !ctx.IsGet() && !ctx.IsHead() && s.crossSite(ctx) {
			return true, &ledger.Error{Code: ledger.CodeForbidden,
				Message: "The checkout refuses requests sent from another site; pay on the checkout page itself"}
		}
	}
	if e := s.readBody(ctx); e != nil {
		return true, e
	}
	return s.relayToLeader(ctx)
}

// limitAddress counts a checkout request against its client address.
func (s *Server) limitAddress(ctx *fasthttp.RequestCtx) *ledger.Error {
	e := s.checkoutLimiter.allow(ctx, "ip:"+ctx.RemoteIP().String(), perClientAddress)
	if e != nil {
		e.Message = "Too many requests from this address: the checkout allows " +
			strconv.Itoa(s.Config.RateLimitPerSecond) + " a second; retry after the delay given"
	}
	return e
}

// fromPeer reports whether a request was relayed by another node of the
// cluster, which checked it already.
func (s *Server) fromPeer(ctx *fasthttp.RequestCtx) bool {
	if len(ctx.Request.Header.Peek(forwardedHeader)) == 0 {
		return false
	}
	ip := ctx.RemoteIP().String()
	for _, addr := range s.Config.PeerHTTP {
		if host, _, err := net.SplitHostPort(addr); err == nil && host == ip {
			return true
		}
	}
	return false
}

// crossSite reports whether a browser sent the request from another site.
// Browsers say where a request comes from in Sec-Fetch-Site (all current
// ones) or else Origin; a request with neither is not a browser's
// cross-site request (curl, a server), and has no authority to abuse: the
// checkout has no cookies and no key.
func (s *Server) crossSite(ctx *fasthttp.RequestCtx) bool {
	switch string(ctx.Request.Header.Peek("Sec-Fetch-Site")) {
	case "same-origin", "none":
		return false
	case "":
	default: // same-site, cross-site
		return true
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	if origin == "" {
		return false
	}
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" {
		return true // "null": a sandboxed frame, a privacy redirect
	}
	if o.Host == string(ctx.Host()) {
		return false
	}
	pub, err := url.Parse(checkoutBase())
	return err != nil || pub.Scheme != o.Scheme || pub.Host != o.Host
}

// checkoutJSON wraps a public endpoint: a request id and the version, the
// gate, then the handler with the link id.
func (s *Server) checkoutJSON(h func(ctx *fasthttp.RequestCtx, linkID string) *ledger.Error) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !s.checkoutJSONStart(ctx) {
			return
		}
		id, e := PathParam(ctx, "id")
		if e == nil {
			e = h(ctx, id)
		}
		if e != nil {
			writeError(ctx, e)
		}
	}
}

// checkoutJSONStart starts a checkout route that answers in JSON: the
// request id and the version, then the gate. False when it answered.
func (s *Server) checkoutJSONStart(ctx *fasthttp.RequestCtx) bool {
	if !s.Begin(ctx) {
		return false
	}
	done, e := s.checkoutGate(ctx)
	if e != nil {
		writeError(ctx, e)
	}
	return !done
}

// checkoutInput is what the views of a link the checkout shows under base
// are built from.
func (s *Server) checkoutInput(cs *checkoutState, base string) checkout.Input {
	return checkout.Input{
		Link: cs.link, Sessions: cs.sessions, Now: cs.now, Base: base,
		Catalogue: s.Config.Catalogue, TestMode: !s.Config.Live, Confirming: s.Config.App.CheckoutDepositOnItsWay,
	}
}

func (s *Server) checkoutView(cs *checkoutState, base string) checkout.View {
	return checkout.Build(s.checkoutInput(cs, base))
}

// publicBase is where the page lives for views sent as JSON: the path of
// the configured checkout URL when the server serves the page there.
func publicBase() string {
	p := checkoutPrefixes()
	return p[len(p)-1]
}

type checkoutBody struct {
	Checkout checkout.View `json:"checkout"`
}

type checkoutSessionBody struct {
	CheckoutSession checkout.Session `json:"checkoutSession"`
}

// getPublicCheckout: GET /v1/checkout/{id}.
func (s *Server) getPublicCheckout(ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	cs, ok := s.readCheckout(linkID)
	if !ok {
		return NotFound("Payment link")
	}
	writeJSON(ctx, fasthttp.StatusOK, &checkoutBody{s.checkoutView(&cs, publicBase())})
	return nil
}

// getPublicSession: GET /v1/checkout/{id}/sessions/{sessionId}, one of the
// link's sessions.
func (s *Server) getPublicSession(ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	cs, sess, e := s.publicSession(ctx, linkID)
	if e != nil {
		return e
	}
	writeJSON(ctx, fasthttp.StatusOK, &checkoutSessionBody{checkout.BuildSession(s.checkoutInput(&cs, publicBase()), &sess)})
	return nil
}

// publicSession reads the link and the session the path names: 404 unless
// the session is the link's.
func (s *Server) publicSession(ctx *fasthttp.RequestCtx, linkID string) (checkoutState, ledger.CheckoutSession, *ledger.Error) {
	sid, e := PathParam(ctx, "sessionId")
	if e != nil {
		return checkoutState{}, ledger.CheckoutSession{}, e
	}
	cs, ok := s.readCheckout(linkID)
	if !ok {
		return cs, ledger.CheckoutSession{}, NotFound("Payment link")
	}
	sess, ok := cs.session(sid)
	if !ok {
		return cs, sess, NotFound("Checkout session")
	}
	return cs, sess, nil
}

// publicSessionBody is the request to open a session from the checkout:
// the API's, with the custom fields' values and the attempt key.
type publicSessionBody struct {
	Method        *string           `json:"method"`
	Code          *string           `json:"code"`
	AccountNumber *string           `json:"accountNumber"`
	CustomFields  map[string]string `json:"customFields"`
	Attempt       *string           `json:"attempt"`
}

// createPublicSession: POST /v1/checkout/{id}/sessions.
func (s *Server) createPublicSession(ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	body, e := jsonBody(ctx)
	var req publicSessionBody
	if e == nil {
		e = DecodeBody(body, &req)
	}
	if e != nil {
		return e
	}
	cs, replayed, e := s.openPublicSession(ctx, linkID, &req)
	if e != nil {
		return e
	}
	status := fasthttp.StatusCreated
	if replayed {
		status = fasthttp.StatusOK
		ctx.Response.Header.Set("idempotent-replayed", "true")
	}
	writeJSON(ctx, status, &checkoutBody{s.checkoutView(&cs, publicBase())})
	return nil
}

// openPublicSession opens the session the payer asked for, once per
// attempt key, through the API's own validation and operation. It returns
// the link as it is after, and whether the attempt had opened its session
// already.
func (s *Server) openPublicSession(ctx *fasthttp.RequestCtx, linkID string, req *publicSessionBody) (checkoutState, bool, *ledger.Error) {
	if s.Config.NoProvider {
		return checkoutState{}, false, errNoProvider()
	}
	cs, ok := s.readCheckout(linkID)
	if !ok {
		return cs, false, NotFound("Payment link")
	}
	var p Problems
	attempt := p.Text("attempt", req.Attempt, true, attemptLenMax)
	if attempt != "" && (len(attempt) < attemptLenMin || strings.Trim(attempt, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "") {
		p.Add("attempt", "must be 16 to 64 letters, digits, _ or -, drawn at random once per payment attempt")
	}
	for _, f := range checkout.CheckFieldValues(checkout.ParseCustomFields(cs.link.Current.CustomFields), req.CustomFields) {
		p.Add(f.Field, f.Message)
	}
	in, e := parseCheckoutSession(&checkoutSessionRequestBody{Method: req.Method, Code: req.Code, AccountNumber: req.AccountNumber})
	if e != nil {
		p = append(p, e.Fields...)
	}
	if e := p.Err(); e != nil {
		return cs, false, e
	}
	in.LinkID, in.Attempt = cs.link.ID, attempt
	r := s.Config.App.OpenCheckoutSession(app.Caller{OrgID: cs.link.OrgID}, in)
	after, _ := s.readCheckout(linkID)
	if e := replyError(r); e != nil {
		return after, false, e
	}
	return after, r.Result.Replayed, nil
}

type simulateBody struct {
	Amount Amount `json:"amount"`
}

// simulatePublicDeposit: POST /v1/checkout/{id}/sessions/{sessionId}/simulate,
// the sandbox page's "simulate payment". The deposit is on its way at once
// (the session shows confirming) and lands after the sandbox's settlement
// time (App.StartCheckoutDeposit), as POST /v1/simulations/checkout-deposit
// pays, so the collection, the credit and the webhooks are the API's.
func (s *Server) simulatePublicDeposit(ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	if s.Config.Live {
		return &ledger.Error{Code: ledger.CodeNotFound, Message: "Simulation endpoint not found: simulations exist only on the sandbox stack"}
	}
	cs, sess, e := s.publicSession(ctx, linkID)
	if e != nil {
		return e
	}
	var req simulateBody
	if len(ctx.PostBody()) > 0 {
		body, e := jsonBody(ctx)
		if e == nil {
			e = DecodeBody(body, &req)
		}
		if e != nil {
			return e
		}
	}
	in := app.CheckoutDepositRequest{SessionID: sess.ID}
	if req.Amount.Set {
		in.Amount = &req.Amount.Text // in the session's currency, which the operation reads
	}
	if e := s.Config.App.StartCheckoutDeposit(app.Caller{OrgID: sess.OrgID}, in); e != nil {
		return e
	}
	writeJSON(ctx, fasthttp.StatusAccepted, &checkoutSessionBody{checkout.BuildSession(s.checkoutInput(&cs, publicBase()), &sess)})
	return nil
}
