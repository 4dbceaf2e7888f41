package http_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	api "payments/http"
	"payments/ledger"
	"payments/rails"
)

// quickTiming settles the simulated rails in milliseconds, so an order's
// whole life runs through the real driver in a test.
var quickTiming = rails.SandboxTiming{
	SubmitLatency:     time.Millisecond,
	Settlement:        10 * time.Millisecond,
	Timeout:           30 * time.Millisecond,
	DelayedCompletion: 50 * time.Millisecond,
	CustomerTimeout:   50 * time.Millisecond,
}

func (s *stack) orderCreate(body string) map[string]any {
	s.t.Helper()
	r := s.do("POST", "/v1/orders", s.key, body)
	s.mustStatus(r, 201)
	return r.json(s.t)["order"].(map[string]any)
}

func (s *stack) orderDeposit(body string) map[string]any {
	s.t.Helper()
	r := s.do("POST", "/v1/simulations/order-deposit", s.key, body)
	s.mustStatus(r, 201)
	return r.json(s.t)["simulation"].(map[string]any)["order"].(map[string]any)
}

// orderSettle polls the order until it leaves its in-flight statuses.
func (s *stack) orderSettle(id string) map[string]any {
	s.t.Helper()
	return s.settle("order", "/v1/orders/"+id, "completed", "failed", "expired", "underpaid")
}

// balances maps currency to total balance, as GET /v1/accounts shows them.
func (s *stack) orderBalances() map[string]string {
	s.t.Helper()
	out := map[string]string{}
	for _, a := range s.do("GET", "/v1/accounts", s.key, nil).json(s.t)["data"].([]any) {
		a := a.(map[string]any)
		out[a["currency"].(string)] = a["totalBalance"].(string)
	}
	return out
}

// entries lists the ledger entries of the balance in currency, oldest
// first, as "type amount".
func (s *stack) orderEntries(currency string) []string {
	s.t.Helper()
	var id string
	for _, a := range s.do("GET", "/v1/accounts", s.key, nil).json(s.t)["data"].([]any) {
		if a := a.(map[string]any); a["currency"] == currency {
			id = a["id"].(string)
		}
	}
	if id == "" {
		return nil
	}
	var out []string
	for _, e := range s.do("GET", "/v1/accounts/"+id+"/ledger?limit=100", s.key, nil).json(s.t)["data"].([]any) {
		e := e.(map[string]any)
		out = append([]string{e["type"].(string) + " " + e["amount"].(string)}, out...)
	}
	return out
}

// orderEvents lists the types of the order.* events of an order, in order.
func (s *stack) orderEvents(id string) []string {
	var out []string
	{
		st := s.sys.Reader()
		for seq := uint64(1); seq <= st.EventCount(); seq++ {
			if ev, _ := st.EventAt(seq); ev.ResourceID == id {
				out = append(out, ev.Type)
			}
		}
	}
	return out
}

// Each instruction type's full life over real HTTP, through the actors,
// the Raft log and the sandbox rails: the order ends completed, its legs
// completed, the balances hold only what the rules leave there, and every
// transition emitted its event.
func TestOrderLivesOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{timing: quickTiming, rateLimit: 1000})
	completed := []string{ledger.EventOrderAwaitingFunds, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing, ledger.EventOrderCompleted}

	// Crypto: seen, confirmed, converted, paid out.
	o := st.orderCreate(`{"from":{"code":"usdt_tron","currency":"USDT","amount":100},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374"},"externalReference":"crypto"}`)
	crypto := o["id"].(string)
	if o["rate"] != "15.444" || o["expectedAmount"] != "100.000000" || o["instructions"].(map[string]any)["type"] != "crypto" {
		t.Fatalf("crypto order %v", o)
	}
	st.orderDeposit(fmt.Sprintf(`{"orderId":%q,"outcome":"unconfirmed"}`, crypto))
	st.orderDeposit(fmt.Sprintf(`{"orderId":%q}`, crypto))
	o = st.orderSettle(crypto)
	if o["status"] != "completed" || o["completedAt"] == nil {
		t.Fatalf("crypto order ended %v", o)
	}
	want := slices.Insert(slices.Clone(completed), 1, ledger.EventOrderAwaitingConfirm)
	if got := st.orderEvents(crypto); !slices.Equal(got, want) {
		t.Fatalf("crypto events %v, want %v", got, want)
	}
	p := st.do("GET", "/v1/payouts/"+o["payoutId"].(string), st.key, nil).json(t)["payout"].(map[string]any)
	c := st.do("GET", "/v1/collections/"+o["collectionId"].(string), st.key, nil).json(t)["collection"].(map[string]any)
	if p["status"] != "completed" || p["to"].(map[string]any)["amount"] != "1529.10" || c["status"] != "completed" || c["type"] != "crypto" {
		t.Fatalf("legs: payout %v, collection %v", p, c)
	}
	if got, want := st.orderEntries("USDT"), []string{"collection_credit 100.000000", "collection_fee_debit -0.990099", "conversion_debit -99.009901"}; !slices.Equal(got, want) {
		t.Fatalf("USDT entries %v, want %v", got, want)
	}
	if got, want := st.orderEntries("GHS"), []string{"conversion_credit 1529.10", "payout_debit -1529.10"}; !slices.Equal(got, want) {
		t.Fatalf("GHS entries %v, want %v", got, want)
	}

	// Bank: a transfer into the virtual account, paid out in the same currency.
	o = st.orderCreate(`{"from":{"code":"gh_ghipss","currency":"GHS"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374","amount":"500.00"},"externalReference":"bank"}`)
	bank := o["id"].(string)
	if in := o["instructions"].(map[string]any); in["type"] != "virtual_account" || in["accountName"] != "Golden Org" {
		t.Fatalf("bank instructions %v", in)
	}
	st.orderDeposit(fmt.Sprintf(`{"orderId":%q,"amount":"505.00"}`, bank))
	if o = st.orderSettle(bank); o["status"] != "completed" {
		t.Fatalf("bank order ended %v", o)
	}
	if got := st.orderEvents(bank); !slices.Equal(got, completed) {
		t.Fatalf("bank events %v", got)
	}

	// Mobile money: the prompt is the collection leg; the driver runs it,
	// and the payout it starts, to the end.
	o = st.orderCreate(`{"from":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"200"},"to":{"code":"usdc_solana","currency":"USDC","accountNumber":"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"},"externalReference":"mobile"}`)
	mobile := o["id"].(string)
	if o["collectionId"] == nil || o["expiresAt"] != nil || o["instructions"].(map[string]any)["type"] != "mobile_money" {
		t.Fatalf("mobile order %v", o)
	}
	if o = st.orderSettle(mobile); o["status"] != "completed" || o["receivedAmount"] != "200.00" { // from.amount: the customer sends exactly this
		t.Fatalf("mobile order ended %v", o)
	}
	if got := st.orderEvents(mobile); !slices.Equal(got, completed) {
		t.Fatalf("mobile events %v", got)
	}
	var titles []string
	for _, e := range o["timeline"].([]any) {
		titles = append(titles, e.(map[string]any)["title"].(string))
	}
	wantTitles := []string{"Order created", "Collection: Created", "Awaiting funds", "Collection: Completed", "Funds received",
		"Payout: Created", "Processing payout", "Payout: Processing", "Payout: Completed", "Order completed"}
	if !slices.Equal(titles, wantTitles) {
		t.Fatalf("timeline %v\nwant %v", titles, wantTitles)
	}

	// The order.* events render as webhook payloads: the order as its GET
	// shows it at that moment.
	var payload []byte
	{
		s := st.sys.Reader()
		for seq := s.EventCount(); seq > 0 && payload == nil; seq-- {
			if ev, _ := s.EventAt(seq); ev.Type == ledger.EventOrderCompleted && ev.ResourceID == mobile {
				var err error
				if payload, err = api.EventPayload(ev); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var ev struct {
		Event string         `json:"event"`
		Data  map[string]any `json:"data"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil || ev.Event != "order.completed" || ev.Data["id"] != mobile ||
		ev.Data["status"] != "completed" || len(ev.Data["timeline"].([]any)) != len(wantTitles) {
		t.Fatalf("order.completed payload %s: %v", payload, err)
	}

	// Every order paid out exactly what it took in, less its fee.
	if b := st.orderBalances(); b["USDT"] != "0.000000" || b["GHS"] != "0.00" || b["USDC"] != "0.000000" {
		t.Fatalf("balances %v", b)
	}
	st.checkLedger()
}

// Over- and under-payment, expiry and failure over real HTTP, each ending
// in its state with the money where the rules put it.
func TestOrderOutcomesOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{timing: quickTiming, rateLimit: 1000})

	// Overpaid: 150 for 100 expected (from.amount is what the customer
	// sends, fee included); 50 USDT stay, the payout completes.
	over := st.orderCreate(`{"from":{"code":"usdt_tron","currency":"USDT","amount":100},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374"},"externalReference":"over"}`)["id"].(string)
	st.orderDeposit(fmt.Sprintf(`{"orderId":%q,"amount":150}`, over))
	if o := st.orderSettle(over); o["status"] != "completed" || o["receivedAmount"] != "150.000000" {
		t.Fatalf("overpaid order ended %v", o)
	}
	want := []string{ledger.EventOrderAwaitingFunds, ledger.EventOrderOverpaid, ledger.EventOrderProcessing, ledger.EventOrderCompleted}
	if got := st.orderEvents(over); !slices.Equal(got, want) {
		t.Fatalf("overpaid events %v", got)
	}

	// Underpaid: everything received stays on the balance, no fee, no payout.
	under := st.orderCreate(`{"from":{"code":"usdt_tron","currency":"USDT","amount":100},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374"},"externalReference":"under"}`)["id"].(string)
	st.orderDeposit(fmt.Sprintf(`{"orderId":%q,"amount":"60"}`, under))
	if o := st.orderSettle(under); o["status"] != "underpaid" || o["payoutId"] != nil {
		t.Fatalf("underpaid order %v", o)
	}
	if b := st.orderBalances(); b["USDT"] != "110.000000" || b["GHS"] != "0.00" {
		t.Fatalf("balances after over- and underpayment %v", b)
	}

	// The payout leg is rejected (to.amount ending in .01): the order fails
	// and the converted amount is refunded to the GHS balance.
	failing := st.orderCreate(`{"from":{"code":"gh_ghipss","currency":"GHS"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374","amount":"100.01"},"externalReference":"payout-fails"}`)["id"].(string)
	st.orderDeposit(fmt.Sprintf(`{"orderId":%q}`, failing))
	if o := st.orderSettle(failing); o["status"] != "failed" || o["statusMessage"] == nil {
		t.Fatalf("order with a rejected payout %v", o)
	}

	// The prompt is rejected (expected 50.01): the order fails, nothing moves.
	prompt := st.orderCreate(`{"from":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"50.01"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374"},"externalReference":"prompt-fails"}`)
	if prompt["expectedAmount"] != "50.01" {
		t.Fatalf("expected %v", prompt["expectedAmount"])
	}
	if o := st.orderSettle(prompt["id"].(string)); o["status"] != "failed" || o["payoutId"] != nil {
		t.Fatalf("order with a rejected prompt %v", o)
	}
	if b := st.orderBalances(); b["GHS"] != "100.01" {
		t.Fatalf("GHS balance %v after the failures, want the refunded 100.01", b["GHS"])
	}

	// Expiry on the organization's clock; a deposit afterwards is refused.
	late := st.orderCreate(`{"from":{"code":"usdt_tron","currency":"USDT","amount":10},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374"},"externalReference":"late"}`)["id"].(string)
	st.mustStatus(st.do("POST", "/v1/simulations/advance-clock", st.key, `{"seconds":14399}`), 200)
	if o := st.do("GET", "/v1/orders/"+late, st.key, nil).json(t)["order"].(map[string]any); o["status"] != "awaiting_funds" {
		t.Fatalf("expired early: %v", o)
	}
	st.mustStatus(st.do("POST", "/v1/simulations/advance-clock", st.key, `{"seconds":1}`), 200)
	if o := st.orderSettle(late); o["status"] != "expired" {
		t.Fatalf("order did not expire: %v", o)
	}
	r := st.do("POST", "/v1/simulations/order-deposit", st.key, fmt.Sprintf(`{"orderId":%q}`, late))
	st.mustStatus(r, 400)
	if got := st.orderEvents(late); !slices.Equal(got, []string{ledger.EventOrderAwaitingFunds, ledger.EventOrderExpired}) {
		t.Fatalf("expiry events %v", got)
	}
	if b := st.orderBalances(); b["USDT"] != "110.000000" || b["GHS"] != "100.01" {
		t.Fatalf("final balances %v", b)
	}
	st.checkLedger()
}
