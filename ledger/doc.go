// Package ledger is the service's deterministic state machine, with its
// feature packages (ledger/*/): organizations and their API keys, balance
// accounts, the double-entry journal, payouts, collections, orders,
// conversions, payment links, deposits, disputes, idempotency by external
// reference, the error catalogue, and the layout of the state store.
//
// # Kernel and features
//
// This package is the kernel: what every feature shares (organizations,
// keys, balances and the journal, payouts and collections, events, the
// clock, the state store and its layout) and, for now, most features. A
// feature may live in a sub-package instead, on the extension points of
// feature.go: its commands, its kinds of record with their lookups and list
// indexes, its part of every State, the hooks it adds to the kernel's rules
// and to every event, its event subjects and its reads. So far
// ledger/conversions (FX quotes and their executions, which Decided
// answers finally by reference through RegisterDecided), ledger/deposits
// (virtual accounts, crypto deposit addresses, the deposits into them and
// the providers' deposit feeds; the Deposit a collection carries stays
// here), ledger/disputes
// (disputes, which hold and book merchants' funds, and uploaded files),
// ledger/fxpayouts (cross-currency payouts; their FX details stay fields of
// the kernel's payout record),
// ledger/instructions (the production rails' instructions to provider
// instances, and the providers' floats they settle against),
// ledger/keycontrols (API keys' spend caps and IP allowlists; the
// controls stay fields of the kernel's key record),
// ledger/orders (orders, which collect on one rail and pay out on another
// through the kernel's collections and payouts), ledger/paymentlinks (payment links, payment pages and hosted checkout
// sessions), ledger/publicids (the deployment's key for public entry and
// event ids, and the ids it makes), ledger/recipients (saved payout destinations), ledger/team
// (the dashboard's members, invitations and sessions) and ledger/webhooks
// (endpoints and their deliveries, fanned out from every event by a hook)
// do. Sub-packages keep this package's rules (below, and the "Never"
// section: TestLedgerIsPure reads them too); package raft links them all,
// and so do this package's tests (features_test.go). Beneath them all,
// ledger/kv holds the byte-level machinery: the codec and the state
// store's interfaces, keys and scans.
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
// # Two tiers
//
// A payments ledger's history grows forever; memory must not. State keeps
// in memory what can still change: organizations, keys, balance accounts,
// every open record (a pending payout, an open order, an active link, a
// pending delivery…), the deadlines, and the indexes Apply needs of them
// (store.go). Every record, open or closed, every journal entry and every
// event is in the state store, an ordered key-value store (Pebble, package
// wal) that the FSM writes in batches of log entries, each with the index
// of its last entry:
//
//   - Apply changes records in memory; Flush writes every change since the
//     last flush into the FSM's write batch, coalesced (a record changed
//     ten times in a batch is written once) and in key order; once the
//     batch is in the store, PublishFlushed moves the readers' views on to
//     it and ReleaseFlushed drops from memory the records that closed
//     (Committed does both). Apply may go on with the next entries while a
//     flushed batch commits: until it is released, its closed records and
//     its new references are still in memory. Apply reads a closed record
//     back from the store when a rule needs it (a replayed reference, a
//     dispute of a completed collection, a late payment of an expired
//     link), and a record that changes again is open again.
//   - What the store holds at an applied index depends only on the log up
//     to it, never on how entries were grouped into batches: every node's
//     store is byte-identical at the same index (property_test.go,
//     conservation_test.go).
//   - Readers (Reader) read the committed store, and views.go's copies of
//     the always-open records; they never wait for Apply, and a write is
//     acknowledged only after its batch is committed, so a client reads its
//     own writes.
//   - Load rebuilds memory from the store's open-record sets: its cost
//     follows open work, not history.
//
// # The state store, format version 1
//
// Keys are a tag byte, then fixed-width integers (8 bytes, big-endian) and
// length-prefixed strings (uvarint length, bytes), so that a prefix of
// components is a prefix of keys and ordered scans follow creation order.
// Values are the record codecs of records.go and the features' files; for
// most types one fields method both writes and reads (codec.go, on
// kv.Codec). Frozen: a different layout is a new format version ('#'
// "format"), and TestEncodingsFrozen holds every command, record and event
// subject to the bytes of testdata/encodings.golden.
//
// Each kind of record (layout.go lists the tags) has:
//
//	tag 'r' str(id)                          → uvarint(seq) record
//	tag 'o' str(org) seq                     → id   every record, by creation
//	tag 'h' str(org) seq                     → id   the open records
//	tag 'l' name str(key)                    → id   a lookup: a reference, a leg
//	tag 'f' name str(org) str(value) seq     → id   a list filter: a final status, a parent
//	tag 's'                                  → uvarint: the last creation seq
//
// seq is the record's creation number within its kind: list cursors are
// seqs ("items created before"). Open-set and filter entries are removed
// with single deletes (each is set once before it is removed), so churn
// costs nothing once flushed. Lookup entries are set once and never
// removed: a reference is never forgotten. A Bloom filter in memory holds
// every lookup key (kv.LookupFilter, about 1.5 bytes a key, not stored),
// so that proving a create's reference new — nearly every create's — needs
// no read of the state store.
//
// The journal and the events are stored in pages, one per log entry (the
// FSM calls State.EndEntry after each), so that a page is the same on
// every node whatever batches the log was applied in. Entries and events
// are numbered from 1; a page sits under the number of its first:
//
//	'J' seq                         → a journal page: count, then per
//	                                  transaction its entries (account, type,
//	                                  amount, balance after), reference,
//	                                  external reference and time
//	'S' str(account) seq            → a merchant account's entries of that
//	                                  log entry: count, then per entry its
//	                                  seq, type, amount, balance after,
//	                                  reference, external reference, time
//	'E' seq                         → an event page: count, then per event
//	                                  its header and subject — a copy of the
//	                                  subject, or, for a record of a final
//	                                  kind that closed with the event, kind 0
//	                                  and the record's tag: the stored record
//	                                  is the subject, never written twice
//	'e' 'o' str(org) seq            → an organization's events of that log
//	                                  entry: count, then each seq - seq
//	'e' 'r' str(org) str(res) seq   → ""  one event of one resource
//	'#' str(name)                   → uvarint  counters ("journal", "events"), the format
//
// # Appended fields
//
// A field added to a kind's record after format 1 is appended to its
// value, and only when it has a value (or a later appended field does), so
// that every record written before reads as it was and a record that has
// none of the new fields is byte for byte format 1's; the kind's decoder
// reads an appended field only when bytes remain (kv.Codec.More). This works
// for state-store values alone, which end where the record ends: an event
// subject is followed by the next event in its page, so a subject that
// grows gets a new subject kind (a record without the new fields keeps the
// old kind), and a command that grows gets a new command kind the same way
// (extend.go). Appended so far:
//
//	conversion ('s')   str(externalReference), for a conversion executed
//	                   under one (subject kind 12 instead of 4; command
//	                   kind 22, conversions.ExecuteQuote with the
//	                   reference, instead of 21); its lookup 'l' 'r' str(org 0x00 reference) → id
//	                   makes the reference unique per organization for good
//	webhook delivery   uvarint(n) then n attempts, oldest first, each
//	('x')              varint(number) varint(startedAt) varint(at)
//	                   bool(succeeded) varint(statusCode) str(error): its
//	                   latest attempts (package webhooks, AttemptsKept),
//	                   for a delivery attempted at least once; an attempt
//	                   reported with its start is command kind 77,
//	                   webhooks.RecordAttempt with startedAt appended,
//	                   instead of 75
//	invitation ('I')   bool(true) for a password reset link (command kind
//	                   109, team.CreatePasswordReset); an invitation or
//	                   setup link has none
//	payout ('p'),      str(attempt), the request attempt that created it
//	collection ('c'),  (decided.go), for a record created through command
//	order ('z')        kind 110, Decided, with one
//	conversion ('s')   str(attempt) after its reference, likewise
//	payout ('p')       str(routingNumber) after str(attempt), for a payout
//	                   that names its bank (routing.go: command kinds 13
//	                   and 14, subject kinds 13 and 14)
//
// A build from before an appended field refuses a record that has it
// ("trailing bytes") rather than misread it.
//
// A new kind of record needs no appended field, only a tag of its own;
// those added within format 1:
//
//	order deposit ('o')  a deposit into an order made under an
//	                     externalReference (package orders): str(id)
//	                     str(org) str(order) str(externalReference)
//	                     minor(requested) u8(outcome) minor(amount)
//	                     varint(createdAt); closed from the start, unlisted,
//	                     its lookup 'l' 'r' str(org 0x00 reference) → id
//	                     keeps the reference for good. Written by command
//	                     kind 34, orders.DepositCommand with the reference appended,
//	                     instead of 33; a deposit without one writes none
//	refusal ('F')        a create refused under an externalReference
//	                     (decided.go): str(id) str(org) str(resource)
//	                     str(reference) str(sha256 of the request) then the
//	                     error (str(code) str(message) minor(available)
//	                     minor(required) str(currency) bool(spend cap) and
//	                     its str(cap) minor(limit) minor(used)
//	                     minor(attempted)) str(attempt) varint(createdAt);
//	                     closed from the start, unlisted, its lookup 'l' 'r'
//	                     str(org 0x00 resource 0x00 reference) → id keeps
//	                     the refusal for good. Written by command kind 110,
//	                     Decided
//	instruction ('P')    a payout's or collection's instruction to a
//	                     provider instance (package instructions): str(id)
//	                     str(org) str(provider) bool(collection) str(key)
//	                     str(prepared key) str(payload) bool(send once)
//	                     bool(sent) str(provider reference)
//	                     uvarint(replacements) bool(closed)
//	                     varint(createdAt) varint(updatedAt); open until
//	                     its payout or collection is final, its lookup
//	                     'l' 'k' str(provider 0x00 key) → id finds it for
//	                     callbacks. Written by command kinds 121–124, and
//	                     closed when SettlePayout or SettleCollection ends
//	                     its payout or collection
//	provider ('Q')       a provider instance's deposit feed
//	                     (package deposits): str(name) str(cursor)
//	                     uvarint(deposit indexes) uvarint(polls)
//	                     varint(updatedAt); always open, unlisted.
//	                     Written by command kinds 125 (deposits.RecordFeed,
//	                     whose deposits are deposit records ('y') under
//	                     the transfer's identity as reference) and 126
//	                     (deposits.AllocateIndex)
//	float funding ('G')  money the operator moved to or from a provider's
//	                     float (package instructions): str(id) str(provider)
//	                     str(currency) minor(amount) str(reference)
//	                     varint(at); closed from the start, unlisted, its
//	                     lookup 'l' 'r' str(0x00 reference) → id. Written
//	                     by command kind 127, instructions.FundFloat
//
// A build from before a new command kind refuses a log entry that has it
// ("unknown command kind") rather than misapply it.
//
// Times never go back along a merchant account's statement (book clamps an
// entry to Account.LastEntryAt), so a walk bounded by time finds where to
// start by halving and stops at its range's edge (Reader.Journal).
//
// Keys starting with 0x00 are the store's own (package wal: the applied
// index).
//
// # Money
//
// Amounts are integers in the currency's minor units (Minor). Request text is
// parsed through apd with a context that traps inexact results, so "10.001"
// GHS is an error, never a rounding; responses are formatted from the
// integer. Every movement is a set of postings that sums to zero; a set that
// does not is a bug and panics. Percentage fees round half up through one
// helper, as a pure function of a FeeSchedule (method.go); the schedules
// themselves are data in the catalogue of methods (package rails), read by
// the operations that stamp each fee in its command. Method types are a
// frozen enum (MethodType), stored as the strings they were stored as.
//
// # Concurrency
//
// State is not safe for concurrent use: one goroutine at a time applies,
// flushes and releases (the FSM hands it between its goroutines under a
// lock), but for PublishFlushed, which may run beside Apply. Reader is safe
// for concurrent use. A failed read or write of the state
// store panics with a StoreError: Apply cannot go on without its state.
//
// # Never
//
// This package and its feature packages do no I/O (but through the
// KVReader and KVWriter they are handed), read no clock, draw no random
// numbers, start no goroutines, and import only the standard library, apd
// and (the features) the ledger.
package ledger
