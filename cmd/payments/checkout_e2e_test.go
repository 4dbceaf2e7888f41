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

	"github.com/chromedp/chromedp"
)

// End-to-end tests of the hosted checkout: a payer in headless Chromium on
// the page of a link the merchant made through the API, against the real
// binary, on the sandbox stack, with a webhook receiver on loopback.

// checkoutEnv is a server with a webhook receiver and a merchant site to
// return to.
type checkoutEnv struct {
	t        *testing.T
	p        *proc
	hooks    *hookReceiver
	merchant *httptest.Server
}

func newCheckoutEnv(t *testing.T, args ...string) *checkoutEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	e := &checkoutEnv{t: t, hooks: &hookReceiver{}}
	rcv := httptest.NewServer(e.hooks)
	t.Cleanup(rcv.Close)
	e.merchant = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "<!doctype html><title>Thanks</title><h1>Back at the merchant</h1>")
	}))
	t.Cleanup(e.merchant.Close)
	e.p = startServer(t, t.TempDir(), append([]string{"--sandbox-settlement", "300ms", "--webhook-timeout", "2s"}, args...)...)
	e.p.waitReady()
	// Ready means a leader is known; the bootstrap key commits just after.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := call(e.p.addr, "POST", "/v1/webhooks/endpoints",
			map[string]any{"url": rcv.URL + "/hook", "events": []string{"*"}}, nil)
		if err == nil && st == 201 {
			break
		}
		if st != 401 || time.Now().After(deadline) {
			t.Fatalf("create webhook endpoint: %d %v", st, err)
		}
	}
	return e
}

// api calls the API with the bootstrap key and wants status want.
func (e *checkoutEnv) api(method, path string, body, out any, want int) {
	e.t.Helper()
	st, err := call(e.p.addr, method, path, body, out)
	if err != nil || st != want {
		e.t.Fatalf("%s %s: %d %v, want %d", method, path, st, err, want)
	}
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
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := e.hooks.types()
		missing := false
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing = true
			}
		}
		if !missing {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("webhooks: got %v, want at least %v", got, want)
		}
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
