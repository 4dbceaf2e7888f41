// Package actors is the service's concurrency: one protoactor actor per
// balance account, the rail driver, and the proposer that turns their
// commands into log entries.
//
// # The write path
//
// A request for an account goes to the account router, which spawns the
// account's actor on first use and stops it when idle. The actor checks
// idempotency (a reference already committed is replayed, from the state
// store's history however old; one in flight is joined; one with different
// details is a duplicate), checks and reserves
// funds, stamps identifiers and the leader's clock into a command, and hands
// it to the Proposer without waiting: many debits of one hot account are in
// flight at once. The Proposer batches whatever is queued into one log entry
// (group commit); the result of each command comes back to its actor in log
// order, which answers every caller waiting on that reference.
//
// The ledger re-validates everything on apply; the actors' checks are the
// fast path that keeps doomed commands out of the log, and their reservation
// scheme (see accountActor) is exact, so a balance that covers K of N
// concurrent debits accepts exactly K.
//
// # Quotes
//
// Each conversion quote has an actor too (quote.go), spawned by the quote
// router on the first execution request and stopped when idle. It serializes
// the executions of its quote: one proposes, those arriving while it is in
// flight with the same externalReference join it and get its conversion,
// and a reference that already names a conversion is answered from it
// (replayed, or duplicate for another quote). A conversion's debit carries no
// reservation of the account actor; the ledger's check at apply time keeps
// conversions and payouts together from overdrawing a balance (see quote.go).
//
// # The rail driver
//
// On the leader, the driver moves payouts and collections through their
// rails from committed state, like an outbox; see driver.go. It walks the
// open payouts and collections in chunks (never the history), and a
// follow-up the ledger refuses is parked with backoff, logged once and
// counted (System.ParkedTransitions), not proposed again in a loop.
//
// On a production deployment, a payout or collection whose method a
// configured provider instance serves (Config.Providers) is driven from
// its instruction, committed before the first request
// (driver_provider.go): a new leader sends exactly the same request again,
// or, for a send-once instance whose request may have arrived, none, and
// asks the status; Restore hands instances that keep prepared values in
// memory the ones in flight before anything new is prepared. Callbacks
// reach the instances through System.ProviderCallback: an authenticated
// final outcome settles through the log, once; any other prompts a status
// check. The deposit watcher (deposits.go) polls each instance's deposit
// feed and commits every poll with its cursor.
//
// # Webhook delivery
//
// On the leader, a driver follows the committed webhook deliveries and hands
// each to its endpoint's actor, which schedules, sends, signs and records
// the attempts; see webhooks.go. URLs are checked at creation and at every
// dial against WebhookURLPolicy (webhook_url.go).
//
// # Concurrency rules
//
// Actors share nothing mutable: they talk through messages, reply channels
// and the log. They read the ledger only through StateReader: the latest
// published ledger.Reader, which reads the committed state store and never
// waits for Apply. Every queue is bounded: the proposer's intake, the batches in
// flight, and the write requests inside the actors (Config.InFlightMax),
// which bounds every mailbox. Rail I/O runs in worker goroutines, never in an
// actor's Receive.
//
// # Never
//
// This package does not decide business rules (the ledger does), does not
// touch HTTP, and does not import the rails or raft packages: it declares the
// interfaces it needs (Replicator, StateReader, Rail, Providers) and they
// implement them.
package actors
