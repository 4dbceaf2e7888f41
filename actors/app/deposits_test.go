package app_test

import (
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/orders"
	"payments/rails"
)

// Virtual accounts are issued at their currency's bank and take simulated
// transfers: a deposit, its collection and the credit; a retry under the
// deposit's reference replays it, another deposit under it conflicts.
func TestVirtualAccountDeposits(t *testing.T) {
	h := startMoney(t, app.Config{})
	r := h.app.CreateVirtualAccount(h.caller(""), app.VirtualAccountInput{Currency: "GHS", ExternalReference: "va-1"})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("create: %v %v", r.Err, r.Result.Err)
	}
	va := deposits.VirtualAccountOf(r.Result)
	if va.Bank != "Sandbox Bank Ghana" || va.Currency != "GHS" {
		t.Fatalf("virtual account %+v", va)
	}
	amount := func(s string) app.Amount { return app.Amount{Text: s, String: true, Set: true} }
	tests := []struct {
		name     string
		in       app.DepositInput
		credited ledger.Minor // the balance after
		replayed bool
		code     ledger.Code
		message  string
	}{
		{name: "completed", in: app.DepositInput{To: va.ID, Amount: amount("150.00"), ExternalReference: "dep-1", Completed: true},
			credited: 15_000},
		{name: "retried", in: app.DepositInput{To: va.ID, Amount: amount("150.00"), ExternalReference: "dep-1", Completed: true},
			credited: 15_000, replayed: true},
		{name: "another under the same reference", in: app.DepositInput{To: va.ID, Amount: amount("151.00"), ExternalReference: "dep-1", Completed: true},
			code: ledger.CodeConflict},
		{name: "failed: nothing credited", in: app.DepositInput{To: va.ID, Amount: amount("20.00"), ExternalReference: "dep-2"},
			credited: 15_000},
		{name: "too precise for the account's currency", in: app.DepositInput{To: va.ID, Amount: amount("1.001"), ExternalReference: "dep-3", Completed: true},
			code: ledger.CodeValidation, message: "Request validation failed: amount has more than 2 decimal places, the precision of GHS"},
		{name: "an exponent is not a decimal", in: app.DepositInput{To: va.ID, Amount: amount("1E2"), ExternalReference: "dep-4", Completed: true},
			code: ledger.CodeValidation, message: `Request validation failed: amount must be a positive decimal amount such as "150.00"`},
		{name: "no such account", in: app.DepositInput{To: "va_nope", Amount: amount("1.00"), ExternalReference: "dep-5", Completed: true},
			code: ledger.CodeNotFound, message: "Virtual account not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := h.app.SimulateVirtualAccountDeposit(h.caller(""), tt.in)
			if tt.code != "" {
				refusedWith(t, d.Reply, tt.code, tt.message)
				return
			}
			if d.Err != nil || d.Result.Err != nil {
				t.Fatalf("refused: %v %v", d.Err, d.Result.Err)
			}
			if d.Result.Replayed != tt.replayed || deposits.DepositOf(d.Result).Completed != tt.in.Completed {
				t.Fatalf("deposit %+v replayed %v", deposits.DepositOf(d.Result), d.Result.Replayed)
			}
			if got := h.available("GHS"); got != tt.credited {
				t.Fatalf("available %d, want %d", got, tt.credited)
			}
		})
	}
}

// A crypto address is the organization's for an asset on a chain: asking
// again answers the same one; deposits to it credit the asset.
func TestCryptoAddressDeposits(t *testing.T) {
	h := startMoney(t, app.Config{})
	cat := rails.DefaultCatalogue()
	tron, _ := cat.ParseChain("tron")
	in := app.CryptoAddressInput{Currency: "USDT", Chain: tron}
	first := h.app.CreateCryptoAddress(h.caller(""), in)
	if first.Err != nil || first.Result.Err != nil {
		t.Fatalf("create: %v %v", first.Err, first.Result.Err)
	}
	addr := deposits.CryptoAddressOf(first.Result)
	if err := rails.ValidateAddress("tron", addr.Address); err != nil {
		t.Fatalf("address %q: %v", addr.Address, err)
	}
	again := h.app.CreateCryptoAddress(h.caller(""), in)
	if !again.Result.Replayed || deposits.CryptoAddressOf(again.Result).ID != addr.ID {
		t.Fatalf("asked again: %+v, want the same address", again.Result)
	}
	d := h.app.SimulateCryptoDeposit(h.caller(""), app.DepositInput{To: addr.ID, Amount: app.Amount{Text: "12.5", Set: true}, ExternalReference: "tx-1", Completed: true})
	if d.Err != nil || d.Result.Err != nil || d.Sent != 12_500_000 {
		t.Fatalf("deposit: %v %+v sent %d", d.Err, d.Result, d.Sent)
	}
	if got := h.available("USDT"); got != 12_500_000 {
		t.Fatalf("USDT available %d, want 12.500000", got)
	}
	updated := h.app.UpdateCryptoAddress(h.caller(""), addr.ID, `{"customer":"c-1"}`)
	if updated.Err != nil || updated.Result.Err != nil || deposits.CryptoAddressOf(updated.Result).Metadata != `{"customer":"c-1"}` {
		t.Fatalf("update: %v %+v", updated.Err, updated.Result)
	}
}

// A bank order's deposit account takes the virtual account simulation: it
// pays the order, which then pays out.
func TestOrderDeposits(t *testing.T) {
	h := startMoney(t, app.Config{})
	r := h.app.CreateOrder(h.caller(""), app.OrderInput{ExternalReference: "ord-1", Spec: orders.Spec{
		FromMethod: "gh_ghipss", FromCurrency: "GHS", ToMethod: "gh_mtn", ToCurrency: "GHS", ToAccountNumber: "233241234567",
		AmountSide: ledger.SideTo, Amount: 10_000}})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("order: %v %v", r.Err, r.Result.Err)
	}
	o := orders.Of(r.Result)
	va, ok := app.OrderVirtualAccount(o)
	if !ok || va.ID != app.OrderVirtualAccountPrefix+o.ID[len("ord_"):] {
		t.Fatalf("deposit account %+v of %s", va, o.ID)
	}
	d := h.app.SimulateVirtualAccountDeposit(h.caller(""), app.DepositInput{To: va.ID, Amount: app.Amount{Text: "101.00", Set: true}, ExternalReference: "pay-1", Completed: true})
	if d.Err != nil || d.Result.Err != nil || orders.Of(d.Result) == nil || d.Sent != 10_100 {
		t.Fatalf("deposit: %v %+v", d.Err, d.Result)
	}
	if st := orders.Of(d.Result).Status; st != orders.ProcessingPayout {
		t.Fatalf("order %s after its deposit, want processing_payout", st)
	}
	od := h.app.SimulateOrderDeposit(h.caller(""), app.OrderDepositInput{OrderID: "ord_nope", Outcome: orders.DepositConfirmed})
	refusedWith(t, od.Reply, ledger.CodeNotFound, "Order not found")
}
