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
	_ "payments/ledger/paymentlinks"
	_ "payments/ledger/recipients"
	_ "payments/ledger/team"
	_ "payments/ledger/webhooks"
)

// The conversions, disputes and deposits the kernel's tests apply
// (featurecmds_test.go).
func init() {
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
}
