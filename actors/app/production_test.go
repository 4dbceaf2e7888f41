package app_test

import (
	"strings"
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/orders"
	"payments/rails"
)

// offered is the catalogue of a production deployment whose providers
// serve gh_mtn (payouts, collections) and USDC on Ethereum (payouts,
// deposits).
func offered() *rails.Catalogue {
	return rails.DefaultCatalogue().Restrict(func(code string, dir rails.Direction) bool {
		switch code {
		case "gh_mtn":
			return dir == rails.Payout || dir == rails.Collection
		case "usdc_ethereum":
			return dir == rails.Payout || dir == rails.Deposit
		}
		return false
	})
}

// The production stack with providers moves money only where a provider
// reaches: a method left out is a validation error naming it, never a
// 503; no deposit is simulated; no sandbox bank issues a virtual account;
// an order is paid by mobile money alone, since no provider issues
// deposit instructions for orders.
func TestProductionRefusesWhatNoProviderReaches(t *testing.T) {
	h := startMoney(t, app.Config{Live: true, Catalogue: offered()})
	noProvider := "no provider serves this method"
	order := func(from, fromCur, to, toCur, toAccount string) app.OrderInput {
		spec := orders.Spec{FromMethod: from, FromCurrency: fromCur, ToMethod: to, ToCurrency: toCur, ToAccountNumber: toAccount,
			AmountSide: ledger.SideTo, Amount: 10_000}
		if from == "gh_mtn" {
			spec.FromAccountNumber = "233201234567"
		}
		return app.OrderInput{ExternalReference: "o-" + from + "-" + to, Spec: spec}
	}
	tests := []struct {
		name  string
		reply func() ledger.Result
		field string
		words string
		code  ledger.Code
	}{
		{name: "a payout by a method left out", field: "to.code", words: noProvider, reply: func() ledger.Result {
			in := mtnPayout("p-1", "10.00", ledger.SideTo)
			in.Spec.Method, in.Spec.Currency, in.Destination.AccountNumber = "ke_mpesa", "KES", text("254712345678")
			return h.app.CreatePayout(h.caller("p-1"), in).Result
		}},
		{name: "a collection by a method left out", field: "from.code", words: noProvider, reply: func() ledger.Result {
			return h.app.CreateCollection(h.caller("c-1"), app.CollectionInput{ExternalReference: "c-1",
				Spec: ledger.CollectionSpec{Method: "ke_mpesa", Currency: "KES", Amount: 10_000, PayerNumber: "254712345678"}}).Result
		}},
		{name: "an order to a method left out", field: "to.code", words: noProvider, reply: func() ledger.Result {
			return h.app.CreateOrder(h.caller("o-1"), order("gh_mtn", "GHS", "gh_ghipss", "GHS", "1234567890")).Result
		}},
		{name: "an order paid by bank transfer", field: "from.code", words: noProvider, reply: func() ledger.Result {
			return h.app.CreateOrder(h.caller("o-2"), order("gh_ghipss", "GHS", "gh_mtn", "GHS", "233241234567")).Result
		}},
		{name: "an order paid on chain", field: "from.code", words: "paid by mobile money", reply: func() ledger.Result {
			return h.app.CreateOrder(h.caller("o-3"), order("usdc_ethereum", "USDC", "usdc_ethereum", "USDC", "0x90F79bf6EB2c4f870365E785982E1f101E93b906")).Result
		}},
		{name: "an order paid on chain, across currencies: refused before the rate", field: "from.code", words: "paid by mobile money", reply: func() ledger.Result {
			return h.app.CreateOrder(h.caller("o-4"), order("usdc_ethereum", "USDC", "gh_mtn", "GHS", "233241234567")).Result
		}},
		{name: "a virtual account", field: "currency", words: "no provider issues them", reply: func() ledger.Result {
			return h.app.CreateVirtualAccount(h.caller("va-1"), app.VirtualAccountInput{Currency: "GHS"}).Result
		}},
		{name: "a simulated crypto deposit", code: ledger.CodeNotFound, reply: func() ledger.Result {
			return h.app.SimulateCryptoDeposit(h.caller("d-1"), app.DepositInput{To: "addr_x", Completed: true}).Result
		}},
		{name: "a simulated bank deposit", code: ledger.CodeNotFound, reply: func() ledger.Result {
			return h.app.SimulateVirtualAccountDeposit(h.caller("d-2"), app.DepositInput{To: "va_x", Completed: true}).Result
		}},
		{name: "a simulated order deposit", code: ledger.CodeNotFound, reply: func() ledger.Result {
			return h.app.SimulateOrderDeposit(h.caller("d-3"), app.OrderDepositInput{OrderID: "ord_x", Outcome: orders.DepositConfirmed}).Result
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.reply()
			e := res.Err
			switch {
			case e == nil:
				t.Fatalf("accepted: %+v", res)
			case tt.code != "":
				if e.Code != tt.code {
					t.Fatalf("%s %q, want %s", e.Code, e.Message, tt.code)
				}
			case e.Code != ledger.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Field != tt.field || !strings.Contains(e.Fields[0].Message, tt.words):
				t.Fatalf("%s %+v, want a validation error on %s saying %q", e.Code, e.Fields, tt.field, tt.words)
			}
		})
	}
	// A mobile money order is still taken: its prompt goes through the
	// method's provider.
	r := h.app.CreateOrder(h.caller("o-5"), order("gh_mtn", "GHS", "gh_mtn", "GHS", "233241234567"))
	mustApply(t, "a mobile money order", r)
}
