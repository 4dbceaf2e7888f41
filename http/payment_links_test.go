package http_test

import (
	"fmt"
	"testing"
	"time"

	"payments/ledger"
	"payments/rails"
)

// checkoutFastTiming lets the sandbox rail settle at once, so that a mobile money
// charge runs through the real driver in a few milliseconds.
var checkoutFastTiming = rails.SandboxTiming{SubmitLatency: time.Millisecond, Settlement: time.Millisecond,
	Timeout: time.Millisecond, DelayedCompletion: time.Millisecond, CustomerTimeout: time.Millisecond}

func (s *stack) plCreate(amount, methods string) string {
	s.t.Helper()
	r := s.do("POST", "/v1/payment-links", s.key, fmt.Sprintf(
		`{"email":"ama@example.com","amount":%q,"currency":"GHS","title":"Invoice","allowedMethods":%s}`, amount, methods))
	s.mustStatus(r, 201)
	return r.json(s.t)["paymentLink"].(map[string]any)["id"].(string)
}

func (s *stack) plSession(link, body string) map[string]any {
	s.t.Helper()
	r := s.do("POST", "/v1/payment-links/"+link+"/sessions", s.key, body)
	s.mustStatus(r, 201)
	return r.json(s.t)["checkoutSession"].(map[string]any)
}

func (s *stack) plGet(id string) map[string]any {
	s.t.Helper()
	r := s.do("GET", "/v1/payment-links/"+id, s.key, nil)
	s.mustStatus(r, 200)
	return r.json(s.t)["paymentLink"].(map[string]any)
}

// plAwait polls a link until its newest session has ended: the driver
// settles mobile money charges on its own goroutines.
func (s *stack) plAwait(id string) map[string]any {
	s.t.Helper()
	var l map[string]any
	var st any
	if !eventually(10*time.Second, func() bool {
		l = s.plGet(id)
		st = l["sessions"].([]any)[0].(map[string]any)["status"]
		return st == "complete" || st == "failed"
	}) {
		s.t.Fatalf("link %s: session still %v", id, st)
	}
	return l
}

func (s *stack) plDeposit(session, amount, ref string) map[string]any {
	s.t.Helper()
	body := fmt.Sprintf(`{"checkoutSessionId":%q,"externalReference":%q}`, session, ref)
	if amount != "" {
		body = fmt.Sprintf(`{"checkoutSessionId":%q,"amount":%q,"externalReference":%q}`, session, amount, ref)
	}
	r := s.do("POST", "/v1/simulations/checkout-deposit", s.key, body)
	s.mustStatus(r, 201)
	return r.json(s.t)["simulation"].(map[string]any)
}

func (s *stack) plBalance(currency string) ledger.Minor {
	var total ledger.Minor
	org := s.plOrg()
	{
		st := s.sys.Reader()
		for _, a := range st.Accounts(org) {
			if a.Currency == currency {
				total = a.Total
			}
		}
	}
	return total
}

func (s *stack) plOrg() string {
	s.t.Helper()
	r := s.do("GET", "/v1/organization", s.key, nil)
	s.mustStatus(r, 200)
	return r.json(s.t)["organization"].(map[string]any)["id"].(string)
}

// The whole life of payment links over the real stack: a session per
// method, each paid its own way, the link paid, the balance credited with
// exactly what arrived less the mobile money fee, the collection events
// fired, and the ledger's invariants holding.
func TestPaymentLinkLifeOverHTTP(t *testing.T) {
	s := newStack(t, stackOptions{timing: checkoutFastTiming})
	all := `["mobile_money","bank_transfer","crypto"]`

	// Mobile money through the collection rail: the default cents complete.
	mm := s.plCreate("40.00", all)
	sess := s.plSession(mm, `{"method":"mobile_money","code":"gh_mtn","accountNumber":"233241234567"}`)
	if sess["status"] != "processing" || sess["collectionId"] == nil {
		t.Fatalf("mobile money session %v", sess)
	}
	l := s.plAwait(mm)
	first := l["sessions"].([]any)[0].(map[string]any)
	if l["status"] != "paid" || l["totalReceived"] != "40.00" || first["status"] != "complete" {
		t.Fatalf("paid by mobile money: %v", l)
	}
	col := s.do("GET", "/v1/collections/"+first["collectionId"].(string), s.key, nil)
	s.mustStatus(col, 200)
	if c := col.json(t)["collection"].(map[string]any); c["status"] != "completed" || c["externalReference"] != first["id"] {
		t.Fatalf("collection %v", c)
	}

	// Cents 51: the payer declines; the session fails, the link stays
	// active, and the payer pays by bank transfer instead.
	declined := s.plCreate("40.51", all)
	s.plSession(declined, `{"method":"mobile_money","code":"gh_mtn","accountNumber":"233241234567"}`)
	l = s.plAwait(declined)
	if l["status"] != "active" || l["sessions"].([]any)[0].(map[string]any)["status"] != "failed" {
		t.Fatalf("declined: %v", l)
	}
	bank := s.plSession(declined, `{"method":"bank_transfer"}`)
	if d := s.plDeposit(bank["id"].(string), "", "bank-1"); d["amount"] != "40.51" {
		t.Fatalf("deposit %v", d)
	}
	if l = s.plGet(declined); l["status"] != "paid" || l["sessions"].([]any)[0].(map[string]any)["status"] != "complete" {
		t.Fatalf("paid by bank: %v", l)
	}

	// Stablecoins: USDT on Tron for a GHS link, in two instalments.
	coin := s.plCreate("100.00", all)
	cs := s.plSession(coin, `{"method":"crypto","code":"usdt_tron"}`)
	if cs["originCurrency"] != "USDT" || cs["destinationAmount"] != "100.00" {
		t.Fatalf("crypto session %v", cs)
	}
	s.plDeposit(cs["id"].(string), "1", "coin-1")
	if l = s.plGet(coin); l["status"] != "active" {
		t.Fatalf("after a first instalment: %v", l)
	}
	s.plDeposit(cs["id"].(string), "", "coin-2")
	if l = s.plGet(coin); l["status"] != "paid" || l["totalReceived"] != "100.00" {
		t.Fatalf("paid in USDT: %v", l)
	}

	// Over-payment by bank transfer is recorded.
	over := s.plCreate("10.00", all)
	ob := s.plSession(over, `{"method":"bank_transfer"}`)
	s.plDeposit(ob["id"].(string), "12.50", "over-1")
	if l = s.plGet(over); l["status"] != "paid" || l["overpaymentAmount"] != "2.50" || l["remaining"] != "0.00" {
		t.Fatalf("overpaid: %v", l)
	}

	mtn, _ := rails.DefaultCatalogue().Method("gh_mtn")
	fees, _ := mtn.Fees(rails.Collection)
	fee := fees.Fee(4000)
	want := 4000 - fee + 4051 + 10_000 + 1250
	if got := s.plBalance("GHS"); got != want {
		t.Fatalf("GHS balance %d, want %d", got, want)
	}
	org := s.plOrg()
	{
		st := s.sys.Reader()
		if err := st.Check(); err != nil {
			t.Fatal(err)
		}
		// Every checkout collection fired collection.completed and
		// account.credited.
		completed := st.Events(org, ledger.EventFilter{Type: ledger.EventCollectionCompleted}, ledger.CursorStart, 100)
		credited := st.Events(org, ledger.EventFilter{Type: ledger.EventAccountCredited}, ledger.CursorStart, 100)
		if len(completed.Items) != 5 || len(credited.Items) != 5 {
			t.Fatalf("%d collection.completed and %d account.credited events, want 5 each", len(completed.Items), len(credited.Items))
		}
	}
}

// Sessions and links expire on the sandbox clock, at once, without
// sleeping; an expired session takes no deposit and moves no money.
func TestCheckoutExpiryOverHTTP(t *testing.T) {
	s := newStack(t, stackOptions{})
	link := s.plCreate("25.00", `["bank_transfer"]`)
	sess := s.plSession(link, `{"method":"bank_transfer"}`)

	// 29 minutes: still open. One more: expired.
	s.mustStatus(s.do("POST", "/v1/simulations/advance-clock", s.key, `{"seconds":1740}`), 200)
	if st := s.plGet(link)["sessions"].([]any)[0].(map[string]any)["status"]; st != "awaiting_transfer" {
		t.Fatalf("session %v after 29 minutes", st)
	}
	s.mustStatus(s.do("POST", "/v1/simulations/advance-clock", s.key, `{"seconds":60}`), 200)
	if st := s.plGet(link)["sessions"].([]any)[0].(map[string]any)["status"]; st != "expired" {
		t.Fatalf("session %v after 30 minutes", st)
	}
	r := s.do("POST", "/v1/simulations/checkout-deposit", s.key, fmt.Sprintf(`{"checkoutSessionId":%q,"externalReference":"late"}`, sess["id"]))
	s.mustStatus(r, 400)
	if s.plBalance("GHS") != 0 {
		t.Fatal("a refused deposit moved money")
	}

	// A link with an expiresAt an hour ahead (on the organization's clock)
	// expires when the clock passes it.
	var now time.Time
	org := s.plOrg()
	now = time.UnixMilli(s.sys.Reader().OrgNow(org, s.sys.Now().UnixMilli()))
	r = s.do("POST", "/v1/payment-links", s.key, fmt.Sprintf(
		`{"email":"a@example.com","amount":5,"currency":"GHS","title":"Soon","allowedMethods":["bank_transfer"],"expiresAt":%q}`,
		now.Add(time.Hour).UTC().Format(time.RFC3339)))
	s.mustStatus(r, 201)
	soon := r.json(t)["paymentLink"].(map[string]any)["id"].(string)
	s.plSession(soon, `{"method":"bank_transfer"}`)
	s.mustStatus(s.do("POST", "/v1/simulations/advance-clock", s.key, `{"seconds":3601}`), 200)
	l := s.plGet(soon)
	if l["status"] != "expired" || l["sessions"].([]any)[0].(map[string]any)["status"] != "expired" {
		t.Fatalf("expired link %v", l)
	}
	r = s.do("POST", "/v1/payment-links/"+soon+"/sessions", s.key, `{"method":"bank_transfer"}`)
	s.mustStatus(r, 400)
	{
		st := s.sys.Reader()
		if err := st.Check(); err != nil {
			t.Fatal(err)
		}
	}
}
