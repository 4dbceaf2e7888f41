package http_test

import (
	"fmt"
	"strings"
	"testing"
)

// Deposits under one externalReference into two orders at once, each on
// its own connection: one deposit is made, exactly one caller is told it
// made it (201), the others asking for the same deposit get it back (200,
// idempotent-replayed), those asking for the other order are refused as a
// duplicate naming the order that got the funds, and only that order
// received anything.
func TestConcurrentOrderDepositReferenceOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1000})
	var orders [2]string
	for i := range orders {
		o := st.orderCreate(fmt.Sprintf(`{"from":{"code":"gh_ghipss","currency":"GHS"},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233559630374","amount":"500.00"},"externalReference":"inv-%d"}`, i))
		orders[i] = o["id"].(string)
	}

	const n = 24
	type answer struct {
		order    string // the order asked for
		status   int
		replayed bool
		amount   string // of a deposit answered
		existing string // of a duplicate
	}
	answers := together(st, n, func(i int, own *stack) {
		own.mustStatus(own.do("GET", "/v1/orders/"+orders[i%2], st.key, nil), 200)
	}, func(i int, own *stack) answer {
		order := orders[i%2]
		r := own.do("POST", "/v1/simulations/order-deposit", st.key, fmt.Sprintf(`{"orderId":%q,"externalReference":"dep-1"}`, order))
		body := r.json(t)
		a := answer{order: order, status: r.status, replayed: r.header["idempotent-replayed"] == "true"}
		if s, ok := body["simulation"].(map[string]any); ok {
			a.amount, _ = s["amount"].(string)
		} else if d, ok := body["details"].(map[string]any); ok && body["error"] == "duplicate" {
			a.existing, _ = d["existingId"].(string)
		}
		return a
	})
	var all []answer
	winner := ""
	for _, a := range answers {
		all = append(all, a)
		if a.status == 201 {
			if winner != "" {
				t.Fatalf("two deposits made: %v", all)
			}
			winner = a.order
		}
	}
	if winner == "" {
		t.Fatalf("no deposit made: %v", all)
	}
	for _, a := range all {
		switch {
		case a.order == winner && a.status == 201 && !a.replayed && a.amount == "505.00":
		case a.order == winner && a.status == 200 && a.replayed && a.amount == "505.00":
		case a.order != winner && a.status == 409 && a.existing == winner:
		default:
			t.Errorf("answer %+v (the deposit went to %s)", a, winner)
		}
	}
	for _, id := range orders {
		o := st.do("GET", "/v1/orders/"+id, st.key, nil).json(t)["order"].(map[string]any)
		want := any(nil)
		if id == winner {
			want = "505.00"
		}
		if o["receivedAmount"] != want {
			t.Fatalf("order %s received %v, want %v", id, o["receivedAmount"], want)
		}
	}
	credits := 0
	for _, e := range st.orderEntries("GHS") {
		if strings.HasPrefix(e, "collection_credit ") {
			credits++
		}
	}
	if credits != 1 {
		t.Fatalf("%d collection credits on the GHS balance, want the one deposit's", credits)
	}
}
