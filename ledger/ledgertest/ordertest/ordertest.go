// Package ordertest holds the orders that the tests of packages beside
// ledger/orders place (the kernel's, webhooks', key controls'): each
// org_a's, as ledgertest's fixtures make it. The tests inside package
// orders keep their own, since they cannot import a package that imports
// theirs.
package ordertest

import (
	"payments/ledger"
	"payments/ledger/orders"
)

// Crypto is USDT on Tron to a GHS mobile money wallet: 100 USDT at 15.444,
// a 1% fee.
func Crypto(id, ref string, at int64) *orders.Create {
	return &orders.Create{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: orders.Spec{FromMethod: "usdt_tron", FromCurrency: "USDT", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 100_000000, AmountSide: ledger.SideFrom},
		FromMethodType: ledger.MethodCrypto, ToMethodType: ledger.MethodMobileMoney,
		FromAmount: 100_000000, ToAmount: 1544_40, Fee: 1_000000, Rate: "15.444",
		Instructions: orders.Instructions{Type: orders.InstructionsCrypto, Chain: "Tron", Address: "TXYZ"},
	}
}

// Bank is a GHS bank transfer into a virtual account, paid out to a GHS
// wallet.
func Bank(id, ref string, at int64) *orders.Create {
	return &orders.Create{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: orders.Spec{FromMethod: "gh_ghipss", FromCurrency: "GHS", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 500_00, AmountSide: ledger.SideTo},
		FromMethodType: ledger.MethodBankTransfer, ToMethodType: ledger.MethodMobileMoney,
		FromAmount: 500_00, ToAmount: 500_00, Fee: 5_00,
		Instructions: orders.Instructions{Type: orders.InstructionsVirtualAccount, Bank: "Sandbox Bank GH", AccountNumber: "1234567890", AccountName: "A"},
	}
}
