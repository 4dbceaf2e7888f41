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
// payment links paid through a checkout session by mobile money, bank
// transfer or stablecoin (the last two with a simulated deposit), on
// whichever node they reach (forwarded to the leader as the HTTP layer
// forwards). Payouts, fundings, collections, orders, quotes, conversions and payment
// links go through the node's application API (package actors/app, one App per
// node beside its actors), the very operations the HTTP layer calls, so
// what is simulated is the code that serves traffic. Clients retry
// outcome_unknown and crashes with the same reference, and read the hot
// balances. The schedule also advances an organization's sandbox clock
// (the ledger's own per-organization offset), which expires quotes.
//
// When the faults end, the auditor checks what the clients were told
// against the healed cluster: no acknowledged write lost, no refused one
// applied, one resource per reference, balances that follow from the
// records, nothing stuck, no reservation left behind, every replica's
// invariants (ledger.Check) and the same state bytes at the same applied
// index; and porcupine checks that the hot balances' reads and writes are
// linearizable.
//
// Determinism, honestly: the seed fixes the fault schedule, every
// client's choices and the steps of a fake clock, not the interleaving.
// The fake clock (clock.go), shared by the three nodes, is what our own
// code waits on: it is each node's leader clock (the At it stamps, hence
// the ledger's deadlines: quote, order and checkout session expiry), the
// expiry ticker's, the rail driver's (its polls for a rail's outcome, its
// backoff, parked transitions, its rescans), the sandbox rail's (its
// latencies and when an instruction settles) and the webhook engine's
// retry schedule. It moves only when its pacer advances it: every 2ms of
// real time by a seeded step, now and then by a seeded jump of up to half
// a second, and the timers due by then fire one at a time in the order of
// their due time, so settlements and retries happen at simulated times in
// that order. What stays real: hashicorp/raft, which has no clock to
// inject (it calls time.After and friends inside; we do not fork it), so
// elections, heartbeats and commits run on real time, shortened
// (elections in a few hundred milliseconds); the webhook engine's polls of
// the delivery log and its HTTP timeouts, the actors' idle timeouts, the
// commit timeouts they answer outcome_unknown on, the clients' give-up and
// back-off, and the scheduler's pauses between faults; and the goroutines
// themselves. The jitter of webhook retries and of the driver's backoff
// comes from an unseeded source. When a timer is set depends on when its
// goroutine ran, so a seed replays the same run, not the same bytes, and a
// failure that depends on a race may need a few replays.
//
// make sim SEED=n replays one seed; make sim-long runs seed after seed for
// SIM_DURATION and reports the seeds run and the faults injected by kind.
package sim
