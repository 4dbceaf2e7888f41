package links

import (
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/checkout"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/paymentlinks"
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
	u, err := url.Parse(core.CheckoutBase())
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

// The hosted checkout's pages and public endpoints: no API key.
func init() { core.RegisterRouteSet(checkoutRoutes) }

func checkoutRoutes(s *core.Server) {
	for _, base := range checkoutPrefixes() {
		s.Router().GET(base+"/{id}", checkoutPage(s, base))
		s.Router().POST(base+"/{id}", checkoutForm(s, base))
		s.Router().GET(base+"/assets/{name}", func(a0 *fasthttp.RequestCtx) { checkoutAsset(s, a0) })
		s.Router().GET(base+"/{id}/sessions/{sessionId}/qr.svg", func(a0 *fasthttp.RequestCtx) { checkoutQR(s, a0) })
	}
	s.Router().GET(checkoutAPIPrefix+"/{id}", checkoutJSON(s, func(a0 *fasthttp.RequestCtx, a1 string) *ledger.Error { return getPublicCheckout(s, a0, a1) }))
	s.Router().POST(checkoutAPIPrefix+"/{id}/sessions", checkoutJSON(s, func(a0 *fasthttp.RequestCtx, a1 string) *ledger.Error { return createPublicSession(s, a0, a1) }))
	s.Router().GET(checkoutAPIPrefix+"/{id}/sessions/{sessionId}", checkoutJSON(s, func(a0 *fasthttp.RequestCtx, a1 string) *ledger.Error { return getPublicSession(s, a0, a1) }))
	s.Router().POST(checkoutAPIPrefix+"/{id}/sessions/{sessionId}/simulate", checkoutJSON(s, func(a0 *fasthttp.RequestCtx, a1 string) *ledger.Error { return simulatePublicDeposit(s, a0, a1) }))
}

// checkoutGate runs what every checkout route runs first (core.PageGate).
// It returns the error to answer, and whether the request was answered
// (relayed) already.
func checkoutGate(s *core.Server, ctx *fasthttp.RequestCtx) (done bool, e *ledger.Error) {
	return s.PageGate(ctx, "", "The checkout refuses requests sent from another site; pay on the checkout page itself")
}

// checkoutJSON wraps a public endpoint: a request id and the version, the
// gate, then the handler with the link id.
func checkoutJSON(s *core.Server, h func(ctx *fasthttp.RequestCtx, linkID string) *ledger.Error) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !checkoutJSONStart(s, ctx) {
			return
		}
		id, e := core.PathParam(ctx, "id")
		if e == nil {
			e = h(ctx, id)
		}
		if e != nil {
			core.WriteError(ctx, e)
		}
	}
}

// checkoutJSONStart starts a checkout route that answers in JSON: the
// request id and the version, then the gate. False when it answered.
func checkoutJSONStart(s *core.Server, ctx *fasthttp.RequestCtx) bool {
	if !s.Begin(ctx) {
		return false
	}
	done, e := checkoutGate(s, ctx)
	if e != nil {
		core.WriteError(ctx, e)
	}
	return !done
}

// checkoutInput is what the views of a link the checkout shows under base
// are built from.
func checkoutInput(s *core.Server, cs *checkoutState, base string) checkout.Input {
	return checkout.Input{
		Link: cs.link, Sessions: cs.sessions, Now: cs.now, Base: base,
		Catalogue: s.Config.Catalogue, TestMode: !s.Config.Live, Confirming: s.Config.App.CheckoutDepositOnItsWay,
	}
}

func checkoutView(s *core.Server, cs *checkoutState, base string) checkout.View {
	return checkout.Build(checkoutInput(s, cs, base))
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
func getPublicCheckout(s *core.Server, ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	cs, ok := readCheckout(s, linkID)
	if !ok {
		return core.NotFound("Payment link")
	}
	core.WriteJSON(ctx, fasthttp.StatusOK, &checkoutBody{checkoutView(s, &cs, publicBase())})
	return nil
}

// getPublicSession: GET /v1/checkout/{id}/sessions/{sessionId}, one of the
// link's sessions.
func getPublicSession(s *core.Server, ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	cs, sess, e := publicSession(s, ctx, linkID)
	if e != nil {
		return e
	}
	core.WriteJSON(ctx, fasthttp.StatusOK, &checkoutSessionBody{checkout.BuildSession(checkoutInput(s, &cs, publicBase()), &sess)})
	return nil
}

// publicSession reads the link and the session the path names: 404 unless
// the session is the link's.
func publicSession(s *core.Server, ctx *fasthttp.RequestCtx, linkID string) (checkoutState, paymentlinks.Session, *ledger.Error) {
	sid, e := core.PathParam(ctx, "sessionId")
	if e != nil {
		return checkoutState{}, paymentlinks.Session{}, e
	}
	cs, ok := readCheckout(s, linkID)
	if !ok {
		return cs, paymentlinks.Session{}, core.NotFound("Payment link")
	}
	sess, ok := cs.session(sid)
	if !ok {
		return cs, sess, core.NotFound("Checkout session")
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
func createPublicSession(s *core.Server, ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	body, e := core.JSONBody(ctx)
	var req publicSessionBody
	if e == nil {
		e = core.DecodeBody(body, &req)
	}
	if e != nil {
		return e
	}
	cs, replayed, e := openPublicSession(s, ctx, linkID, &req)
	if e != nil {
		return e
	}
	status := fasthttp.StatusCreated
	if replayed {
		status = fasthttp.StatusOK
		ctx.Response.Header.Set("idempotent-replayed", "true")
	}
	core.WriteJSON(ctx, status, &checkoutBody{checkoutView(s, &cs, publicBase())})
	return nil
}

// openPublicSession opens the session the payer asked for, once per
// attempt key, through the API's own validation and operation. It returns
// the link as it is after, and whether the attempt had opened its session
// already.
func openPublicSession(s *core.Server, ctx *fasthttp.RequestCtx, linkID string, req *publicSessionBody) (checkoutState, bool, *ledger.Error) {
	if s.Config.NoProvider {
		return checkoutState{}, false, core.ErrNoProvider()
	}
	cs, ok := readCheckout(s, linkID)
	if !ok {
		return cs, false, core.NotFound("Payment link")
	}
	var p core.Problems
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
	after, _ := readCheckout(s, linkID)
	if e := core.ReplyError(r); e != nil {
		return after, false, e
	}
	return after, r.Result.Replayed, nil
}

type simulateBody struct {
	Amount core.Amount `json:"amount"`
}

// simulatePublicDeposit: POST /v1/checkout/{id}/sessions/{sessionId}/simulate,
// the sandbox page's "simulate payment". The deposit is on its way at once
// (the session shows confirming) and lands after the sandbox's settlement
// time (App.StartCheckoutDeposit), as POST /v1/simulations/checkout-deposit
// pays, so the collection, the credit and the webhooks are the API's.
func simulatePublicDeposit(s *core.Server, ctx *fasthttp.RequestCtx, linkID string) *ledger.Error {
	if s.Config.Live {
		return &ledger.Error{Code: ledger.CodeNotFound, Message: "Simulation endpoint not found: simulations exist only on the sandbox stack"}
	}
	cs, sess, e := publicSession(s, ctx, linkID)
	if e != nil {
		return e
	}
	var req simulateBody
	if len(ctx.PostBody()) > 0 {
		body, e := core.JSONBody(ctx)
		if e == nil {
			e = core.DecodeBody(body, &req)
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
	core.WriteJSON(ctx, fasthttp.StatusAccepted, &checkoutSessionBody{checkout.BuildSession(checkoutInput(s, &cs, publicBase()), &sess)})
	return nil
}
