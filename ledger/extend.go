package ledger

import (
	"fmt"
	"sort"
)

// Kinds and record types added after the first nine commands plug in through
// this file, so that each feature keeps its rules, its codec and its
// snapshot section in its own file:
//
//   - a command type implements applier and registers its decoder with
//     registerCommand from an init function;
//   - a kind of record lives in a store[V], which State.sections lists in a
//     fixed order, so that snapshots write it and Restore reads it back.
//
// Kind numbers are allocated in ranges, one per feature, and frozen like the
// first nine:
//
//	10–19  the sandbox clock (10, 11), cross-currency payouts (12)
//	20–49  money movement: rates, quotes, conversions, virtual accounts,
//	       crypto addresses, orders, payment links, checkout sessions
//	50–69  recipients, files, disputes
//	70–89  webhooks: endpoints, secrets, deliveries

// applier is a command that carries its own rule.
type applier interface {
	Command
	apply(s *State) Result
}

var commandDecoders = map[Kind]func(*decoder) Command{}

// registerCommand makes a command kind decodable. It is called from init
// functions; a kind registered twice is a programming error.
func registerCommand(k Kind, decode func(*decoder) Command) {
	if k <= KindSettleCollection {
		panic(fmt.Sprintf("ledger: kind %d belongs to the built-in commands", k))
	}
	if _, dup := commandDecoders[k]; dup {
		panic(fmt.Sprintf("ledger: kind %d registered twice", k))
	}
	commandDecoders[k] = decode
}

// registeredKinds lists the registered kinds in order, for tests.
func registeredKinds() []Kind {
	ks := make([]Kind, 0, len(commandDecoders))
	for k := range commandDecoders {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// section is one kind of record in a snapshot, after the built-in sections.
// Its name is written in the snapshot, so a section is never renamed.
type section interface {
	sectionName() string
	// freezeSection captures the records in O(1) for a snapshot; live
	// captures them without freezing, for View.
	freezeSection() sectionView
	liveSection() sectionView
	thawSection()
	// restoreRecord decodes one record, as written by the view, and inserts
	// it with its indexes.
	restoreRecord(s *State, d *decoder)
}

// sectionView is the records of one section at one moment.
type sectionView interface {
	len() int
	each(fn func(enc func(*encoder)))
}

// store is a table of one kind of record, keyed by id, with its creation
// order and each organization's list (oldest first, for paging newest
// first). Records are values and are replaced, never mutated in place, so a
// frozen store stays as it was.
type store[V any] struct {
	name  string
	rows  table[V]
	order appendList[string]
	byOrg map[string]*appendList[string]

	key    func(*V) (id, org string)
	encode func(*encoder, *V)
	decode func(*decoder) V
	// index, if set, rebuilds a feature's secondary indexes when a record
	// is restored from a snapshot.
	index func(s *State, v V)
}

func newStore[V any](name string, key func(*V) (string, string), enc func(*encoder, *V), dec func(*decoder) V) *store[V] {
	return &store[V]{
		name: name, rows: newTable[V](), byOrg: make(map[string]*appendList[string]),
		key: key, encode: enc, decode: dec,
	}
}

// get returns the record with id.
func (t *store[V]) get(id string) (V, bool) { return t.rows.get(id) }

// insert adds a new record: it must not exist yet.
func (t *store[V]) insert(v V) {
	id, org := t.key(&v)
	t.rows.put(id, v)
	t.order.append(id)
	indexOf(t.byOrg, org).append(id)
}

// put replaces an existing record.
func (t *store[V]) put(v V) {
	id, _ := t.key(&v)
	t.rows.put(id, v)
}

// owned returns the record with id if it belongs to org: another
// organization's id is as unknown as a made-up one.
func (t *store[V]) owned(org, id string) (V, bool) {
	v, ok := t.rows.get(id)
	if !ok {
		var zero V
		return zero, false
	}
	if _, o := t.key(&v); o != org {
		var zero V
		return zero, false
	}
	return v, true
}

// page returns one page of org's records, newest first, that keep accepts.
func (t *store[V]) page(org string, before Cursor, limit int, keep func(V) bool) Page[V] {
	if keep == nil {
		keep = func(V) bool { return true }
	}
	return page(t.byOrg[org], before, limit, t.rows.get, keep)
}

// count returns how many records org has.
func (t *store[V]) count(org string) int {
	if l := t.byOrg[org]; l != nil {
		return l.len()
	}
	return 0
}

func (t *store[V]) sectionName() string { return t.name }

func (t *store[V]) freezeSection() sectionView {
	base := t.rows.freeze()
	return storeView[V]{order: t.order.view(), get: lookup(base), enc: t.encode}
}

func (t *store[V]) liveSection() sectionView {
	return storeView[V]{order: t.order.view(), get: t.rows.get, enc: t.encode}
}

func (t *store[V]) thawSection() { t.rows.thaw() }

func (t *store[V]) restoreRecord(s *State, d *decoder) {
	v := t.decode(d)
	if d.err != nil {
		return
	}
	id, _ := t.key(&v)
	if _, dup := t.rows.get(id); dup {
		d.fail(fmt.Errorf("ledger: %s %s restored twice", t.name, id))
		return
	}
	t.insert(v)
	if t.index != nil {
		t.index(s, v)
	}
}

type storeView[V any] struct {
	order appendList[string]
	get   func(string) (V, bool)
	enc   func(*encoder, *V)
}

func (v storeView[V]) len() int { return v.order.len() }

func (v storeView[V]) each(fn func(enc func(*encoder))) {
	v.order.all(func(_ int, id string) {
		r, ok := v.get(id)
		if !ok {
			panic("ledger: snapshot order names a missing record " + id)
		}
		fn(func(e *encoder) { v.enc(e, &r) })
	})
}
