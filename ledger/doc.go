// Package ledger is the service's deterministic state machine: organizations
// and their API keys, balance accounts, the double-entry journal, payouts,
// collections, sandbox fundings, idempotency by external reference, the error
// catalogue, and the snapshot format.
//
// # Role
//
// Every change is a Command, proposed to the replicated log and applied by
// State.Apply on every node in log order. Apply is the authority: it
// re-validates what the actors already checked (funds, references) because
// only log order is the same everywhere. The leader chooses everything that
// is not a pure function of the state (identifiers, timestamps, fees) and
// writes it into the command, so replaying the log rebuilds the same state
// byte for byte.
//
// # Money
//
// Amounts are integers in the currency's minor units (Minor). Request text is
// parsed through apd with a context that traps inexact results, so "10.001"
// GHS is an error, never a rounding; responses are formatted from the
// integer. Every movement is a set of postings that sums to zero; a set that
// does not is a bug and panics. Percentage fees round half up through one
// helper.
//
// # Concurrency
//
// State is single-threaded. Its owner applies commands on one goroutine and
// lets readers in under a read lock; read methods never write. Freeze
// captures a snapshot in O(1): tables switch to copy-on-write overlays until
// Thaw, so a snapshot can be written while Apply goes on.
//
// # Never
//
// This package does no I/O (but to the writer and reader it is handed), reads
// no clock, draws no random numbers, starts no goroutines, and imports only
// the standard library and apd.
package ledger
