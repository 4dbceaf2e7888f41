package http

import (
	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/rails"
)

// What each feature calls of the application API (App). Declared apart so
// that features change their own lists.

// moneyOps: payouts, collections, conversions, rates, orders, balances,
// deposits, virtual accounts and crypto addresses.
type moneyOps interface {
	Rate(from, to string) (rails.Rate, *ledger.Error)
	USDValue(currency string, amount ledger.Minor) (ledger.Minor, bool)
	CreatePayout(app.Caller, app.PayoutInput) actors.Reply
	CreateCollection(app.Caller, app.CollectionInput) actors.Reply
	CreateQuote(app.Caller, app.QuoteInput) actors.Reply
	ExecuteConversion(c app.Caller, quoteID, ref string) actors.Reply
	CreateOrder(app.Caller, app.OrderInput) actors.Reply
	SimulateOrderDeposit(app.Caller, app.OrderDepositInput) app.Deposited
	SimulateVirtualAccountDeposit(app.Caller, app.DepositInput) app.Deposited
	SimulateCryptoDeposit(app.Caller, app.DepositInput) app.Deposited
	CreateVirtualAccount(app.Caller, app.VirtualAccountInput) actors.Reply
	UpdateVirtualAccount(c app.Caller, id string, status ledger.VirtualAccountStatus) actors.Reply
	CreateCryptoAddress(app.Caller, app.CryptoAddressInput) actors.Reply
	UpdateCryptoAddress(c app.Caller, id, metadata string) actors.Reply
}

// linkOps: payment links and pages, checkout sessions and the hosted
// checkout.
type linkOps interface{}

// adminOps: organizations, keys and their controls, dashboard members and
// sessions, recipients, files, disputes, webhooks, simulations.
type adminOps interface{}

// caller is who makes the call: the key's organization, the key (its spend
// caps) and the attempt that names the client's request across relays.
func (c *call) caller() app.Caller {
	return app.Caller{OrgID: c.org, Key: &c.key, Attempt: c.s.attemptOf(c.ctx)}
}
