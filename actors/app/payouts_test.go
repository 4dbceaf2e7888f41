package app_test

import (
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/keycontrols"
	"payments/ledger/recipients"
)

// mtnPayout is a payout of amount (text, on side) to a mobile money
// wallet in Ghana.
func mtnPayout(ref, amount string, side ledger.Side) app.PayoutInput {
	in := app.PayoutInput{
		ExternalReference: ref,
		Spec:              ledger.PayoutSpec{Currency: "GHS", Method: "gh_mtn", AmountSide: side},
		Destination:       app.Destination{AccountNumber: text("+233241234567")},
	}
	cur, _ := ledger.LookupCurrency("GHS")
	in.Spec.Amount, _ = ledger.ParseAmount(amount, cur)
	return in
}

// The operation prices a payout (the fee on the side the caller fixed),
// checks it against the catalogue and its destination by the method's
// type, and hands it to the account's actor: what it charges is what the
// ledger records.
func TestCreatePayout(t *testing.T) {
	h := startMoney(t, app.Config{})
	h.fund("GHS", 1_000_000)
	tests := []struct {
		name string
		in   func() app.PayoutInput
		// want: the amount delivered and the fee, or the refusal.
		delivered, fee ledger.Minor
		code           ledger.Code
		message        string
	}{
		{name: "to side: the fee is on top", in: func() app.PayoutInput { return mtnPayout("to-side", "100.00", ledger.SideTo) },
			delivered: 10_000, fee: 100},
		{name: "from side: the fee comes out of it", in: func() app.PayoutInput { return mtnPayout("from-side", "101.00", ledger.SideFrom) },
			delivered: 10_000, fee: 100},
		{name: "from side: the split rounds the fee", in: func() app.PayoutInput { return mtnPayout("odd", "10.00", ledger.SideFrom) },
			delivered: 990, fee: 10},
		{name: "below the method's minimum", in: func() app.PayoutInput { return mtnPayout("small", "0.50", ledger.SideTo) },
			code: ledger.CodeValidation, message: "Request validation failed: to.amount must be between 1.00 and 50000.00 GHS for gh_mtn"},
		{name: "phone number normalized", in: func() app.PayoutInput {
			in := mtnPayout("phone", "10.00", ledger.SideTo)
			in.Destination.AccountNumber = text("2332412345x7")
			return in
		}, code: ledger.CodeValidation, message: "Request validation failed: to.accountNumber must contain digits only, with the country code and an optional leading +"},
		{name: "an address for a mobile money method", in: func() app.PayoutInput {
			in := mtnPayout("addr", "10.00", ledger.SideTo)
			in.Destination.Address = text("0xabc")
			return in
		}, code: ledger.CodeValidation, message: "Request validation failed: to.address must not be given for a mobile_money method; use to.accountNumber"},
		{name: "bank: its own fee", in: func() app.PayoutInput {
			return app.PayoutInput{ExternalReference: "bank", Spec: ledger.PayoutSpec{Currency: "GHS", Method: "gh_ghipss", Amount: 10_000, AmountSide: ledger.SideTo},
				Destination: app.Destination{AccountNumber: text("1234567890")}}
		}, delivered: 10_000, fee: 50},
		{name: "crypto to a bad address", in: func() app.PayoutInput {
			return app.PayoutInput{ExternalReference: "usdt-bad", Spec: ledger.PayoutSpec{Currency: "USDT", Method: "usdt_tron", Amount: 5_000_000, AmountSide: ledger.SideTo},
				Destination: app.Destination{Address: text("0xabc")}}
		}, code: ledger.CodeValidation, message: "Request validation failed: to.address must be 34 characters starting with T (a base58check Tron address)"},
		{name: "unknown method", in: func() app.PayoutInput {
			in := mtnPayout("nomethod", "10.00", ledger.SideTo)
			in.Spec.Method = "gh_nope"
			return in
		}, code: ledger.CodeValidation, message: `Request validation failed: to.code "gh_nope" is not a known payment method; see GET /v1/capabilities`},
		{name: "insufficient funds", in: func() app.PayoutInput { return mtnPayout("big", "20000.00", ledger.SideTo) },
			code: ledger.CodeInsufficientFunds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.app.CreatePayout(h.caller(tt.name), tt.in())
			if !wantOutcome(t, r, tt.code, tt.message) {
				return
			}
			p := r.Result.Payout
			if p.Spec.Amount != tt.delivered || p.Fee != tt.fee {
				t.Fatalf("delivers %d with fee %d, want %d with %d", p.Spec.Amount, p.Fee, tt.delivered, tt.fee)
			}
		})
	}
}

// A cross-currency payout converts at the current rate; a retry of it
// keeps the price it was created at, whatever the rate does meanwhile, and
// a changed retry is priced afresh and refused as a duplicate.
func TestCreatePayoutCrossCurrency(t *testing.T) {
	h := startMoney(t, app.Config{})
	h.fund("USD", 1_000_000)
	h.rates.set("USD", "GHS", "10")
	h.rates.set("USD", "USD", "1")
	in := mtnPayout("fx-1", "150.00", ledger.SideTo)
	in.FromCurrency = "USD"
	first := h.app.CreatePayout(h.caller("a1"), in)
	mustApply(t, "refused", first)
	p := first.Result.Payout
	if p.FX == nil || p.FX.FromAmount != 1_500 || p.Spec.Amount != 15_000 || p.Fee != 15 || p.FX.Rate != "10" {
		t.Fatalf("priced %+v fee %d, want 15.00 USD for 150.00 GHS at 10, fee 0.15 USD", p.FX, p.Fee)
	}
	h.rates.set("USD", "GHS", "12")
	again := h.app.CreatePayout(h.caller("a2"), in)
	if again.Result.Err != nil || !again.Result.Replayed || again.Result.Payout.ID != p.ID || again.Result.Payout.FX.Rate != "10" {
		t.Fatalf("retry: %+v, want a replay at the created price", again.Result)
	}
	changed := in
	changed.Spec.Amount = 20_000
	refusedWith(t, h.app.CreatePayout(h.caller("a3"), changed), ledger.CodeDuplicate, "")

	// No rate right now: nothing can be priced.
	other := mtnPayout("fx-2", "150.00", ledger.SideTo)
	other.FromCurrency = "EUR"
	refusedWith(t, h.app.CreatePayout(h.caller("a4"), other), ledger.CodeRateUnavailable, "")
}

// A payout to a saved recipient takes its method, currency and
// destination, and its holder's name as to.kyc; an inactive or unknown
// recipient is refused, and a request that names another method is.
func TestCreatePayoutToRecipient(t *testing.T) {
	h := startMoney(t, app.Config{})
	h.fund("GHS", 1_000_000)
	h.propose(&recipients.Create{At: 1, ID: "rcp_ama", OrgID: h.org, Spec: recipients.Spec{
		Method: "gh_mtn", MethodType: ledger.MethodMobileMoney, Country: "GH", Currency: "GHS", AccountName: "Ama Mensah", AccountNumber: "233241234567",
	}})
	amount := app.Amount{Text: "25.00", String: true, Set: true}
	byRecipient := func(ref, id string) app.PayoutInput {
		return app.PayoutInput{ExternalReference: ref, Spec: ledger.PayoutSpec{RecipientID: id, AmountSide: ledger.SideTo}, Amount: amount}
	}
	r := h.app.CreatePayout(h.caller("r1"), byRecipient("rcp-1", "rcp_ama"))
	mustApply(t, "refused", r)
	p := r.Result.Payout
	if p.Spec.Method != "gh_mtn" || p.Spec.AccountNumber != "233241234567" || p.Spec.Amount != 2_500 || p.Spec.ToKYC != `{"accountName":"Ama Mensah"}` {
		t.Fatalf("payout spec %+v", p.Spec)
	}

	refusedWith(t, h.app.CreatePayout(h.caller("r2"), byRecipient("rcp-2", "rcp_nobody")), ledger.CodeValidation,
		"Request validation failed: to.recipientId is not a recipient of this organization")
	other := byRecipient("rcp-3", "rcp_ama")
	other.Spec.Method = "gh_telecel"
	refusedWith(t, h.app.CreatePayout(h.caller("r3"), other), ledger.CodeValidation,
		"Request validation failed: to.code must be the recipient's method gh_mtn, or left out")
	tooPrecise := byRecipient("rcp-4", "rcp_ama")
	tooPrecise.Amount.Text = "1.001"
	refusedWith(t, h.app.CreatePayout(h.caller("r4"), tooPrecise), ledger.CodeValidation,
		"Request validation failed: to.amount has more than 2 decimal places, the precision of GHS")

	// Deactivated, the recipient takes no new payouts, but a retry of the
	// one it took still replays.
	h.propose(&recipients.Update{At: 2, ID: "rcp_ama", OrgID: h.org, Change: recipients.Change{SetActive: true, Active: false}})
	refusedWith(t, h.app.CreatePayout(h.caller("r5"), byRecipient("rcp-5", "rcp_ama")), ledger.CodeValidation,
		"Request validation failed: to.recipientId is an inactive recipient; reactivate it with PUT /v1/recipients/rcp_ama")
	again := h.app.CreatePayout(h.caller("r6"), byRecipient("rcp-1", "rcp_ama"))
	if again.Result.Err != nil || !again.Result.Replayed || again.Result.Payout.ID != p.ID {
		t.Fatalf("retry: %+v, want a replay", again.Result)
	}
}

// A key's spend caps count the payout at the USD value of its debit; a
// caller without a key (the dashboard, the simulator) counts nothing.
func TestCreatePayoutSpendCaps(t *testing.T) {
	h := startMoney(t, app.Config{})
	h.fund("GHS", 1_000_000)
	h.rates.set("GHS", "USD", "0.1")
	perTransaction := ledger.Minor(500) // 5.00 USD
	h.propose(&keycontrols.Set{At: 1, OrgID: h.org, KeyID: h.key.ID, SetPerTransaction: true,
		Controls: keycontrols.Controls{Caps: ledger.SpendCaps{PerTransaction: &perTransaction}}})
	refusedWith(t, h.app.CreatePayout(h.caller("s1"), mtnPayout("cap-1", "100.00", ledger.SideTo)), ledger.CodeSpendCapExceeded, "")
	if r := h.app.CreatePayout(h.caller("s2"), mtnPayout("cap-2", "40.00", ledger.SideTo)); r.Err != nil || r.Result.Err != nil {
		t.Fatalf("under the cap: %v %v", r.Err, r.Result.Err)
	}
	if r := h.app.CreatePayout(app.Caller{OrgID: h.org}, mtnPayout("cap-3", "100.00", ledger.SideTo)); r.Err != nil || r.Result.Err != nil {
		t.Fatalf("without a key: %v %v", r.Err, r.Result.Err)
	}
	// Without a rate, a key with caps cannot be counted.
	h.rates.set("GHS", "USD", "")
	refusedWith(t, h.app.CreatePayout(h.caller("s4"), mtnPayout("cap-4", "10.00", ledger.SideTo)), ledger.CodeRateUnavailable, "")
}

// A deployment without providers moves no money: 503, and for a
// cross-currency payout the rate is asked first.
func TestCreatePayoutNoProvider(t *testing.T) {
	h := startMoney(t, app.Config{NoProvider: true})
	refusedWith(t, h.app.CreatePayout(h.caller("n1"), mtnPayout("np-1", "10.00", ledger.SideTo)), ledger.CodeUnavailable,
		"No payment provider is configured on this deployment; nothing was done")
	in := mtnPayout("np-2", "10.00", ledger.SideTo)
	in.FromCurrency = "USD"
	refusedWith(t, h.app.CreatePayout(h.caller("n2"), in), ledger.CodeRateUnavailable, "")
}
