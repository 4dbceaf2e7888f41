// Package sim is a seeded simulation of the whole cluster under faults,
// in the spirit of TigerBeetle's VOPR, etcd's robustness tests and
// hashicorp/raft's fuzzy package.
//
// Three real nodes (package raft's Node with the real FSM and ledger, the
// real actors and the sandbox rail driver, assembled as cmd/payments
// does) run in one process. Their Raft messages go over hashicorp's
// in-memory transport behind a network that drops, delays, cuts links in
// one direction or both, and heals; their log and state store live on
// Pebble's crashable in-memory filesystem, so a crash loses what was not
// synced and the node restarts from the rest. Seeded clients create
// payouts, fundings, collections, mobile money orders, conversions and
// payment-link checkouts through the entry points the HTTP layer calls,
// on whichever node they reach (forwarded to the leader as the HTTP layer
// forwards), retrying outcome_unknown and crashes with the same
// reference, and read the hot balances. The schedule also advances an
// organization's sandbox clock (the ledger's own fake clock), which
// expires quotes.
//
// When the faults end, the auditor checks what the clients were told
// against the healed cluster: no acknowledged write lost, no refused one
// applied, one resource per reference, balances that follow from the
// records, nothing stuck, no reservation left behind, every replica's
// invariants (ledger.Check) and the same state bytes at the same applied
// index; and porcupine checks that the hot balances' reads and writes are
// linearizable.
//
// Determinism, honestly: the seed fixes the fault schedule and every
// client's choices, not the interleaving. hashicorp/raft runs on real
// timers and goroutines, and so do the rails, so a seed replays the same
// run, not the same bytes; a failure that depends on a race may need a
// few replays. Time is real time, shortened (elections in a few hundred
// milliseconds, rails that settle in tens): no fake clock drives Raft.
//
// make sim SEED=n replays one seed; make sim-long runs seed after seed for
// SIM_DURATION and reports the seeds run and the faults injected by kind.
package sim
