package app_test

import (
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/orders"
)

// An order is priced (the destination method's fee, the current rate),
// checked against both methods (each amount against the bounds of its own
// side), its account numbers checked by type, and its deposit
// instructions provisioned.
func TestCreateOrder(t *testing.T) {
	h := startMoney(t, app.Config{})
	h.rates.set("GHS", "NGN", "100")
	h.rates.set("NGN", "USD", "0.0006")
	order := func(ref string, from, to string, side ledger.Side, amount ledger.Minor) app.OrderInput {
		spec := orders.Spec{FromMethod: from, ToMethod: to, AmountSide: side, Amount: amount,
			FromCurrency: "GHS", ToCurrency: "GHS", ToAccountNumber: "+233241234567"}
		if from == "gh_mtn" {
			spec.FromAccountNumber = "233201234567"
		}
		if to == "ng_opay" {
			spec.ToCurrency, spec.ToAccountNumber = "NGN", "2348031234567"
		}
		return app.OrderInput{ExternalReference: ref, Spec: spec}
	}
	tests := []struct {
		name                  string
		in                    app.OrderInput
		fromAmount, toAmount  ledger.Minor
		fee                   ledger.Minor
		instructions          string
		code                  ledger.Code
		message               string
		toAccountNumberStored string
	}{
		{name: "mobile money, from side: the fee comes out", in: order("o-1", "gh_mtn", "gh_mtn", ledger.SideFrom, 10_100),
			fromAmount: 10_000, toAmount: 10_000, fee: 100, instructions: orders.InstructionsMobileMoney, toAccountNumberStored: "233241234567"},
		{name: "bank origin, to side: the fee on top", in: order("o-2", "gh_ghipss", "gh_mtn", ledger.SideTo, 10_000),
			fromAmount: 10_000, toAmount: 10_000, fee: 100, instructions: orders.InstructionsVirtualAccount, toAccountNumberStored: "233241234567"},
		{name: "cross-currency at the current rate", in: order("o-3", "gh_mtn", "ng_opay", ledger.SideTo, 1_000_000),
			fromAmount: 10_000, toAmount: 1_000_000, fee: 100, instructions: orders.InstructionsMobileMoney, toAccountNumberStored: "2348031234567"},
		{name: "below the origin's minimum: its bounds", in: order("o-4", "gh_mtn", "ng_opay", ledger.SideFrom, 50),
			code: ledger.CodeValidation, message: "Request validation failed: from.amount must be between 1.00 and 50000.00 GHS for gh_mtn"},
		{name: "below the destination's minimum: its bounds, on its side", in: order("o-5", "gh_mtn", "ng_opay", ledger.SideFrom, 100),
			code: ledger.CodeValidation, message: "Request validation failed: to.amount must be between 100.00 and 5000000.00 NGN for ng_opay"},
		{name: "a payer's phone for a bank origin", in: func() app.OrderInput {
			in := order("o-6", "gh_ghipss", "gh_mtn", ledger.SideTo, 10_000)
			in.Spec.FromAccountNumber = "233201234567"
			return in
		}(), code: ledger.CodeValidation, message: "Request validation failed: from.accountNumber must not be given for a bank_transfer order: the order provisions where the customer sends the funds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.app.CreateOrder(h.caller(tt.name), tt.in)
			if !wantOutcome(t, r, tt.code, tt.message) {
				return
			}
			o := orders.Of(r.Result)
			if o.FromAmount != tt.fromAmount || o.ToAmount != tt.toAmount || o.Fee != tt.fee {
				t.Fatalf("order %d → %d fee %d, want %d → %d fee %d", o.FromAmount, o.ToAmount, o.Fee, tt.fromAmount, tt.toAmount, tt.fee)
			}
			if o.Instructions.Type != tt.instructions || o.Spec.ToAccountNumber != tt.toAccountNumberStored {
				t.Fatalf("instructions %+v, to %q", o.Instructions, o.Spec.ToAccountNumber)
			}
			if tt.instructions == orders.InstructionsVirtualAccount && (o.Instructions.Bank != "Sandbox Bank Ghana" || o.Instructions.AccountName != "Money org") {
				t.Fatalf("virtual account instructions %+v", o.Instructions)
			}
		})
	}
}
