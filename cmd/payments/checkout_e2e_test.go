package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// End-to-end tests of the hosted checkout: a payer in headless Chromium on
// the page of a link the merchant made through the API, against the real
// binary, on the sandbox stack, with a webhook receiver on loopback.

// checkoutEnv is a server with a webhook receiver and a merchant site to
// return to.
type checkoutEnv struct {
	nodeEnv
	hooks    *hookReceiver
	merchant *httptest.Server
}

func newCheckoutEnv(t *testing.T, args ...string) *checkoutEnv {
	t.Helper()
	endToEnd(t)
	t.Parallel()
	e := &checkoutEnv{nodeEnv: nodeEnv{t: t}, hooks: &hookReceiver{}}
	rcv := httptest.NewServer(e.hooks)
	t.Cleanup(rcv.Close)
	e.merchant = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "<!doctype html><title>Thanks</title><h1>Back at the merchant</h1>")
	}))
	t.Cleanup(e.merchant.Close)
	e.p = startReady(t, t.TempDir(), append([]string{"--sandbox-settlement", "300ms", "--webhook-timeout", "2s"}, args...)...)
	// Ready means a leader is known; the bootstrap key commits just after.
	var st int
	var err error
	waitUntil(t, 10*time.Second, "the bootstrap key", func() bool {
		st, err = call(e.p.addr, "POST", "/v1/webhooks/endpoints",
			map[string]any{"url": rcv.URL + "/hook", "events": []string{"*"}}, nil)
		if err == nil && st != 201 && st != 401 {
			t.Fatalf("create webhook endpoint: %d", st)
		}
		return err == nil && st == 201
	})
	return e
}

type linkView struct {
	ID                string  `json:"id"`
	URL               string  `json:"url"`
	Status            string  `json:"status"`
	TotalReceived     string  `json:"totalReceived"`
	OverpaymentAmount *string `json:"overpaymentAmount"`
	Sessions          []struct {
		ID           string  `json:"id"`
		Status       string  `json:"status"`
		Method       string  `json:"method"`
		CollectionID *string `json:"collectionId"`
	} `json:"sessions"`
}

// link creates a payment link of amount GHS with the given methods; extra
// fields override the defaults.
func (e *checkoutEnv) link(amount string, methods []string, extra map[string]any) linkView {
	e.t.Helper()
	body := map[string]any{
		"email": "ama@example.com", "amount": amount, "currency": "GHS", "title": "Invoice #1042",
		"description": "August catering", "allowedMethods": methods, "redirectUrl": e.merchant.URL + "/thanks",
		"branding": map[string]any{"businessName": "Zouk Inc.", "accentColor": "#6642D1"},
	}
	for k, v := range extra {
		body[k] = v
	}
	var out struct {
		PaymentLink linkView `json:"paymentLink"`
	}
	e.api("POST", "/v1/payment-links", body, &out, 201)
	return out.PaymentLink
}

func (e *checkoutEnv) getLink(id string) linkView {
	e.t.Helper()
	var out struct {
		PaymentLink linkView `json:"paymentLink"`
	}
	e.api("GET", "/v1/payment-links/"+id, nil, &out, 200)
	return out.PaymentLink
}

// balance is the GHS balance's available amount.
func (e *checkoutEnv) balance() string {
	e.t.Helper()
	var body struct {
		Data []struct {
			Currency         string `json:"currency"`
			AvailableBalance string `json:"availableBalance"`
		} `json:"data"`
	}
	e.api("GET", "/v1/accounts", nil, &body, 200)
	for _, a := range body.Data {
		if a.Currency == "GHS" {
			return a.AvailableBalance
		}
	}
	return "0.00"
}

// hookReceiver records the webhook deliveries it gets.
type hookReceiver struct {
	mu     sync.Mutex
	events []hookEvent
}

type hookEvent struct {
	Type string
	ID   string // the resource's id
}

func (h *hookReceiver) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	var body struct {
		Event string `json:"event"`
		Data  struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	raw, _ := io.ReadAll(r.Body)
	if json.Unmarshal(raw, &body) == nil {
		h.mu.Lock()
		if !slices.Contains(h.events, hookEvent{body.Event, body.Data.ID}) { // at least once: a retry is the same event
			h.events = append(h.events, hookEvent{body.Event, body.Data.ID})
		}
		h.mu.Unlock()
	}
	w.WriteHeader(nethttp.StatusOK)
}

// types returns the event types delivered so far about the resources ids
// (any resource when ids is empty), sorted.
func (h *hookReceiver) types(ids ...string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.events {
		if len(ids) == 0 || slices.Contains(ids, ev.ID) {
			out = append(out, ev.Type)
		}
	}
	slices.Sort(out)
	return out
}

// waitHooks waits until the receiver got every event type in want.
func (e *checkoutEnv) waitHooks(want ...string) {
	e.t.Helper()
	all := func() bool {
		got := e.hooks.types()
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
	if !eventually(20*time.Second, all) {
		e.t.Fatalf("webhooks: got %v, want at least %v", e.hooks.types(), want)
	}
}

// open opens the link's page in a new tab.
func (e *checkoutEnv) open(l linkView) context.Context {
	e.t.Helper()
	ctx := newTab(e.t)
	do(e.t, ctx, chromedp.Navigate(l.URL))
	waitFor(e.t, ctx, `document.readyState === "complete"`)
	return ctx
}

// screen waits until the page shows screen.
func screen(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	waitFor(t, ctx, `document.getElementById("checkout").dataset.screen === "`+name+`" && !document.querySelector('[data-panel="`+name+`"]').hidden`)
}

// text is the visible text of the page.
func text(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `document.body.innerText`)
}

func wantText(t *testing.T, ctx context.Context, parts ...string) {
	t.Helper()
	got := text(t, ctx)
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Fatalf("the page does not show %q:\n%s", p, got)
		}
	}
}

// A payer pays by mobile money: picks a network, types a phone number,
// approves on the phone (the sandbox approves this amount), and the page
// follows the collection to the receipt, then returns to the merchant. The
// balance, the link and the webhooks are as for a payment through the API.
func TestCheckoutMobileMoney(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("120.00", []string{"mobile_money", "bank_transfer"}, map[string]any{
		"customFields": []map[string]any{{"name": "orderNumber", "type": "text", "required": true}},
	})
	ctx := e.open(l)
	wantText(t, ctx, "Zouk Inc.", "Invoice #1042", "GHS", "120.00", "Test mode")
	screenshot(t, ctx, "pick")

	// A required custom field is enforced: nothing is sent without it.
	do(t, ctx, chromedp.Click(chromedp.ID("method-mobile_money")),
		chromedp.SendKeys(chromedp.ID("mm-phone"), "+233 24 123 4567"),
		chromedp.Click(chromedp.CSS(`form[data-form=pay] button[type=submit]`)))
	if v := eval[bool](t, ctx, `document.getElementById("cf-0").matches(":invalid")`); !v {
		t.Fatal("the empty required field is not invalid")
	}
	if len(e.getLink(l.ID).Sessions) != 0 {
		t.Fatal("a session opened without the required field")
	}
	do(t, ctx, chromedp.SendKeys(chromedp.ID("cf-0"), "A-77"),
		chromedp.SetValue(chromedp.ID("mm-network"), "gh_telecel"),
		chromedp.Click(chromedp.CSS(`form[data-form=pay] button[type=submit]`)))
	screen(t, ctx, "mobile_money")
	wantText(t, ctx, "Approve the payment on your phone", "Telecel Cash", "4567")
	screenshot(t, ctx, "approve")

	screen(t, ctx, "paid")
	wantText(t, ctx, "Payment received", "GHS 120.00", "Mobile money")
	screenshot(t, ctx, "receipt")
	waitLocation(t, ctx, e.merchant.URL+"/thanks")

	got := e.getLink(l.ID)
	if got.Status != "paid" || got.TotalReceived != "120.00" || len(got.Sessions) != 1 || got.Sessions[0].Status != "complete" {
		t.Fatalf("link after payment: %+v", got)
	}
	var col struct {
		Collection struct {
			Status string `json:"status"`
			From   struct {
				AccountNumber string `json:"accountNumber"`
				Code          string `json:"code"`
			} `json:"from"`
			Fee struct {
				Amount string `json:"amount"`
			} `json:"fee"`
		} `json:"collection"`
	}
	e.api("GET", "/v1/collections/"+*got.Sessions[0].CollectionID, nil, &col, 200)
	if col.Collection.Status != "completed" || col.Collection.From.AccountNumber != "233241234567" || col.Collection.From.Code != "gh_telecel" {
		t.Fatalf("collection: %+v", col.Collection)
	}
	if want := minus(t, "120.00", col.Collection.Fee.Amount); e.balance() != want {
		t.Fatalf("balance %s, want 120.00 less the fee %s = %s", e.balance(), col.Collection.Fee.Amount, want)
	}
	e.waitHooks("collection.pending", "collection.completed", "account.credited", "checkout_session.completed", "payment_link.paid")
	if got := e.hooks.types(*got.Sessions[0].CollectionID); !slices.Equal(got, []string{"collection.completed", "collection.pending"}) {
		t.Fatalf("collection webhooks %v", got)
	}
}

// minus subtracts two GHS amounts.
func minus(t *testing.T, a, b string) string {
	t.Helper()
	c := cents(t, a) - cents(t, b)
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// submit sends the payment form.
func submit(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, chromedp.Click(chromedp.CSS(`form[data-form=pay] button[type=submit]`)))
}

// simulate clicks the sandbox's simulated deposit button whose label
// starts with label, in the panel shown.
func simulate(t *testing.T, ctx context.Context, label string) {
	t.Helper()
	waitFor(t, ctx, `[...document.querySelectorAll("[data-panel]:not([hidden]) [data-simulations] button")].some(b => b.textContent.startsWith("`+label+`") && !b.disabled)`)
	eval[bool](t, ctx, `(() => { const b = [...document.querySelectorAll("[data-panel]:not([hidden]) [data-simulations] button")].find(b => b.textContent.startsWith("`+label+`")); b.click(); return true })()`)
}

// step waits until the progress of the panel shown is at step.
func step(t *testing.T, ctx context.Context, step string) {
	t.Helper()
	waitFor(t, ctx, `document.querySelector('[data-panel]:not([hidden]) .steps li[aria-current=step]')?.dataset.step === "`+step+`"`)
}

// A payer pays by bank transfer, in two instalments through the sandbox's
// simulated deposits: half first (the page says what is left to send),
// then more than the rest (the receipt says what was paid too much). The
// page moves through awaiting → confirming → paid without a reload.
func TestCheckoutBankTransfer(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("200.00", []string{"bank_transfer"}, nil)
	ctx := e.open(l)
	submit(t, ctx) // the only method is chosen already
	screen(t, ctx, "bank_transfer")
	sess := e.getLink(l.ID).Sessions
	if len(sess) != 1 || sess[0].Method != "bank_transfer" {
		t.Fatalf("sessions: %+v", sess)
	}
	wantText(t, ctx, "Pay by bank transfer", "Sandbox Pooled Bank", "Payments Checkout Collections", "200.00", sess[0].ID)
	if got := eval[string](t, ctx, `document.querySelector('[data-panel=bank_transfer] [data-countdown]').textContent`); !strings.HasPrefix(got, "29:") && !strings.HasPrefix(got, "30:") {
		t.Fatalf("countdown %q, want about 30 minutes", got)
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll('[data-panel=bank_transfer] [data-copy]')].filter(b => !b.hidden).length`); n != 3 {
		t.Fatalf("%d copy buttons, want 3 (account number, amount, reference)", n)
	}
	step(t, ctx, "awaiting")
	screenshot(t, ctx, "instructions")

	simulate(t, ctx, "Pay half")
	step(t, ctx, "confirming")
	screenshot(t, ctx, "confirming")
	waitFor(t, ctx, `!document.querySelector('[data-panel=bank_transfer] [data-when-stage=partially_paid]').hidden`)
	wantText(t, ctx, "We received 100.00 GHS, less than asked")
	if got := eval[string](t, ctx, `document.querySelector('[data-panel=bank_transfer] .mono[data-bind="session.amount"]').textContent`); got != "100.00" {
		t.Fatalf("amount still to send %q, want 100.00", got)
	}
	screenshot(t, ctx, "underpaid")

	simulate(t, ctx, "Pay 10% too much")
	screen(t, ctx, "paid")
	wantText(t, ctx, "Payment received", "Bank transfer", "You paid GHS 10.00 more than the amount asked")
	screenshot(t, ctx, "overpaid")

	got := e.getLink(l.ID)
	if got.Status != "paid" || got.TotalReceived != "210.00" || got.OverpaymentAmount == nil || *got.OverpaymentAmount != "10.00" {
		t.Fatalf("link after payment: %+v", got)
	}
	if b := e.balance(); b != "210.00" {
		t.Fatalf("balance %s, want 210.00", b)
	}
	e.waitHooks("collection.completed", "account.credited", "checkout_session.completed", "payment_link.paid")
	if n := len(slices.DeleteFunc(e.hooks.types(), func(s string) bool { return s != "collection.completed" })); n != 2 {
		t.Fatalf("%d collection.completed webhooks, want one per deposit (2)", n)
	}
}

// A payer pays with stablecoins: picks the coin and the chain, sees the
// address, its QR code, the exact amount in the coin and the countdown, and
// the page follows the deposit through awaiting → confirming → paid. The
// link's currency is credited at the price the session was opened at.
func TestCheckoutCrypto(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("150.00", []string{"crypto"}, map[string]any{"allowedCryptoAssets": []string{"USDT"}})
	ctx := e.open(l)
	if got := eval[[]string](t, ctx, `[...document.querySelectorAll('#crypto-network option')].map(o => o.value)`); !slices.Equal(got, []string{"usdt_tron", "usdt_ethereum"}) {
		t.Fatalf("networks offered %v, want the USDT ones only", got)
	}
	do(t, ctx, chromedp.SetValue(chromedp.ID("crypto-network"), "usdt_tron"))
	submit(t, ctx)
	screen(t, ctx, "crypto")
	var api struct {
		PaymentLink struct {
			Sessions []struct {
				ID           string `json:"id"`
				OriginAmount string `json:"originAmount"`
				Instructions struct {
					Address string `json:"address"`
				} `json:"instructions"`
			} `json:"sessions"`
		} `json:"paymentLink"`
	}
	e.api("GET", "/v1/payment-links/"+l.ID, nil, &api, 200)
	s := api.PaymentLink.Sessions[0]
	wantText(t, ctx, "Pay with USDT", "Tron", "USDT on Tron (TRC-20)", s.Instructions.Address, s.OriginAmount)
	waitFor(t, ctx, `(() => { const i = document.querySelector('[data-panel=crypto] .qr img'); return i.complete && i.naturalWidth > 0 && i.getAttribute("src").endsWith("/qr.svg") })()`)
	step(t, ctx, "awaiting")
	screenshot(t, ctx, "address")

	simulate(t, ctx, "Pay in full")
	step(t, ctx, "confirming")
	screenshot(t, ctx, "confirming")
	screen(t, ctx, "paid")
	wantText(t, ctx, "Payment received", "Stablecoins", s.ID)
	if got := e.getLink(l.ID); got.Status != "paid" || got.TotalReceived != "150.00" {
		t.Fatalf("link after payment: %+v", got)
	}
	if b := e.balance(); b != "150.00" {
		t.Fatalf("balance %s, want 150.00", b)
	}
	e.waitHooks("collection.completed", "account.credited", "checkout_session.completed", "payment_link.paid")
}

// Attempts that end: a bank transfer the payer switches away from (the
// ledger fails it), a stablecoin session the sandbox clock expires, and a
// mobile money charge the payer declines; each time the page says why and
// offers the methods again, and the last method pays.
func TestCheckoutSessionsEnd(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("80.51", []string{"mobile_money", "bank_transfer", "crypto"}, nil)
	ctx := e.open(l)

	do(t, ctx, chromedp.Click(chromedp.ID("method-bank_transfer")))
	submit(t, ctx)
	screen(t, ctx, "bank_transfer")
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-panel=bank_transfer] [data-action=change]`)))
	waitFor(t, ctx, `!document.querySelector("[data-panel=pick]").hidden`) // over the open session
	do(t, ctx, chromedp.Click(chromedp.ID("method-crypto")), chromedp.SetValue(chromedp.ID("crypto-network"), "usdc_solana"))
	submit(t, ctx)
	screen(t, ctx, "crypto")

	e.api("POST", "/v1/simulations/advance-clock", map[string]any{"seconds": 91 * 60}, nil, 200)
	screen(t, ctx, "pick")
	wantText(t, ctx, "Your stablecoins payment timed out before it arrived")
	screenshot(t, ctx, "expired")

	// 80.51: the sandbox declines the prompt.
	do(t, ctx, chromedp.Click(chromedp.ID("method-mobile_money")), chromedp.SendKeys(chromedp.ID("mm-phone"), "233241234567"))
	submit(t, ctx)
	screen(t, ctx, "mobile_money")
	screen(t, ctx, "pick")
	wantText(t, ctx, "Your mobile money payment did not go through")
	screenshot(t, ctx, "declined")

	do(t, ctx, chromedp.Click(chromedp.ID("method-bank_transfer")))
	submit(t, ctx)
	screen(t, ctx, "bank_transfer")
	simulate(t, ctx, "Pay in full")
	screen(t, ctx, "paid")

	var statuses []string
	for _, s := range e.getLink(l.ID).Sessions {
		statuses = append(statuses, s.Method+":"+s.Status)
	}
	if want := []string{"bank_transfer:complete", "mobile_money:failed", "crypto:expired", "bank_transfer:failed"}; !slices.Equal(statuses, want) {
		t.Fatalf("sessions newest first %v, want %v", statuses, want)
	}
	// Every event is recorded. Those the ledger stamps with the advanced
	// sandbox clock (checkout_session.*, payment_link.*) are delivered only
	// once real time reaches that stamp, so the receiver is asked for the
	// others, and for the switch, which came before the clock moved.
	if got, want := e.eventTypes(), []string{"account.credited", "checkout_session.completed", "checkout_session.expired",
		"checkout_session.failed", "checkout_session.failed", "collection.completed", "collection.failed", "collection.pending", "payment_link.paid"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	e.waitHooks("checkout_session.failed", "collection.pending", "collection.failed", "collection.completed", "account.credited")
}

// eventTypes lists the types of the organization's events, sorted.
func (e *checkoutEnv) eventTypes() []string {
	e.t.Helper()
	var body struct {
		Data []struct {
			EventType string `json:"eventType"`
		} `json:"data"`
	}
	e.api("GET", "/v1/webhooks/events?limit=100", nil, &body, 200)
	var out []string
	for _, ev := range body.Data {
		if ev.EventType != "webhook.test" {
			out = append(out, ev.EventType)
		}
	}
	slices.Sort(out)
	return out
}

// A paid, an expired, a closed and an unknown link each have their screen.
func TestCheckoutLinkStates(t *testing.T) {
	e := newCheckoutEnv(t)
	paid := e.link("10.00", []string{"bank_transfer"}, nil)
	var opened struct {
		CheckoutSession struct {
			ID string `json:"id"`
		} `json:"checkoutSession"`
	}
	e.api("POST", "/v1/payment-links/"+paid.ID+"/sessions", map[string]any{"method": "bank_transfer"}, &opened, 201)
	e.api("POST", "/v1/simulations/checkout-deposit", map[string]any{"checkoutSessionId": opened.CheckoutSession.ID, "externalReference": "paid-1"}, nil, 201)
	closed := e.link("11.00", []string{"bank_transfer"}, nil)
	e.api("PATCH", "/v1/payment-links/"+closed.ID, map[string]any{"status": "closed"}, nil, 200)
	expired := e.link("12.00", []string{"bank_transfer"}, map[string]any{"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	e.api("POST", "/v1/simulations/advance-clock", map[string]any{"seconds": 2 * 3600}, nil, 200)
	waitUntil(t, 10*time.Second, "the link's expiry", func() bool { return e.getLink(expired.ID).Status == "expired" })

	ctx := e.open(paid)
	screen(t, ctx, "paid")
	wantText(t, ctx, "Payment received", "GHS 10.00", "Bank transfer", opened.CheckoutSession.ID, "Return to Zouk Inc.")
	screenshot(t, ctx, "paid")
	if loc := eval[string](t, ctx, `location.href`); loc != paid.URL {
		t.Fatalf("an already paid link redirected at once to %s", loc)
	}

	do(t, ctx, chromedp.Navigate(expired.URL))
	screen(t, ctx, "expired")
	wantText(t, ctx, "This payment link has expired", "Zouk Inc.")
	screenshot(t, ctx, "expired")

	do(t, ctx, chromedp.Navigate(closed.URL))
	screen(t, ctx, "closed")
	wantText(t, ctx, "This payment link is closed")
	screenshot(t, ctx, "closed")

	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(strings.TrimSuffix(paid.URL, paid.ID)+"pl_doesnotexist00000000"))
	if err != nil || resp.Status != 404 {
		t.Fatalf("unknown link: %v %+v", err, resp)
	}
	wantText(t, ctx, "Payment link not found", "ask the merchant for a new link")
	screenshot(t, ctx, "unknown")
}

// On a phone's screen the page fits its width (nothing scrolls sideways),
// whatever the merchant's texts, and its controls are large enough to tap.
func TestCheckoutPhoneWidth(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("1250.00", []string{"mobile_money", "bank_transfer", "crypto"}, map[string]any{
		"title":        "Catering for the Asante–Mensah wedding reception, Saturday 14 November (deposit)",
		"description":  "Deposit for 120 guests: jollof, kelewele, grilled tilapia and drinks. Balance due a week before the event.",
		"branding":     map[string]any{"businessName": "Zouk Catering & Events International Limited", "accentColor": "#f5c400"},
		"customFields": []map[string]any{{"name": "eventReference", "type": "text", "required": true}, {"name": "email", "type": "email", "required": false}},
	})
	ctx := newTab(t)
	do(t, ctx, chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile))
	do(t, ctx, chromedp.Navigate(l.URL))
	fits := func() {
		t.Helper()
		if w := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
			t.Fatalf("the page is %d px wide on a %d px screen", w[0], w[1])
		}
		small := eval[[]string](t, ctx, `[...document.querySelectorAll("button, input, select, a.button")].filter(el => el.offsetParent && el.type !== "radio" && el.type !== "hidden" && el.getBoundingClientRect().height < 32).map(el => el.outerHTML)`)
		if len(small) > 0 {
			t.Fatalf("controls too small to tap: %v", small)
		}
	}
	screen(t, ctx, "pick")
	fits()
	screenshot(t, ctx, "pick")
	// The accent is light: its text on the button is dark, for contrast.
	if c := eval[string](t, ctx, `getComputedStyle(document.querySelector("button.primary")).color`); c != "rgb(0, 0, 0)" {
		t.Fatalf("text on a yellow button is %s, want black", c)
	}
	do(t, ctx, chromedp.SendKeys(chromedp.ID("cf-0"), "EV-2026-1114"), chromedp.Click(chromedp.ID("method-crypto")))
	submit(t, ctx)
	screen(t, ctx, "crypto")
	fits()
	screenshot(t, ctx, "crypto")
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-panel=crypto] [data-action=change]`)), chromedp.Click(chromedp.ID("method-bank_transfer")))
	submit(t, ctx)
	screen(t, ctx, "bank_transfer")
	fits()
	screenshot(t, ctx, "bank_transfer")
	simulate(t, ctx, "Pay in full")
	screen(t, ctx, "paid")
	fits()
	screenshot(t, ctx, "paid")
}

// A payer who uses only the keyboard pays by bank transfer: the focus goes
// through the form in reading order, every focused control shows it, the
// arrow keys choose the method, Enter sends, the focus moves to the
// instructions, and the simulated deposit is a key press away.
func TestCheckoutKeyboardOnly(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("45.00", []string{"mobile_money", "bank_transfer"}, map[string]any{
		"customFields": []map[string]any{{"name": "orderNumber", "type": "text", "required": true}},
	})
	ctx := e.open(l)
	focused := func() string {
		t.Helper()
		return eval[string](t, ctx, `(el => el.id || el.textContent.trim())(document.activeElement)`)
	}
	var order []string
	for range 5 {
		do(t, ctx, chromedp.KeyEvent(kb.Tab))
		order = append(order, focused())
		if style := eval[string](t, ctx, `getComputedStyle(document.activeElement).outlineStyle + "/" + getComputedStyle(document.activeElement.matches("input[type=radio]") ? document.activeElement.nextElementSibling : document.activeElement).outlineStyle`); !strings.Contains(style, "solid") {
			t.Fatalf("%s shows no focus (%s)", order[len(order)-1], style)
		}
	}
	if want := []string{"cf-0", "method-mobile_money", "mm-network", "mm-phone", "Pay GHS 45.00"}; !slices.Equal(order, want) {
		t.Fatalf("focus order %v, want %v", order, want)
	}
	// Back to the field, type, then choose bank transfer with an arrow key.
	for range 4 {
		do(t, ctx, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	}
	if f := focused(); f != "cf-0" {
		t.Fatalf("shift-tab went to %s", f)
	}
	do(t, ctx, chromedp.KeyEvent("K-9"), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.ArrowDown))
	if f := focused(); f != "method-bank_transfer" {
		t.Fatalf("the arrow key moved to %s", f)
	}
	do(t, ctx, chromedp.KeyEvent(kb.Tab))
	if f := focused(); f != "Pay GHS 45.00" {
		t.Fatalf("after the methods the focus is on %s, want the pay button", f)
	}
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	screen(t, ctx, "bank_transfer")
	waitFor(t, ctx, `document.activeElement.id === "bank-title"`)
	for i := 0; !strings.HasPrefix(focused(), "Pay in full"); i++ {
		if i == 15 {
			t.Fatal("no simulated deposit button within 15 tabs")
		}
		do(t, ctx, chromedp.KeyEvent(kb.Tab))
	}
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	screen(t, ctx, "paid")
	waitFor(t, ctx, `document.activeElement.id === "paid-title"`)
	if got := e.getLink(l.ID); got.Status != "paid" {
		t.Fatalf("link %+v", got)
	}
}

// The merchant's branding and texts, and what the payer types, reach the
// page as text: none of them becomes markup, a style or a script.
func TestCheckoutInjection(t *testing.T) {
	e := newCheckoutEnv(t)
	const (
		name  = `<img src=x onerror="window.pwned=1">Zouk`
		title = `</title><script>window.pwned=2</script>Invoice`
		desc  = `"><svg onload="window.pwned=3"></svg>`
		field = `x"><script>window.pwned=4</script>`
		value = `</textarea><script>window.pwned=5</script>"'`
	)
	l := e.link("30.00", []string{"mobile_money"}, map[string]any{
		"title": title, "description": desc,
		"branding":     map[string]any{"businessName": name, "accentColor": `red;}</style><script>window.pwned=6</script>`},
		"customFields": []map[string]any{{"name": field, "type": "text\"><b>", "required": true}},
	})
	ctx := e.open(l)
	check := func() {
		t.Helper()
		if v := eval[string](t, ctx, `String(window.pwned)`); v != "undefined" {
			t.Fatalf("injected script ran: window.pwned = %s", v)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("img:not(.logo):not([data-bind-src]), svg, b, script:not([src]):not([type='application/json'])").length`); n != 0 {
			t.Fatalf("%d injected elements on the page: %s", n, eval[string](t, ctx, `[...document.querySelectorAll("img:not(.logo):not([data-bind-src]), svg, b, script:not([src]):not([type='application/json'])")].map(e => e.outerHTML).join(" ")`))
		}
		wantText(t, ctx, name, title, desc)
		if c := eval[string](t, ctx, `getComputedStyle(document.documentElement).getPropertyValue("--accent").trim()`); c != "#1e56b3" {
			t.Fatalf("accent %q, want the default for a colour that is not one", c)
		}
	}
	check()
	if got := eval[string](t, ctx, `document.title`); !strings.Contains(got, title) {
		t.Fatalf("title %q", got)
	}
	// The form sent without the page's script (a plain form post) comes
	// back with the payer's value in its field, as typed, and an error.
	do(t, ctx, chromedp.SendKeys(chromedp.ID("cf-0"), value), chromedp.SendKeys(chromedp.ID("mm-phone"), "12"))
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("form[data-form=pay]").submit()`))
	waitFor(t, ctx, `document.readyState === "complete" && document.getElementById("mm-phone-error").textContent !== ""`)
	check()
	if got := eval[string](t, ctx, `document.getElementById("cf-0").value`); got != value {
		t.Fatalf("the field holds %q, want %q", got, value)
	}
	wantText(t, ctx, "This field must be 8 to 15 digits")
	screenshot(t, ctx, "form-error")
}

// Without JavaScript the page still shows the amount and, once the payer
// sends the form, the payment instructions; switching method works too.
func TestCheckoutWithoutJavaScript(t *testing.T) {
	e := newCheckoutEnv(t)
	l := e.link("64.00", []string{"bank_transfer", "crypto"}, nil)
	ctx := newTab(t)
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(l.URL))
	wantText(t, ctx, "Invoice #1042", "GHS", "64.00", "Choose how to pay")
	do(t, ctx, chromedp.Click(chromedp.ID("method-bank_transfer")))
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil,
		chromedp.Click(chromedp.CSS(`form[data-form=pay] button[type=submit]`)))); err != nil {
		t.Fatal(err)
	}
	sess := e.getLink(l.ID).Sessions
	if len(sess) != 1 {
		t.Fatalf("sessions %+v", sess)
	}
	wantText(t, ctx, "Pay by bank transfer", "Sandbox Pooled Bank", "64.00", sess[0].ID, "Time left to pay")
	screenshot(t, ctx, "bank_transfer")

	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil,
		chromedp.Click(chromedp.CSS(`[data-panel=bank_transfer] [data-action=change]`)))); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Click(chromedp.ID("method-crypto")), chromedp.SetValue(chromedp.ID("crypto-network"), "usdc_base"))
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil,
		chromedp.Click(chromedp.CSS(`form[data-form=pay] button[type=submit]`)))); err != nil {
		t.Fatal(err)
	}
	wantText(t, ctx, "Pay with USDC", "Base", "USDC on Base")
	if ok := eval[bool](t, ctx, `(i => i.complete && i.naturalWidth > 0)(document.querySelector("[data-panel=crypto] .qr img"))`); !ok {
		t.Fatal("no QR code without JavaScript")
	}
	if got := e.getLink(l.ID).Sessions; len(got) != 2 || got[1].Status != "failed" {
		t.Fatalf("switching did not end the bank transfer: %+v", got)
	}
	screenshot(t, ctx, "crypto")
}
