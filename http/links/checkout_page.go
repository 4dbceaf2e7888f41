package links

import (
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/http/checkout"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/paymentlinks"
)

// The hosted checkout's HTML routes: the page, the payment form it posts
// without JavaScript, its assets and its QR codes. See checkout_public.go.

// checkoutPage: GET {base}/{id}. ?change=1 shows the methods over an open
// session (switching method without JavaScript).
func checkoutPage(s *core.Server, base string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		cs, ok := pageStart(s, ctx, base)
		if !ok {
			return
		}
		p := newPage(s, ctx, &cs, base)
		p.ShowPicker = string(ctx.QueryArgs().Peek("change")) == "1"
		writePage(s, ctx, base, fasthttp.StatusOK, p)
	}
}

// checkoutForm: POST {base}/{id}, the payment form sent without
// JavaScript: it opens the session as the public endpoint does, then shows
// the page again (303), or the form with what was wrong.
func checkoutForm(s *core.Server, base string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		cs, ok := pageStart(s, ctx, base)
		if !ok {
			return
		}
		form, req, e := readPaymentForm(ctx)
		if e == nil {
			cs, _, e = openPublicSession(s, ctx, cs.link.ID, &req)
		}
		if e == nil {
			// Relative, so that it holds behind a proxy that rewrites Host.
			ctx.Response.Header.Set("Location", base+"/"+cs.link.ID)
			ctx.SetStatusCode(fasthttp.StatusSeeOther)
			return
		}
		form.Errors = map[string]string{}
		for _, f := range e.Fields {
			switch {
			case f.Field == "accountNumber" || strings.HasPrefix(f.Field, "customFields."):
				form.Errors[f.Field] = "This field " + f.Message
			default:
				form.Errors["form"] = strings.TrimSpace(form.Errors["form"] + " " + f.Field + " " + f.Message + ".")
			}
		}
		if len(e.Fields) == 0 {
			form.Errors["form"] = e.Message
		}
		p := newPage(s, ctx, &cs, base)
		p.Form, p.ShowPicker = form, true
		writePage(s, ctx, base, core.HTTPStatus(e.Code), p)
	}
}

// readPaymentForm reads the urlencoded payment form.
func readPaymentForm(ctx *fasthttp.RequestCtx) (checkout.Form, publicSessionBody, *ledger.Error) {
	var f checkout.Form
	var req publicSessionBody
	if len(ctx.PostBody()) > core.JSONBodyBytesMax {
		return f, req, core.BodyTooLarge(core.JSONBodyBytesMax)
	}
	if !strings.HasPrefix(string(ctx.Request.Header.ContentType()), "application/x-www-form-urlencoded") {
		return f, req, ledger.FieldInvalid("Content-Type", "must be application/x-www-form-urlencoded")
	}
	args := ctx.PostArgs()
	get := func(k string) string { return strings.TrimSpace(string(args.Peek(k))) }
	f = checkout.Form{Method: get("method"), MobileNetwork: get("mobileNetwork"), Phone: get("phone"),
		CryptoNetwork: get("cryptoNetwork"), Custom: map[string]string{}}
	args.VisitAll(func(k, v []byte) {
		if name, ok := strings.CutPrefix(string(k), "cf."); ok && strings.TrimSpace(string(v)) != "" {
			f.Custom[name] = string(v)
		}
	})
	attempt := get("attempt")
	req = publicSessionBody{Method: &f.Method, CustomFields: f.Custom, Attempt: &attempt}
	switch f.Method {
	case paymentlinks.MobileMoney.String():
		phone := strings.NewReplacer(" ", "", "-", "", "(", "", ")", "", ".", "").Replace(f.Phone)
		req.Code, req.AccountNumber = &f.MobileNetwork, &phone
	case paymentlinks.Crypto.String():
		req.Code = &f.CryptoNetwork
	}
	return f, req, nil
}

// pageStart runs the gate of an HTML route and reads its link, answering
// with an error page when either fails.
func pageStart(s *core.Server, ctx *fasthttp.RequestCtx, base string) (checkoutState, bool) {
	ctx.Response.Header.Set("x-request-id", s.RequestID(ctx))
	if done, e := checkoutGate(s, ctx); done {
		if e != nil {
			writeErrorPage(s, ctx, base, e)
		}
		return checkoutState{}, false
	}
	id, _ := ctx.UserValue("id").(string)
	cs, ok := readCheckout(s, id)
	if !ok {
		writeErrorPage(s, ctx, base, core.NotFound("Payment link"))
	}
	return cs, ok
}

func newPage(s *core.Server, ctx *fasthttp.RequestCtx, cs *checkoutState, base string) *checkout.Page {
	return &checkout.Page{
		View: checkoutView(s, cs, base), Base: base, API: checkoutAPIPrefix + "/" + cs.link.ID,
		Nonce: checkout.NewNonce(), Attempt: checkout.NewAttempt(), RequestID: core.RequestIDOf(ctx),
	}
}

// writePage answers with a page: never cached, framed or sniffed, under its
// Content-Security-Policy.
func writePage(s *core.Server, ctx *fasthttp.RequestCtx, base string, status int, p *checkout.Page) {
	body, err := p.Render()
	if err != nil {
		s.Logger.Error("rendering the checkout page", "link", p.PaymentLinkID, "err", err)
		writeErrorPage(s, ctx, base, &ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
		return
	}
	core.WriteHTML(ctx, status, p.CSP(), body)
}

// writeErrorPage answers an HTML route's error with a page in words.
func writeErrorPage(s *core.Server, ctx *fasthttp.RequestCtx, base string, e *ledger.Error) {
	p := &checkout.ErrorPage{Status: core.HTTPStatus(e.Code), RequestID: core.RequestIDOf(ctx), Base: base, Nonce: checkout.NewNonce()}
	switch e.Code {
	case ledger.CodeNotFound:
		p.Title, p.Message = "Payment link not found", "We could not find this payment link. Check the address, or ask the merchant for a new link."
	case ledger.CodeRateLimited:
		p.Title, p.Message = "Too many requests", "Please wait a few seconds, then reload the page."
	case ledger.CodeForbidden:
		p.Title, p.Message = "Request refused", e.Message
	case ledger.CodeUnavailable, ledger.CodeOutcomeUnknown:
		p.Title, p.Message = "Checkout is unavailable", "We cannot take payments right now. Please try again in a moment."
	case ledger.CodeValidation, ledger.CodeBadRequest:
		p.Title, p.Message = "We could not read that", e.Message
	default:
		p.Title, p.Message = "Something went wrong", "Please try again in a moment."
	}
	if e.RetryAfterSeconds > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	body, err := p.Render()
	if err != nil {
		s.Logger.Error("rendering the checkout error page", "err", err)
		body = []byte("Error")
	}
	core.WriteHTML(ctx, p.Status, p.CSP(), body)
}

// checkoutAsset: GET {base}/assets/{name}, a file of the page, cached for
// a year (its name changes with its bytes). Any node serves it.
func checkoutAsset(s *core.Server, ctx *fasthttp.RequestCtx) {
	if !s.Begin(ctx) {
		return
	}
	if e := s.LimitAddress(ctx); e != nil {
		core.WriteError(ctx, e)
		return
	}
	core.ServeAsset(ctx, checkout.Assets)
}

// checkoutQR: GET {base}/{id}/sessions/{sessionId}/qr.svg, the QR code of
// a stablecoin session's deposit address.
func checkoutQR(s *core.Server, ctx *fasthttp.RequestCtx) {
	if !checkoutJSONStart(s, ctx) {
		return
	}
	id, _ := ctx.UserValue("id").(string)
	_, sess, e := publicSession(s, ctx, id)
	if e == nil && (sess.Method != paymentlinks.Crypto || sess.DepositAccount == "") {
		e = &ledger.Error{Code: ledger.CodeNotFound, Message: "Checkout session " + sess.ID + " has no deposit address"}
	}
	if e != nil {
		core.WriteError(ctx, e)
		return
	}
	svg, err := checkout.QRSVG(sess.DepositAccount)
	if err != nil {
		core.WriteError(ctx, &ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
		return
	}
	h := &ctx.Response.Header
	h.Set("Cache-Control", "private, max-age=86400") // an address never changes
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	ctx.SetContentType("image/svg+xml")
	ctx.SetBody(svg)
}
