package http

import (
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
type linkOps interface{}

// adminOps: organizations, keys and their controls, dashboard members and
// sessions, recipients, files, disputes, webhooks, simulations.
type adminOps interface{}
