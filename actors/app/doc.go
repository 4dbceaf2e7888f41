// Package app is the service's application API: one typed operation per
// use case (create a payout, price and execute a conversion, open a
// checkout session, invite a member, …). Every front end calls it — the
// REST API in package http, the dashboard, the hosted checkout, and the
// simulator in bench/sim — so what they do is the same code.
//
// # What an operation does
//
// An operation receives a request whose shape the front end has checked
// (fields present, lengths, formats, amounts parsed in their currency's
// minor units), and decides: it reads the state it needs (through the
// actors' published Reader), draws identifiers, reads the leader's clock,
// prices (fees from the ledger's rules and the catalogue's schedules,
// rates from the rails' rate source), checks what depends on state or on
// the catalogue, builds the ledger command and hands it to the actor that
// owns what it changes (or to the proposer), and returns a typed result:
// the record, whether it was a replay, or a *ledger.Error (a refusal with
// a stable code; package http maps codes to statuses), or one of the
// actors' errors (ErrNotLeader, ErrOutcomeUnknown, ErrOverloaded,
// ErrCatchingUp). The business rules themselves stay in package ledger,
// which re-checks everything in log order.
//
// # Who it serves
//
// Caller says who asks: the organization, the API key (for its spend caps)
// or the dashboard member, and the attempt that names the client's request
// across relays (actors.PayoutRequest.Attempt).
//
// # Imports
//
// Unlike package actors, app reads the rails package's reference data (the
// catalogue of methods, the rate source, address rules): pricing and
// checking a request need them. It never calls a provider adapter: those
// are driven from committed state by the actors' rail driver.
//
// # Never
//
// This package does no I/O of its own but through the actors and the
// rails' interfaces, knows nothing of HTTP, and keeps no state: everything
// it knows is in the ledger or in its configuration.
package app
