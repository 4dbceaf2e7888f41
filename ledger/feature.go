package ledger

import (
	"errors"
	"fmt"
	"slices"

	"payments/ledger/kv"
)

// A feature may live in a sub-package of ledger (ledger/conversions,
// ledger/deposits, ledger/disputes, ledger/orders, ledger/paymentlinks,
// ledger/recipients, ledger/team, ledger/webhooks): its types, its
// commands, their rules and codecs, and its reads, on the kernel this file
// and its companions (feature_*.go, export_*.go) export. The codec and the
// state store's byte machinery they all share are package ledger/kv. The kernel keeps what every feature shares — organizations,
// keys, balances and the journal, payouts and collections, the events, the
// state store's layout — and calls a feature only through what the
// feature registered:
//
//   - its commands implement Applier and register their decoders from an
//     init function (RegisterCommand, RegisterFieldsCommand), under kind
//     numbers of the feature's range (extend.go);
//   - its kinds of record are RecordKinds (NewRecordKind), each with a tag
//     of layout.go, the one place where tags are allotted, the lookups its
//     records are found by and the list indexes they are listed by
//     (RecordSpec.Lookups, RecordSpec.Filters);
//   - what it keeps in a State is made by the function it gives
//     AddFeature, which NewState (and so Load) calls for every State,
//     with the maps it keeps beside its stores rebuilt as Load reads the
//     open records back (Store.OnLoad);
//   - a kernel rule it takes part in is a hook it adds from there
//     (AddPayoutCheck, AddEventHook, AddHoldCount, RegisterDecided, and
//     from an init function AddPayoutMoved, AddCollectionSettled), and
//     its records may be the subjects of events (RegisterSubject, Emit);
//   - money it moves is booked through the kernel's journal, in balanced
//     postings against merchant and system accounts (feature_balances.go:
//     Book, Hold, RegisterEntryType), and its deadlines go in the kernel's
//     one heap (AddExpirer, AddDeadline);
//   - its outcomes travel in Result.Value, which the package reads back
//     with functions of its own.
//
// A State holds the features registered when it is made: a program must
// link every feature its log may hold. Package raft's FSM links them all.

// FieldsCommand is a feature's command (a pointer P to a T) whose Fields
// method is its whole codec: one list of its fields, in their frozen
// order, that both writes and reads it.
type FieldsCommand[T any] interface {
	*T
	Applier
	Fields(f *Codec)
}

// RegisterFieldsCommand makes kind k decodable by its command's Fields
// method. The command's Encode is then c.Fields(e.Codec()).
func RegisterFieldsCommand[T any, P FieldsCommand[T]](k Kind) {
	RegisterCommand(k, func(d *Decoder) Command {
		c := P(new(T))
		c.Fields(d.Codec())
		return c
	})
}

// RecordSpec describes a feature's kind of record: its tag (layout.go), its
// name in messages, where its id and organization are, and its codec, one
// method that both writes and reads it in its frozen order. A kind without
// Open keeps every record in memory (records that grow with merchants, not
// with payments). Lookups are the unique keys its records are found by.
type RecordSpec[V any] struct {
	Tag     byte
	Name    string
	ID      func(*V) (id, org string)
	Fields  func(*V, *Codec)
	Open    func(*V) bool
	Lookups []Lookup[V]
	// Filters are the kind's list indexes (ReadFiltered), at most four.
	Filters []Filter[V]
}

// Lookup is a unique index of a feature's kind of record, which
// Store.Find and ReadFind search: Key is a record's key in it, "" for none
// yet. A key is set once, when the record first has it, and never removed
// (a token's hash, an email address). Name is one byte, unique within the
// kind; it is part of the state store's layout, so it is frozen like the
// tag.
type Lookup[V any] struct {
	Name byte
	Key  func(*V) string
}

// ClosedAtOnce is the Open of a kind whose records never change once
// written: each is closed from the start, so the state store alone keeps
// it.
func ClosedAtOnce[V any](*V) bool { return false }

// ReceiptSpec completes sp as the spec of a kind of receipts: records that
// never change once written (ClosedAtOnce) and are found by their
// reference (IndexReference), which ref returns with its organization ("" for
// none).
func ReceiptSpec[V any](sp RecordSpec[V], ref func(*V) (org, ref string)) RecordSpec[V] {
	sp.Open = ClosedAtOnce[V]
	sp.Lookups = []Lookup[V]{{Name: IndexReference, Key: func(v *V) string { return RefKey(ref(v)) }}}
	return sp
}

// RecordKind is a feature's kind of record.
type RecordKind[V any] struct{ k *kind[V] }

// recordKinds are the features' kinds of record by tag: a tag is used once.
// Tests sample each kind's codec (TestEncodingsFrozen).
var recordKinds = map[byte]any{}

// NewRecordKind makes a kind of record. It is called once per kind, from a
// package-level variable's initialization; a tag used twice panics.
func NewRecordKind[V any](sp RecordSpec[V]) RecordKind[V] {
	if _, dup := recordKinds[sp.Tag]; dup {
		panic(fmt.Sprintf("ledger: tag %q registered twice", sp.Tag))
	}
	fields := sp.Fields
	var lookups []lookup[V]
	for _, l := range sp.Lookups {
		lookups = append(lookups, lookup[V]{name: l.Name, key: l.Key})
	}
	k := &kind[V]{
		tag: sp.Tag, name: sp.Name, id: sp.ID, open: sp.Open, lookups: lookups,
		enc: func(e *Encoder, v *V) {
			fields(v, e.Codec())
		},
		dec: func(d *Decoder) (v V) {
			fields(&v, d.Codec())
			return v
		},
	}
	for _, f := range sp.Filters {
		k.filters = append(k.filters, filter[V]{f.Name, f.Value})
	}
	recordKinds[sp.Tag] = k
	return RecordKind[V]{k}
}

// Store is a feature's records of one kind in a State: the open ones in
// memory, every one in the state store (store.go). It is the applying
// goroutine's, like the State.
type Store[V any] struct{ t *store[V] }

// AddStore adds a store of kind k to s; it is called from the function a
// feature gives AddFeature.
func AddStore[V any](s *State, k RecordKind[V]) Store[V] { return Store[V]{addStore(s, k.k)} }

// Get returns the record with id, open or closed.
func (st Store[V]) Get(id string) (V, bool) { return st.t.get(id) }

// Owned returns the record with id if it belongs to org: another
// organization's id is as unknown as a made-up one.
func (st Store[V]) Owned(org, id string) (V, bool) { return st.t.owned(org, id) }

// Insert adds a new record; its id must be new.
func (st Store[V]) Insert(v V) { st.t.insert(v) }

// Put replaces a record that exists.
func (st Store[V]) Put(v V) { st.t.put(v) }

// Count is how many records of a kind without Open an organization has.
func (st Store[V]) Count(org string) int { return st.t.count(org) }

// Each calls fn with every record of a kind without Open that org has, in
// creation order: those are all in memory, so a rule over an
// organization's records (its owners) reads no state store.
func (st Store[V]) Each(org string, fn func(V)) { st.t.each(org, fn) }

// Find returns the record whose lookup index name (RecordSpec.Lookups)
// holds key, open or closed; "" finds nothing.
func (st Store[V]) Find(name byte, key string) (V, bool) { return st.t.find(name, key) }

// Taken reports whether a record in memory has id. It is the check of a
// new id on the hot path: ids are drawn by the leader at random, so a
// clash with a closed record, which only the state store holds, is not
// looked for (store.go, taken).
func (st Store[V]) Taken(id string) bool { return st.t.taken(id) }

// OnLoad sets fn, which Load calls with each open record it reads back
// into memory, so that the feature rebuilds the maps it keeps beside the
// store (a member's live sessions). It is called from the function a
// feature gives AddFeature.
func (st Store[V]) OnLoad(fn func(*V)) { st.t.index = fn }

// Feature is the handle of what a feature keeps in every State.
type Feature[T any] struct{ i int }

// features make each feature's part of a new State, in the order they
// registered (the order of package initialization).
var features []func(*State) any

// AddFeature registers what a feature keeps in a State: newPart is called for
// every State made, after the kernel's own stores. It is called from an
// init function.
func AddFeature[T any](newPart func(*State) *T) Feature[T] {
	features = append(features, func(s *State) any { return newPart(s) })
	return Feature[T]{len(features) - 1}
}

// Of returns the feature's part of s.
func (f Feature[T]) Of(s *State) *T { return s.features[f.i].(*T) }

// AddPayoutCheck adds a rule every payout is held to when it is created,
// after the kernel's own checks of its shape and before its funds: check
// returns the refusal, or nil.
func (s *State) AddPayoutCheck(check func(org string, spec *PayoutSpec) *Error) {
	s.payoutChecks = append(s.payoutChecks, check)
}

// ReadOwned returns the record of kind k with id if it belongs to org, from
// the committed state store.
func ReadOwned[V any](r *Reader, k RecordKind[V], org, id string) (V, bool) {
	return readOwned(r, k.k, org, id)
}

// ReadRecord returns the record of kind k with id, whatever its
// organization: for records found by something other than their
// organization's request (a session's member).
func ReadRecord[V any](r *Reader, k RecordKind[V], id string) (V, bool) {
	return readRecord(r, k.k, id)
}

// ReadFind returns the record of kind k whose lookup index name holds key,
// from the committed state store; "" finds nothing.
func ReadFind[V any](r *Reader, k RecordKind[V], name byte, key string) (V, bool) {
	return readFind(r, k.k, name, key)
}

// ReadList returns one page of an organization's records of kind k, newest
// first from before, keeping those that keep accepts (nil: all).
func ReadList[V any](r *Reader, k RecordKind[V], org string, before Cursor, limit int, keep func(*V) bool) Page[V] {
	return readPage(r, k.k, k.k.listPrefix(org), before, limit, keep)
}

// The extension points below were added for package webhooks (endpoints
// and deliveries, ledger/webhooks): list indexes of a feature's records,
// its own event hook and event subject, and reads by index and by the open
// set.

// Filter is a list index of a feature's kind of record (RecordSpec.Filters):
// Value is what a record is listed under, "" for nothing, and Name its
// one-byte name within the kind (layout.go's Index names). An entry moves
// when the value changes. ReadFiltered lists by it.
type Filter[V any] struct {
	Name  byte
	Value func(*V) string
}

// StatusFilter is the IndexStatus filter: a record is listed under its
// status once the status is final (no longer changes), and under nothing
// before, while the open set lists it.
func StatusFilter[V any](status func(*V) (final bool, name string)) Filter[V] {
	return Filter[V]{Name: IndexStatus, Value: func(v *V) string {
		if final, name := status(v); final {
			return name
		}
		return ""
	}}
}

// Index names a feature's filters use (layout.go lists them all).
const (
	IndexStatus = indexStatus // a status that no longer changes
	IndexParent = indexParent // the record this one belongs to
	IndexEvent  = indexEvent  // the event a record is about
)

// NextSeq is the creation sequence number the next Insert takes, for ids
// made from it (Scramble).
func (st Store[V]) NextSeq() uint64 { return st.t.nextSeq() }

// Scramble is the bijection of 64-bit numbers that makes ids made from a
// sequence number look random (EventID); a feature's ids use it too.
func Scramble(z uint64) uint64 { return scramble(z) }

// AddEventHook adds a hook run for every event, in the Apply that emits it
// (a fan-out to subscribers). Features' hooks run in the order they were
// added and before the kernel's own (checkout sessions following their
// collections…), which may emit events of their own: a feature's hook sees
// an event before any event it causes.
func (s *State) AddEventHook(h func(*State, Event)) {
	s.eventHooks = slices.Insert(s.eventHooks, s.featureHooks, h)
	s.featureHooks++
}

// Emit records an event of a feature's rule at leader time at, after the
// change is made and in the same Apply; its subject is a copy of the
// resource (RegisterSubject for a feature's type).
func (s *State) Emit(at int64, org, typ, resourceID string, subject Subject) Event {
	return s.emit(at, org, typ, resourceID, subject)
}

// RegisterSubject makes a feature's record type an event subject of kind k
// (event.go allots the kinds), coded by fields, so that the event log
// writes and reads it. It is called from an init function.
func RegisterSubject[V Subject](k SubjectKind, fields func(*V, *Codec)) {
	registerSubject(k,
		func(e *Encoder, s Subject) {
			v := s.(V)
			fields(&v, e.Codec())
		},
		func(d *Decoder) Subject {
			var v V
			fields(&v, d.Codec())
			return v
		})
}

// ReadFiltered returns one page of an organization's records of kind k
// listed under value in its filter name, newest first from before,
// keeping those that keep accepts (nil: all).
func ReadFiltered[V any](r *Reader, k RecordKind[V], name byte, org, value string, before Cursor, limit int, keep func(*V) bool) Page[V] {
	return readPage(r, k.k, k.k.filterPrefix(name, org, value), before, limit, keep)
}

// ReadByStatus returns one page of an organization's records of kind k of
// one status, or of every status when status is zero: a final status from
// its index (StatusFilter), another from the open set.
func ReadByStatus[V any, S interface {
	comparable
	String() string
}](r *Reader, k RecordKind[V], org string, status S, final func(S) bool, before Cursor, limit int, keep func(*V) bool) Page[V] {
	return readPage(r, k.k, statusPrefix(k.k, org, status, final), before, limit, keep)
}

// statusPrefix is where a list of one status reads (ReadByStatus): a
// final status's index, the open set for another status, every record
// for none.
func statusPrefix[V any, S interface {
	comparable
	String() string
}](k *kind[V], org string, status S, final func(S) bool) kv.Key {
	var all S
	switch {
	case status == all:
		return k.listPrefix(org)
	case final(status):
		return k.filterPrefix(indexStatus, org, status.String())
	}
	return k.openPrefix(org)
}

// ReadOpenList returns one page of an organization's open records of kind
// k, newest first from before, keeping those that keep accepts (nil: all).
func ReadOpenList[V any](r *Reader, k RecordKind[V], org string, before Cursor, limit int, keep func(*V) bool) Page[V] {
	return readPage(r, k.k, k.k.openPrefix(org), before, limit, keep)
}

// ReadOpen walks the open records of kind k of every organization, limit
// entries from after: a new leader's work (see Reader.OpenPayouts).
func ReadOpen[V any](r *Reader, k RecordKind[V], after OpenCursor, limit int) ([]V, OpenCursor, bool) {
	return readOpen(r, k.k, after, limit)
}

// ReadCount is how many records of kind k were ever made.
func ReadCount[V any](r *Reader, k RecordKind[V]) uint64 { return readKindSeq(r.kv, k.k.tag) }

// Encode is v as the state store holds it (after its sequence number), and
// Decode reads it back, failing on bytes left over: for the tests that hold
// a feature's layout to bytes written by hand.
func (k RecordKind[V]) Encode(v *V) []byte {
	var e Encoder
	k.k.enc(&e, v)
	return e.Bytes()
}

// Decode reads what Encode wrote.
func (k RecordKind[V]) Decode(b []byte) (V, error) {
	d := kv.NewDecoder(b)
	v := k.k.dec(&d)
	if d.Err() == nil && len(d.Rest()) != 0 {
		d.Fail(errors.New("ledger: bytes left after the record"))
	}
	return v, d.Err()
}
