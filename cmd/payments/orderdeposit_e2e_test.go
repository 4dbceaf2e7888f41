package main

import (
	"testing"
)

// An order deposit's externalReference survives kill -9 and a restart: a
// retry with the same reference and body answers the original deposit
// (200) though the order no longer takes deposits, the reference with
// another body is a duplicate (409), and the order received once.
func TestOrderDepositReferenceAcrossRestart(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	p := startReady(t, dir)
	type orderBody struct {
		Order struct {
			ID             string  `json:"id"`
			ReceivedAmount *string `json:"receivedAmount"`
		} `json:"order"`
	}
	type depositBody struct {
		Simulation struct {
			OrderID           string `json:"orderId"`
			Amount            string `json:"amount"`
			ExternalReference string `json:"externalReference"`
		} `json:"simulation"`
	}
	var o orderBody
	if st, err := call(p.addr, "POST", "/v1/orders", map[string]any{
		"from":              map[string]any{"code": "gh_ghipss", "currency": "GHS"},
		"to":                map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233559630374", "amount": "500.00"},
		"externalReference": "inv-restart",
	}, &o); err != nil || st != 201 {
		t.Fatalf("order: %d %v", st, err)
	}
	deposit := map[string]any{"orderId": o.Order.ID, "externalReference": "dep-restart"}
	var made depositBody
	if st, err := call(p.addr, "POST", "/v1/simulations/order-deposit", deposit, &made); err != nil || st != 201 || made.Simulation.Amount != "505.00" {
		t.Fatalf("deposit: %d %v %+v", st, err, made)
	}

	p.kill()
	p = startReady(t, dir)

	var again depositBody
	if st, err := call(p.addr, "POST", "/v1/simulations/order-deposit", deposit, &again); err != nil || st != 200 || again.Simulation != made.Simulation {
		t.Fatalf("retry after restart: %d %v %+v, want 200 with %+v", st, err, again, made)
	}
	var dup struct {
		Error   string `json:"error"`
		Details struct {
			ExistingID string `json:"existingId"`
		} `json:"details"`
	}
	if st, err := call(p.addr, "POST", "/v1/simulations/order-deposit",
		map[string]any{"orderId": o.Order.ID, "amount": "600.00", "externalReference": "dep-restart"}, &dup); err != nil || st != 409 ||
		dup.Error != "duplicate" || dup.Details.ExistingID != o.Order.ID {
		t.Fatalf("another amount under the reference: %d %v %+v", st, err, dup)
	}
	var after orderBody
	if st, err := call(p.addr, "GET", "/v1/orders/"+o.Order.ID, nil, &after); err != nil || st != 200 ||
		after.Order.ReceivedAmount == nil || *after.Order.ReceivedAmount != "505.00" {
		t.Fatalf("order after: %d %v %+v", st, err, after)
	}
}
