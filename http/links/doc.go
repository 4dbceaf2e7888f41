// Package links is the REST API of payment links, payment pages and
// checkout sessions, and the hosted checkout they open: its pages
// (/checkout/…) and public endpoints (/v1/checkout/…). The hosted checkout
// has no key: a payment link's id is its authority, requests are limited
// per client address, writes from another site are refused, and followers
// relay to the leader (checkout_public.go). Its reads of ledger state are
// all in checkout_reads.go; its writes (opening a session, the sandbox's
// simulated deposits) are the application API's operations, the ones the
// payment-link endpoints call. Its presentation is package http/checkout.
//
// Never: it builds no ledger command, draws no identifier and prices
// nothing (http/layering_test.go); it imports no other feature package
// (cmd/payments/imports_test.go).
package links
