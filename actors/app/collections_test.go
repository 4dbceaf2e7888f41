package app_test

import (
	"testing"

	"payments/actors/app"
	"payments/ledger"
)

// A collection charges a mobile money wallet, priced with the method's
// collection fee; other methods are refused before anything is proposed.
func TestCreateCollection(t *testing.T) {
	h := startMoney(t, app.Config{})
	collection := func(ref, method, currency string, amount ledger.Minor) app.CollectionInput {
		return app.CollectionInput{ExternalReference: ref, Spec: ledger.CollectionSpec{
			Currency: currency, Amount: amount, Method: method, PayerNumber: "233241234567"}}
	}
	tests := []struct {
		name    string
		in      app.CollectionInput
		fee     ledger.Minor
		code    ledger.Code
		message string
	}{
		{name: "mobile money", in: collection("col-1", "gh_mtn", "GHS", 10_000), fee: 150},
		{name: "fee rounded half up", in: collection("col-2", "gh_mtn", "GHS", 1_033), fee: 15},
		{name: "a bank does not collect", in: collection("col-3", "gh_ghipss", "GHS", 10_000),
			code: ledger.CodeValidation, message: "Request validation failed: from.code gh_ghipss does not support collections"},
		{name: "crypto is not a wallet to charge", in: collection("col-4", "usdt_tron", "USDT", 10_000_000),
			code: ledger.CodeValidation, message: "Request validation failed: from.code must be a mobile money method: collections charge a payer's wallet"},
		{name: "another currency", in: collection("col-5", "gh_mtn", "KES", 10_000),
			code: ledger.CodeValidation, message: "Request validation failed: from.code gh_mtn moves GHS, not KES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.app.CreateCollection(h.caller(tt.name), tt.in)
			if !wantOutcome(t, r, tt.code, tt.message) {
				return
			}
			if col := r.Result.Collection; col.Fee != tt.fee || col.MethodType != ledger.MethodMobileMoney {
				t.Fatalf("collection fee %d type %q, want %d mobile_money", col.Fee, col.MethodType, tt.fee)
			}
		})
	}
	np := startMoney(t, app.Config{NoProvider: true})
	refusedWith(t, np.app.CreateCollection(np.caller("np"), collection("col-np", "gh_mtn", "GHS", 10_000)), ledger.CodeUnavailable, "")
}
