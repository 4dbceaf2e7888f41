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
}

// linkOps: payment links and pages, checkout sessions and the hosted
// checkout.
type linkOps interface {
	CreatePaymentLink(app.Caller, app.PaymentLinkRequest) actors.Reply
	CreatePageLink(app.Caller, app.PageLinkRequest) actors.Reply
	UpdatePaymentLink(app.Caller, app.CheckoutUpdate) actors.Reply
	CreatePaymentPage(app.Caller, app.PaymentPageRequest) actors.Reply
	UpdatePaymentPage(app.Caller, app.CheckoutUpdate) actors.Reply
	OpenCheckoutSession(app.Caller, app.CheckoutSessionRequest) actors.Reply
	SimulateCheckoutDeposit(app.Caller, app.CheckoutDepositRequest) app.CheckoutDepositReply
	StartCheckoutDeposit(app.Caller, app.CheckoutDepositRequest) *ledger.Error
	CheckoutDepositOnItsWay(sessionID string) bool
}

// adminOps: organizations, keys and their controls, dashboard members and
// sessions, recipients, files, disputes, webhooks, simulations.
type adminOps interface{}
