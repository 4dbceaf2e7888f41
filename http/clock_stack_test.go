package http_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

// After a sandbox clock advance, every resource the organization creates
// shows times on its clock: a payout, a conversion, an order and a payment
// link created together agree within a second, the clock's `now` and the
// events and ledger entries they made included; lists bounded by time find
// them at the shifted times, not at real ones.
func TestAdvanceClockPutsEveryResourceOnOneClock(t *testing.T) {
	st := newStack(t, stackOptions{})
	st.fund(st.key, "GHS", "1000.00", "fund-1")
	const advance = 10 * 24 * time.Hour
	before := time.Now()
	r := st.do("POST", "/v1/simulations/advance-clock", st.key, fmt.Sprintf(`{"seconds":%d}`, int64(advance/time.Second)))
	st.mustStatus(r, 200)
	orgNow := st.parseTime(r.json(t)["clock"].(map[string]any)["now"])
	if d := orgNow.Sub(before); d < advance-time.Second || d > advance+time.Minute {
		t.Fatalf("clock now %s is %s ahead of real time, want about %s", orgNow, d, advance)
	}

	created := map[string]time.Time{}
	r = st.do("POST", "/v1/payouts", st.key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"10.00"},"externalReference":"clock-payout"}`)
	st.mustStatus(r, 201)
	payout := r.json(t)["payout"].(map[string]any)
	created["payout"] = st.parseTime(payout["createdAt"])

	r = st.do("POST", "/v1/conversions/quote", st.key, `{"from":{"amount":"100.00","currency":"GHS"},"to":{"currency":"USD"}}`)
	st.mustStatus(r, 201)
	quote := r.json(t)["quote"].(map[string]any)
	created["quote"] = st.parseTime(quote["createdAt"])
	r = st.do("POST", "/v1/conversions", st.key, fmt.Sprintf(`{"quoteId":%q}`, quote["id"]))
	st.mustStatus(r, 201)
	conversion := r.json(t)["conversion"].(map[string]any)
	created["conversion"] = st.parseTime(conversion["createdAt"])

	order := st.orderCreate(`{"from":{"code":"usdt_tron","currency":"USDT","amount":10},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374"},"externalReference":"clock-order"}`)
	created["order"] = st.parseTime(order["createdAt"])

	link := st.plCreate("25.00", `["mobile_money"]`)
	r = st.do("GET", "/v1/payment-links/"+link, st.key, nil)
	st.mustStatus(r, 200)
	created["payment link"] = st.parseTime(r.json(t)["paymentLink"].(map[string]any)["createdAt"])

	// The payout's ledger entries.
	r = st.do("GET", "/v1/ledger?referenceId="+payout["id"].(string), st.key, nil)
	st.mustStatus(r, 200)
	entries := r.json(t)["data"].([]any)
	if len(entries) == 0 {
		t.Fatal("the payout booked no entries")
	}
	for i, e := range entries {
		created[fmt.Sprintf("ledger entry %d", i)] = st.parseTime(e.(map[string]any)["createdAt"])
	}
	// The events of the conversion and of the order.
	for _, id := range []any{conversion["id"], order["id"]} {
		r = st.do("GET", fmt.Sprintf("/v1/webhooks/events?resourceId=%s", id), st.key, nil)
		st.mustStatus(r, 200)
		events := r.json(t)["data"].([]any)
		if len(events) == 0 {
			t.Fatalf("no events of %s", id)
		}
		for _, ev := range events {
			ev := ev.(map[string]any)
			created[fmt.Sprintf("event %s", ev["eventType"])] = st.parseTime(ev["createdAt"])
		}
	}

	for name, at := range created {
		if d := at.Sub(orgNow).Abs(); d > time.Second {
			t.Errorf("%s created at %s, %s away from the organization's clock %s", name, at.Format(time.RFC3339Nano), d, orgNow.Format(time.RFC3339Nano))
		}
	}

	// Lists bounded by time read the clock the resources show: the
	// payout's entries lie after the shifted now less a minute, none of
	// them before real time plus an hour.
	ledgerCount := func(query string) int {
		r := st.do("GET", "/v1/ledger?referenceId="+payout["id"].(string)+"&"+query, st.key, nil)
		st.mustStatus(r, 200)
		return len(r.json(t)["data"].([]any))
	}
	from := url.QueryEscape(orgNow.Add(-time.Minute).UTC().Format(time.RFC3339Nano))
	realTo := url.QueryEscape(before.Add(time.Hour).UTC().Format(time.RFC3339Nano))
	if n := ledgerCount("from=" + from); n != len(entries) {
		t.Errorf("ledger from the shifted time lists %d of the payout's %d entries", n, len(entries))
	}
	if n := ledgerCount("to=" + realTo); n != 0 {
		t.Errorf("ledger up to real time lists %d of the payout's entries", n)
	}
	r = st.do("GET", "/v1/orders?from="+from, st.key, nil)
	st.mustStatus(r, 200)
	if data := r.json(t)["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != order["id"] {
		t.Errorf("orders from the shifted time: %v", data)
	}
}

func (s *stack) parseTime(v any) time.Time {
	s.t.Helper()
	str, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, str)
	if err != nil {
		s.t.Fatalf("timestamp %v: %v", v, err)
	}
	return at
}
