// Package money is the REST API of money moving: payouts (plain and
// cross-currency), collections, conversions and quotes' rates, orders,
// deposits to virtual accounts and crypto addresses, balance accounts,
// their statements and the journal, capabilities, and the checks of a
// destination (POST /v1/validations, which recipients share). Each
// handler checks the request's shape, calls the application API's
// operation and renders its result; it registers its routes and the event
// renderers of its resources on package http/core from init functions.
//
// Never: it builds no ledger command, draws no identifier and prices
// nothing (http/layering_test.go); it imports no other feature package
// (cmd/payments/imports_test.go).
package money
