// Package admin is the REST API of administration, as package actors/app
// groups it: organizations and their API keys, key controls (spend caps,
// IP allowlists), webhook endpoints, their deliveries and the event log,
// recipients, disputes, files (uploads, signed downloads), and the
// sandbox's simulations and clock, with the simulation index. Each handler
// checks the request's shape, calls the application API's operation and
// renders its result; new keys' and webhook endpoints' secrets are
// answered once, with no-store.
//
// Never: it builds no ledger command, draws no identifier or secret
// (http/layering_test.go); of the other feature packages it imports only
// money, whose destination checks recipients share
// (cmd/payments/imports_test.go).
package admin
