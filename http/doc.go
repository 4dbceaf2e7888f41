// Package http is the REST front end (imported as api where it meets
// net/http), assembled: the server, pipeline and shared plumbing of
// package http/core, with every feature package registered on it. It
// translates REST calls into the application API's operations (package
// actors/app) and their results into responses; the operations decide.
//
// # Layout
//
//	http            this package: New, Config, Server; imports every feature
//	├── admin       organizations and keys, key controls, webhooks and events,
//	│               recipients, disputes, files, the sandbox's simulations
//	├── dashsite    the dashboard's sign-in, links, Team page and pages
//	├── links       payment links, pages, checkout sessions, the hosted checkout
//	├── money       payouts, collections, conversions, orders, deposits, virtual
//	│               accounts, crypto addresses, accounts and the journal, rates,
//	│               capabilities, validations
//	├── requests    the request log's API
//	└── core        the pipeline, the codec, the error table, pagination, the
//	                read, reply and create shapes, forwarding, the request
//	                log's recorder, blob routes between nodes
//
// A feature package registers its API endpoints (core.RegisterRoutes), its
// other routes (core.RegisterRouteSet) and its event renderers
// (core.RegisterEventRenderer) from init functions; this package imports
// them all, so a Server built by New serves every feature and
// EventPayload renders every kind of event. The presentation of the hosted
// checkout and the dashboard (templates, assets) is in packages
// http/checkout and http/dashboard, which call no handler.
//
// # Never
//
// No package of the front end builds a ledger command, draws an identifier
// or a secret, computes a fee or prices a conversion: layering_test.go
// reads every package under http for it. Core imports no feature, features
// import core and not each other (but admin's recipients use money's
// destination checks, and the dashboard's forms admin's), and no package
// of the front end imports Raft, the WAL, Pebble or the load generator:
// cmd/payments/imports_test.go checks it.
package http
