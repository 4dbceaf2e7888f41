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
	CreatePayout(app.Caller, app.PayoutInput) actors.Reply
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
