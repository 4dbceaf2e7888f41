package http_test

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"payments/ledger"
	"payments/rails"
)

// payoutSettle polls a payout until it completes or fails.
func (s *stack) payoutSettle(id string) map[string]any {
	s.t.Helper()
	return s.settle("payout", "/v1/payouts/"+id, "completed", "failed")
}

// Cross-currency payouts over real HTTP, through the from-currency account
// actor, the Raft log and the sandbox rail driver: a completed one keeps
// exactly its debit, a failed one (to amount ending in .01, which the
// sandbox rail rejects) gives the USD balance back to the cent, and the
// ledger balances in every currency throughout.
func TestFXPayoutOutcomesOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{timing: rails.SandboxTiming{SubmitLatency: time.Millisecond, Settlement: 20 * time.Millisecond,
		Timeout: time.Hour, DelayedCompletion: time.Hour, CustomerTimeout: time.Hour}})
	st.fund(st.key, "USD", "100.00", "seed")

	create := func(amount, ref string) string {
		r := st.do("POST", "/v1/payouts", st.key, `{"from":{"currency":"USD"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":`+amount+`},"externalReference":"`+ref+`"}`)
		st.mustStatus(r, 201)
		return r.json(t)["payout"].(map[string]any)["id"].(string)
	}
	// 150.00 GHS at 15.444: 9.72 USD, fee 0.10, from.amount (the whole
	// debit) 9.82. 100.01 GHS: 6.48 USD, fee 0.06, debit 6.54.
	ok := create("150", "fx-ok")
	bad := create("100.01", "fx-bad")

	p := st.payoutSettle(ok)
	if p["status"] != "completed" || p["rate"] != "15.444" || p["from"].(map[string]any)["amount"] != "9.82" {
		t.Fatalf("completed payout: %v", p)
	}
	p = st.payoutSettle(bad)
	if p["status"] != "failed" || p["from"].(map[string]any)["amount"] != "6.54" || p["fee"].(map[string]any)["amount"] != "0.06" {
		t.Fatalf("failed payout: %v", p)
	}
	bal := st.orderBalances()
	if bal["USD"] != "90.18" {
		t.Fatalf("USD after the refund: %s, want 90.18 (100.00 − 9.72 − 0.10)", bal["USD"])
	}
	if _, has := bal["GHS"]; has && bal["GHS"] != "0.00" {
		t.Fatalf("GHS balance moved: %s", bal["GHS"])
	}
	// The cross-currency debit shows as the reference's payout_debit.
	want := []string{"manual_credit 100.00", "payout_debit -9.72", "fee_debit -0.10", "payout_debit -6.48", "fee_debit -0.06",
		"payout_refund 6.48", "fee_refund 0.06"}
	if got := st.orderEntries("USD"); !slices.Equal(got, want) {
		t.Fatalf("USD entries %v, want %v", got, want)
	}
	{
		s := st.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}

	// The webhook events carry the rate and the from side.
	r := st.do("GET", "/v1/webhooks/events", st.key, nil)
	st.mustStatus(r, 200)
	seen := map[string]bool{}
	for _, e := range r.json(t)["data"].([]any) {
		e := e.(map[string]any)
		var payload struct {
			Event string `json:"event"`
			Data  struct {
				ID   string `json:"id"`
				Rate string `json:"rate"`
				From struct {
					Currency string `json:"currency"`
				} `json:"from"`
			} `json:"data"`
		}
		raw, _ := json.Marshal(e["payload"])
		if err := json.Unmarshal(raw, &payload); err != nil {
			t.Fatal(err)
		}
		if payload.Data.ID == ok || payload.Data.ID == bad {
			if payload.Data.Rate != "15.444" || payload.Data.From.Currency != "USD" {
				t.Fatalf("event %s: %s", payload.Event, raw)
			}
			seen[payload.Event] = true
		}
	}
	if !seen[ledger.EventPayoutCompleted] || !seen[ledger.EventPayoutFailed] {
		t.Fatalf("events seen: %v", seen)
	}
}

// Concurrent cross-currency payouts against a USD balance that covers
// exactly five of them: the USD account actor's reservations accept five,
// not fewer and not more, and the balance ends at zero.
func TestFXPayoutReservationsOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{})
	st.fund(st.key, "USD", "49.10", "seed") // 5 × (9.72 + 0.10)
	codes := make(chan int, 10)
	for i := range 10 {
		go func() {
			r := st.do("POST", "/v1/payouts", st.key, `{"from":{"currency":"USD"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":150},"externalReference":"c-`+string(rune('a'+i))+`"}`)
			codes <- r.status
		}()
	}
	count := map[int]int{}
	for range 10 {
		count[<-codes]++
	}
	if count[201] != 5 || count[422] != 5 {
		t.Fatalf("statuses %v, want five 201 and five 422", count)
	}
	if got := st.orderBalances()["USD"]; got != "0.00" {
		t.Fatalf("USD %s, want 0.00", got)
	}
	{
		s := st.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// switchableRates is the sandbox table until it is switched off, when every
// cross-currency pair is unavailable: a rate provider's outage.
type switchableRates struct{ down atomic.Bool }

func (r *switchableRates) Rate(from, to string) (rails.Rate, error) {
	if r.down.Load() && from != to {
		return rails.Rate{}, rails.ErrRateUnavailable
	}
	return rails.SandboxRates{SpreadBasisPoints: 100}.Rate(from, to)
}

// A retried cross-currency payout is a replay at the price it was created
// at, even while the rate source is down; a changed retry needs a new price,
// so it gets 503 rate_unavailable then, and nothing moves.
func TestFXPayoutReplayKeepsItsPrice(t *testing.T) {
	rates := &switchableRates{}
	st := newStack(t, stackOptions{timing: frozenTiming, rates: rates})
	st.fund(st.key, "USD", "100.00", "seed")
	for _, body := range []string{
		`{"from":{"currency":"USD"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"150"},"externalReference":"fx-to"}`,
		`{"from":{"currency":"USD","amount":"5.00"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567"},"externalReference":"fx-from"}`,
	} {
		rates.down.Store(false)
		first := st.do("POST", "/v1/payouts", st.key, body)
		st.mustStatus(first, 201)
		rates.down.Store(true)
		again := st.do("POST", "/v1/payouts", st.key, body)
		st.mustStatus(again, 200)
		if again.header["idempotent-replayed"] != "true" || string(again.body) != string(first.body) {
			t.Fatalf("replay during the outage:\n%s\nwant\n%s", again.body, first.body)
		}
	}
	before := st.orderBalances()["USD"]
	changed := st.do("POST", "/v1/payouts", st.key,
		`{"from":{"currency":"USD"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"151"},"externalReference":"fx-to"}`)
	st.mustStatus(changed, 503)
	if e := changed.json(t)["error"]; e != "rate_unavailable" {
		t.Fatalf("changed retry during the outage: %s", changed.body)
	}
	if after := st.orderBalances()["USD"]; after != before {
		t.Fatalf("USD moved from %s to %s", before, after)
	}
}
