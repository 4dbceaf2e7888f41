package ledger_test

// The kernel's tests run with every feature package linked, as a node
// runs (package raft links them all): every State they make holds the
// features' stores and hooks, and TestEncodingsFrozen samples the
// features' commands and records with the kernel's.
import (
	"payments/ledger"
	"payments/ledger/conversions"
	"payments/ledger/deposits"
	"payments/ledger/disputes"
	"payments/ledger/fxpayouts"
	_ "payments/ledger/instructions"
	"payments/ledger/keycontrols"
	"payments/ledger/ledgertest/ordertest"
	"payments/ledger/orders"
	_ "payments/ledger/paymentlinks"
	_ "payments/ledger/publicids"
	_ "payments/ledger/recipients"
	_ "payments/ledger/team"
	_ "payments/ledger/webhooks"
)

// The conversions, disputes, deposits and orders the kernel's tests apply
// (featurecmds_test.go).
func init() {
	ledger.Charges.Charged = func(key string, usd ledger.Minor, op ledger.Command) ledger.Command {
		return &keycontrols.Charged{Charge: keycontrols.Charge{KeyID: key, USD: usd}, Op: op}
	}
	d := &ledger.Disputes
	d.Open = func(at int64, id, org, collection string, amount ledger.Minor, messageID string) ledger.Command {
		return &disputes.Open{At: at, ID: id, OrgID: org, CollectionID: collection, Amount: amount, Category: "chargeback", MessageID: messageID}
	}
	d.Resolve = func(at int64, id, org string, won bool) ledger.Command {
		return &disputes.Resolve{At: at, ID: id, OrgID: org, Won: won}
	}

	dp := &ledger.Deposits
	dp.CreateVirtualAccount = func(at int64, id, org, currency, bank string) ledger.Command {
		return &deposits.CreateVirtualAccount{At: at, ID: id, OrgID: org, Currency: currency, Bank: bank}
	}
	dp.CreateCryptoAddress = func(at int64, id, org, currency, chain, address string) ledger.Command {
		return &deposits.CreateCryptoAddress{At: at, ID: id, OrgID: org, Currency: currency, Chain: chain, Address: address}
	}
	dp.Receive = func(at int64, id, collection, org, virtualAccount string, amount ledger.Minor, completed bool, ref, sourceRef string) ledger.Command {
		return &deposits.Receive{At: at, ID: id, CollectionID: collection, OrgID: org, VirtualAccountID: virtualAccount,
			Amount: amount, Completed: completed, ExternalReference: ref, SourceReference: sourceRef}
	}
	dp.DepositAt = func(r *ledger.Reader, org, ref string) (int64, bool) {
		d, ok := deposits.ByReference(r, org, ref)
		return d.At, ok
	}
	dp.VirtualAccountTimes = func(r *ledger.Reader, org, id string) ([]int64, bool) {
		v, ok := deposits.GetVirtualAccount(r, org, id)
		return []int64{v.CreatedAt, v.UpdatedAt}, ok
	}
	dp.CryptoAddressTimes = func(r *ledger.Reader, org, id string) ([]int64, bool) {
		a, ok := deposits.GetCryptoAddress(r, org, id)
		return []int64{a.CreatedAt, a.UpdatedAt}, ok
	}

	c := &ledger.Conversions
	c.CreateQuote = func(at int64, id, org, from string, fromAmount ledger.Minor, to string, toAmount ledger.Minor, rate string) ledger.Command {
		return &conversions.CreateQuote{At: at, ID: id, OrgID: org, FromCurrency: from, FromAmount: fromAmount,
			ToCurrency: to, ToAmount: toAmount, Side: ledger.SideFrom, Rate: rate}
	}
	c.ExecuteQuote = func(at int64, org, quote, conv, ref string) ledger.Command {
		return &conversions.ExecuteQuote{At: at, OrgID: org, QuoteID: quote, ConversionID: conv, ExternalReference: ref}
	}
	c.QuoteTimes = func(r *ledger.Reader, org, id string, at int64) ([]int64, bool) {
		q, ok := conversions.GetQuote(r, org, id, at)
		return []int64{q.CreatedAt, q.UpdatedAt, q.ExpiresAt - conversions.QuoteLifetimeMillis}, ok
	}
	c.ConversionTimes = func(r *ledger.Reader, org, id string) ([]int64, bool) {
		conv, ok := conversions.Get(r, org, id)
		return []int64{conv.CreatedAt, conv.CompletedAt}, ok
	}
	c.Refused = conversions.Refused
	ledger.FXPayouts.Create = func(c ledger.TestFXPayout) ledger.Command {
		fx := fxpayouts.Create(c)
		return &fx
	}
	initOrders()
}

func initOrders() {
	o := &ledger.Orders
	o.Crypto = func(id, ref string, at int64) ledger.Command { return ordertest.Crypto(id, ref, at) }
	o.Bank = func(id, ref string, at int64) ledger.Command { return ordertest.Bank(id, ref, at) }
	o.Mobile = func(id, ref, col string, at int64) ledger.Command {
		return &orders.Create{
			At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
			Spec: orders.Spec{FromMethod: "gh_mtn", FromCurrency: "GHS", FromAccountNumber: "233241234567",
				ToMethod: "usdc_solana", ToCurrency: "USDC", ToAccountNumber: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
				Amount: 200_00, AmountSide: ledger.SideFrom},
			FromMethodType: ledger.MethodMobileMoney, ToMethodType: ledger.MethodCrypto,
			FromAmount: 200_00, ToAmount: 12_680000, Fee: 40, Rate: "0.0634",
			Instructions: orders.Instructions{Type: orders.InstructionsMobileMoney, AccountNumber: "233241234567"},
			CollectionID: col,
		}
	}
	o.BankTransfer = func(at int64, id, org, ref string, amount ledger.Minor, to string, toAmount ledger.Minor, rate string) ledger.Command {
		return &orders.Create{At: at, ID: id, OrgID: org, ExternalReference: ref,
			Spec: orders.Spec{FromMethod: "gh_ghipss", FromCurrency: "GHS", ToMethod: "ke_mpesa", ToCurrency: to,
				ToAccountNumber: "254712345678", Amount: amount, AmountSide: ledger.SideFrom},
			FromMethodType: ledger.MethodBankTransfer, ToMethodType: ledger.MethodMobileMoney,
			FromAmount: amount, ToAmount: toAmount, Fee: amount / 100, Rate: rate,
			Instructions: orders.Instructions{Type: orders.InstructionsVirtualAccount, Bank: "Sandbox Bank GH", AccountNumber: "9800000000", AccountName: org}}
	}
	o.Deposit = func(at int64, org, order, col string, amount ledger.Minor) ledger.Command {
		return &orders.DepositCommand{At: at, OrgID: org, OrderID: order, CollectionID: col, Amount: amount, Outcome: orders.DepositConfirmed}
	}
	view := func(o *orders.Order) ledger.TestOrder {
		return ledger.TestOrder{ID: o.ID, OrgID: o.OrgID, PayoutID: o.PayoutID, ToCurrency: o.Spec.ToCurrency, Rate: o.Rate,
			FromAmount: o.FromAmount, ToAmount: o.ToAmount, Fee: o.Fee, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	}
	o.Get = func(r *ledger.Reader, org, id string) (ledger.TestOrder, bool) {
		ord, ok := orders.Get(r, org, id)
		return view(&ord), ok
	}
	o.Of = func(res ledger.Result) ledger.TestOrder { return view(orders.Of(res)) }
	o.CreatedFrom = func(r *ledger.Reader, org string, from int64) int {
		return len(orders.List(r, org, orders.Filter{CreatedFrom: from}, ledger.CursorStart, 100).Items)
	}
}
