package main

import (
	"testing"
)

// A conversion's externalReference survives kill -9 and a restart: a
// retry with the same reference and quote answers the original conversion
// (200), the reference with another quote is a duplicate (409), and the
// balances moved once.
func TestConversionReferenceAcrossRestart(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	p := startReady(t, dir)
	fundGHS(t, p.addr, "100.00", "seed")
	type conversionBody struct {
		Conversion struct {
			ID                string `json:"id"`
			QuoteID           string `json:"quoteId"`
			ExternalReference string `json:"externalReference"`
		} `json:"conversion"`
	}
	type errorBody struct {
		Error   string `json:"error"`
		Details struct {
			ExistingID string `json:"existingId"`
		} `json:"details"`
	}
	quote := func(addr string) string {
		t.Helper()
		var q struct {
			Quote struct {
				ID string `json:"id"`
			} `json:"quote"`
		}
		st, err := call(addr, "POST", "/v1/conversions/quote",
			map[string]any{"from": map[string]any{"amount": "10.00", "currency": "GHS"}, "to": map[string]any{"currency": "USD"}}, &q)
		if err != nil || st != 201 {
			t.Fatalf("quote: %d %v", st, err)
		}
		return q.Quote.ID
	}
	first := quote(p.addr)
	var made conversionBody
	if st, err := call(p.addr, "POST", "/v1/conversions", map[string]any{"quoteId": first, "externalReference": "fx-restart"}, &made); err != nil || st != 201 {
		t.Fatalf("execute: %d %v", st, err)
	}

	p.kill()
	p = startReady(t, dir)

	var again conversionBody
	if st, err := call(p.addr, "POST", "/v1/conversions", map[string]any{"quoteId": first, "externalReference": "fx-restart"}, &again); err != nil || st != 200 ||
		again.Conversion.ID != made.Conversion.ID || again.Conversion.ExternalReference != "fx-restart" {
		t.Fatalf("retry after restart: %d %v %+v, want 200 with %s", st, err, again, made.Conversion.ID)
	}
	second := quote(p.addr)
	var dup errorBody
	if st, err := call(p.addr, "POST", "/v1/conversions", map[string]any{"quoteId": second, "externalReference": "fx-restart"}, &dup); err != nil || st != 409 ||
		dup.Error != "duplicate" || dup.Details.ExistingID != made.Conversion.ID {
		t.Fatalf("another quote under the reference: %d %v %+v", st, err, dup)
	}
	var acc struct {
		Data []struct {
			Currency     string `json:"currency"`
			TotalBalance string `json:"totalBalance"`
		} `json:"data"`
	}
	if st, err := call(p.addr, "GET", "/v1/accounts", nil, &acc); err != nil || st != 200 {
		t.Fatalf("accounts: %d %v", st, err)
	}
	for _, a := range acc.Data {
		if a.Currency == "GHS" && a.TotalBalance != "90.00" {
			t.Fatalf("GHS balance %s, want 90.00: converted more than once", a.TotalBalance)
		}
	}
}
