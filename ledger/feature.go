package ledger

import "fmt"

// A feature may live in a sub-package of ledger (ledger/recipients is the
// first): its types, its commands, their rules and codecs, and its reads,
// on the kernel this file exports. The kernel keeps what every feature
// shares — organizations, keys, balances and the journal, payouts and
// collections, the events, the state store's layout — and calls a feature
// only through what the feature registered:
//
//   - its commands implement Applier and register their decoders from an
//     init function (RegisterCommand, registerFields), under kind numbers
//     of the feature's range (extend.go);
//   - its kinds of record are RecordKinds (NewRecordKind), each with a tag
//     of layout.go, the one place where tags are allotted;
//   - what it keeps in a State is made by the function it gives
//     AddFeature, which NewState (and so Load) calls for every State;
//   - a kernel rule it takes part in is a hook it adds from there
//     (AddPayoutCheck);
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
		d.generic = Codec{dec: d}
		c.Fields(&d.generic)
		return c
	})
}

// RecordSpec describes a feature's kind of record: its tag (layout.go), its
// name in messages, where its id and organization are, and its codec, one
// method that both writes and reads it in its frozen order. A kind without
// Open keeps every record in memory (records that grow with merchants, not
// with payments).
type RecordSpec[V any] struct {
	Tag    byte
	Name   string
	ID     func(*V) (id, org string)
	Fields func(*V, *Codec)
	Open   func(*V) bool
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
	k := &kind[V]{
		tag: sp.Tag, name: sp.Name, id: sp.ID, open: sp.Open,
		enc: func(e *Encoder, v *V) {
			e.generic = Codec{enc: e}
			fields(v, &e.generic)
		},
		dec: func(d *Decoder) (v V) {
			d.generic = Codec{dec: d}
			fields(&v, &d.generic)
			return v
		},
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

// Feature is the handle of what a feature keeps in every State.
type Feature[T any] struct{ i int }

// features make each feature's part of a new State, in the order they
// registered (the order of package initialization).
var features []func(*State) any

// AddFeature registers what a feature keeps in a State: make is called for
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

// ReadList returns one page of an organization's records of kind k, newest
// first from before, keeping those that keep accepts (nil: all).
func ReadList[V any](r *Reader, k RecordKind[V], org string, before Cursor, limit int, keep func(*V) bool) Page[V] {
	return readPage(r, k.k, k.k.listPrefix(org), before, limit, keep)
}
