package ledger

import (
	"encoding/binary"
	"fmt"
	"slices"

	"payments/ledger/kv"
)

// Records live in two tiers (see doc.go). A store is one kind of record in
// the state machine: the open records in memory, where Apply reads and
// changes them, and every record in the state store, where Apply writes
// each change at the end of its batch and finds closed records again when
// it needs them. Readers never touch a store: they read the state store
// through a Reader.

// kind describes one kind of record: its keys in the state store, its codec,
// and its indexes. Kinds are package-level values; tags are frozen.
type kind[V any] struct {
	tag  byte   // first byte of every key of the kind (doc.go)
	name string // in messages: "payout"
	id   func(*V) (id, org string)
	enc  func(*Encoder, *V)
	dec  func(*Decoder) V
	// open reports whether a record can still change, and so stays in
	// memory. Nil: every record stays open (organizations, keys, accounts,
	// endpoints…: they grow with merchants, not with payments).
	open func(*V) bool
	// lookups are the unique keys a record is found by (its reference,
	// the legs of an order). Each is set once, when the record first has
	// it, and never removed.
	lookups []lookup[V]
	// filters are list indexes: the value a record is listed under for
	// each. An entry moves when the value changes; "" is no entry.
	filters []filter[V]
	// unlisted kinds keep no list by organization.
	unlisted bool
	// final kinds never change a record once it closed, so an event about
	// a record's closing can refer to the stored record instead of
	// carrying a copy of it (event.go). put enforces it.
	final bool
}

// lookup is one unique index: key returns the record's key in it, or ""
// for none yet; or, for a key scoped to an organization, ref returns the
// organization and the reference, whose key is refKey(org, ref) (ref ""
// for none yet). ref spares the hot path the joined string.
type lookup[V any] struct {
	name byte
	key  func(*V) string
	ref  func(*V) (org, ref string)
}

// appendKey appends the record's key in the state store's index to b, and
// reports whether it has one.
func (l *lookup[V]) appendKey(b kv.Key, tag byte, v *V) (kv.Key, bool) {
	b = append(b, tag, subLookup, l.name)
	if l.ref != nil {
		org, ref := l.ref(v)
		return b.Ref(org, ref), ref != ""
	}
	key := l.key(v)
	return b.Str(key), key != ""
}

// has reports whether the record has a key in the index.
func (l *lookup[V]) has(v *V) bool {
	if l.ref != nil {
		_, ref := l.ref(v)
		return ref != ""
	}
	return l.key(v) != ""
}

// filter is one list index: value returns what the record is listed
// under, or "" for nothing.
type filter[V any] struct {
	name  byte
	value func(*V) string
}

// newKind makes a kernel kind of record: its tag, its name in messages and
// where a record's id and organization are. Unless opts say otherwise, its
// records are coded by their fields method, stay open for good, have no
// lookups or filters and are listed by organization.
func newKind[V any, P fielded[V]](tag byte, name string, id func(*V) (id, org string), opts ...func(*kind[V])) *kind[V] {
	k := &kind[V]{tag: tag, name: name, id: id, enc: encodeByFields[V, P], dec: decodeByFields[V, P]}
	for _, opt := range opts {
		opt(k)
	}
	return k
}

// storedBy codes a kind's records by enc and dec: a codec that appends to
// the fields method, or calls it directly on a hot path (decodeByFields).
func storedBy[V any](enc func(*Encoder, *V), dec func(*Decoder) V) func(*kind[V]) {
	return func(k *kind[V]) { k.enc, k.dec = enc, dec }
}

// finalWhileOpen makes a kind final: a record stays open while open says
// so, and never changes once it closed.
func finalWhileOpen[V any](open func(*V) bool) func(*kind[V]) {
	return func(k *kind[V]) { k.open, k.final = open, true }
}

// writtenClosed keeps a kind's records closed from the start
// (ClosedAtOnce).
func writtenClosed[V any](k *kind[V]) { k.open = ClosedAtOnce[V] }

// unlisted keeps no list of a kind's records by organization.
func unlisted[V any](k *kind[V]) { k.unlisted = true }

// indexedBy gives a kind its lookups.
func indexedBy[V any](lookups ...lookup[V]) func(*kind[V]) {
	return func(k *kind[V]) { k.lookups = lookups }
}

// listedBy gives a kind its filters.
func listedBy[V any](filters ...filter[V]) func(*kind[V]) {
	return func(k *kind[V]) { k.filters = filters }
}

// filtersMax bounds a kind's filters, so a row keeps their values inline.
const filtersMax = 4

// Sub-keys of a kind (the second byte of its keys).
const (
	subRecord = 'r' // 'r' id → uvarint(seq) record
	subList   = 'o' // 'o' str(org) seq → id: every record, by creation
	subOpen   = 'h' // 'h' str(org) seq → id: the open records
	subLookup = 'l' // 'l' name str(key) → id
	subFilter = 'f' // 'f' name str(org) str(value) seq → id
	subSeq    = 's' // 's' → uvarint: the last creation sequence number
)

func (k *kind[V]) recordKey(id string) []byte { return k.appendRecordKey(kv.NewKey(), id) }

// appendRecordKey appends the key of the record with id to b.
func (k *kind[V]) appendRecordKey(b kv.Key, id string) kv.Key {
	return append(b, k.tag, subRecord).Str(id)
}

func (k *kind[V]) listPrefix(org string) kv.Key { return kv.NewKey(k.tag, subList).Str(org) }

func (k *kind[V]) openPrefix(org string) kv.Key { return kv.NewKey(k.tag, subOpen).Str(org) }

func (k *kind[V]) lookupKey(name byte, key string) []byte {
	return k.lookupPrefix(kv.NewKey(), name).Str(key)
}

// lookupPrefix appends the prefix of lookup index name's keys to b.
func (k *kind[V]) lookupPrefix(b kv.Key, name byte) kv.Key {
	return append(b, k.tag, subLookup, name)
}

func (k *kind[V]) filterPrefix(name byte, org, value string) kv.Key {
	return kv.NewKey(k.tag, subFilter, name).Str(org).Str(value)
}

func (k *kind[V]) isOpen(v *V) bool { return k.open == nil || k.open(v) }

// encodeStored is a record as the state store holds it: its creation
// sequence number, then the record.
func (k *kind[V]) encodeStored(e *Encoder, seq uint64, v *V) {
	e.Uvarint(seq)
	k.enc(e, v)
}

func (k *kind[V]) decodeStored(d *Decoder) storedRecord[V] {
	seq := d.Uvarint()
	return storedRecord[V]{seq: seq, v: k.dec(d)}
}

type storedRecord[V any] struct {
	seq uint64
	v   V
}

// read returns the record with id from the state store.
func (k *kind[V]) read(kvr KVReader, id string) (storedRecord[V], bool) {
	return kv.GetRecord(kvr, k.recordKey(id), k.decodeStored)
}

// readInto is read with the key built in *scratch, which it keeps grown.
func (k *kind[V]) readInto(kvr KVReader, id string, scratch *kv.Key) (storedRecord[V], bool) {
	*scratch = k.appendRecordKey((*scratch)[:0], id)
	return kv.GetRecord(kvr, *scratch, k.decodeStored)
}

// row is a record in memory: an open one, or one changed in the batch
// being applied. It remembers what the state store holds of it, so a flush
// writes only what changed.
type row[V any] struct {
	seq uint64
	v   V

	stored     bool               // the record and its list entry are in the state store
	storedOpen bool               // its open-set entry is
	lookups    uint8              // bit i: lookup i's key is written
	filterVals [filtersMax]string // the filter entries written
	dirty      bool               // changed since the last flush
}

// store is one kind of record in a State. It is owned by the goroutine that
// applies commands.
type store[V any] struct {
	k  *kind[V]
	kv *kvRef

	rows  map[string]*row[V] // open records, and those changed since the last commit
	seq   uint64             // the last creation sequence number
	dirty []*row[V]          // rows changed since the last flush, in order of first change
	// key is scratch for a key read or written, and tmp for a record whose
	// address a kind's functions take: each use ends before the next
	// begins. They keep the hot path free of allocations.
	key kv.Key
	tmp V
	// closed are rows that closed in the flushed batch: they leave memory
	// once the batch is committed, when the state store has them.
	closed []string
	// pending are lookup keys set since the last flush, and flushing those
	// of the flushed batch until it is committed: keys the state store
	// does not have yet, the key in the state store → id.
	pending, flushing map[string]string
	// byOrg lists the records of an always-open kind by organization, in
	// creation order (Apply iterates an organization's endpoints).
	byOrg map[string][]string
	// index, if set, is called for each record loaded at start (Load),
	// so that a feature rebuilds its own maps of open records.
	index func(*V)
	// publish, if set, is called for each record changed in a batch once
	// the batch is committed (the views readers see; views.go).
	publish    func(*V)
	publishing []V // the records as flushed, for publish
	// filter holds every lookup key, for kinds with lookups: a key it
	// proves absent is not read from the state store (kv.LookupFilter).
	filter *kv.LookupFilter

	seqWritten uint64 // the sequence number the state store holds
}

func newStore[V any](k *kind[V], kv *kvRef) *store[V] {
	if len(k.filters) > filtersMax || len(k.lookups) > 8 {
		panic("ledger: kind " + k.name + " has too many indexes")
	}
	t := &store[V]{k: k, kv: kv, rows: make(map[string]*row[V]), pending: make(map[string]string), flushing: make(map[string]string)}
	if k.open == nil {
		t.byOrg = make(map[string][]string)
	}
	return t
}

// get returns the record with id, open or closed.
func (t *store[V]) get(id string) (V, bool) {
	if r, ok := t.rows[id]; ok {
		return r.v, true
	}
	sr, ok := t.k.readInto(t.kv, id, &t.key)
	return sr.v, ok
}

// taken reports whether a record in memory (open, or changed in the batch)
// has id. Creates on the hot path check only this: identifiers are drawn
// by the leader at random (actors/ids.go: 67 random bits behind the second
// they were drawn in), and looking for a clash with a closed record would
// cost a read of the state store per create, for a clash that does not
// happen. Apply re-checks everything else.
func (t *store[V]) taken(id string) bool {
	_, ok := t.rows[id]
	return ok
}

// owned returns the record with id if it belongs to org: another
// organization's id is as unknown as a made-up one.
func (t *store[V]) owned(org, id string) (V, bool) {
	v, ok := t.get(id)
	if !ok {
		return v, false
	}
	if _, o := t.k.id(&v); o != org {
		var zero V
		return zero, false
	}
	return v, true
}

// find returns the record whose lookup index name holds key.
func (t *store[V]) find(name byte, key string) (V, bool) {
	if key == "" {
		var zero V
		return zero, false
	}
	t.key = t.k.lookupPrefix(t.key[:0], name).Str(key)
	return t.findKey("", key, false)
}

// byReference returns the record an organization's reference names, in
// memory or in the state store, however old (indexReference: the
// reference lookup every idempotent create keeps). "" names nothing.
func (t *store[V]) byReference(org, ref string) (V, bool) {
	if ref == "" {
		var zero V
		return zero, false
	}
	t.key = t.k.lookupPrefix(t.key[:0], indexReference).Ref(org, ref)
	return t.findKey(org, ref, true)
}

// findKey returns the record whose lookup key is in t.key: key, or with
// scoped refKey(org, key).
func (t *store[V]) findKey(org, key string, scoped bool) (V, bool) {
	var zero V
	lk := t.key
	if id, ok := t.pending[string(lk)]; ok {
		return t.get(id)
	}
	if id, ok := t.flushing[string(lk)]; ok {
		return t.get(id)
	}
	id, ok := t.filter.Find(t.kv, lk)
	if !ok {
		return zero, false
	}
	v, ok := t.get(id)
	if !ok {
		if scoped {
			key = refKey(org, key)
		}
		kv.Must(fmt.Errorf("%s lookup %q names %s, which is missing", t.k.name, key, id))
	}
	return v, true
}

// nextSeq is the sequence number the next insert takes.
func (t *store[V]) nextSeq() uint64 { return t.seq + 1 }

// insert adds a new record; its id must be new.
func (t *store[V]) insert(v V) {
	r := &row[V]{v: v}
	id, org := t.k.id(&r.v)
	if _, ok := t.rows[id]; ok {
		panic(fmt.Sprintf("ledger: %s %s inserted twice", t.k.name, id))
	}
	t.seq++
	r.seq = t.seq
	t.rows[id] = r
	if t.byOrg != nil {
		t.byOrg[org] = append(t.byOrg[org], id)
	}
	t.touch(r)
}

// put replaces a record that exists, open or closed.
func (t *store[V]) put(v V) {
	t.tmp = v
	id, _ := t.k.id(&t.tmp)
	r, ok := t.rows[id]
	if !ok {
		sr, found := t.k.readInto(t.kv, id, &t.key)
		if !found {
			panic(fmt.Sprintf("ledger: put of %s %s, which does not exist", t.k.name, id))
		}
		if t.k.final {
			panic(fmt.Sprintf("ledger: closed %s %s changed; its kind is final", t.k.name, id))
		}
		r = t.storedRow(sr)
		t.rows[id] = r
	}
	r.v = v
	t.touch(r)
}

// storedRow is the row of a record read from the state store: everything
// about it is written already.
func (t *store[V]) storedRow(sr storedRecord[V]) *row[V] {
	r := &row[V]{seq: sr.seq, v: sr.v, stored: true, storedOpen: t.k.isOpen(&sr.v)}
	for i := range t.k.lookups {
		if t.k.lookups[i].has(&sr.v) {
			r.lookups |= 1 << i
		}
	}
	for i, f := range t.k.filters {
		r.filterVals[i] = f.value(&sr.v)
	}
	return r
}

func (t *store[V]) touch(r *row[V]) {
	for i := range t.k.lookups {
		if r.lookups&(1<<i) != 0 {
			continue
		}
		lk, ok := t.k.lookups[i].appendKey(t.key[:0], t.k.tag, &r.v)
		t.key = lk
		if !ok {
			continue
		}
		id, _ := t.k.id(&r.v)
		if prev, ok := t.pending[string(lk)]; !ok {
			t.filter.Add(lk)
			t.pending[string(lk)] = id
		} else if prev != id {
			t.pending[string(lk)] = id
		}
	}
	if !r.dirty {
		r.dirty = true
		t.dirty = append(t.dirty, r)
	}
}

// closedNow returns the record with id if it closed in the batch being
// flushed (its row is still in memory), for events that refer to it.
func (t *store[V]) closedNow(id string) (*V, bool) {
	r, ok := t.rows[id]
	if !ok || !t.k.final || !r.stored || r.storedOpen || r.dirty {
		return nil, false
	}
	return &r.v, true
}

// count returns how many records of an always-open kind org has.
func (t *store[V]) count(org string) int { return len(t.byOrg[org]) }

// each calls fn with every record of an always-open kind that org has, in
// creation order.
func (t *store[V]) each(org string, fn func(V)) {
	for _, id := range t.byOrg[org] {
		fn(t.rows[id].v)
	}
}

// flush writes every change since the last flush.
func (t *store[V]) flush(w *kv.SortedWriter, e *Encoder) {
	k := t.k
	for _, r := range t.dirty {
		id, org := k.id(&r.v)
		e.Reset()
		k.encodeStored(e, r.seq, &r.v)
		t.key = k.appendRecordKey(t.key[:0], id)
		w.Set(t.key, e.Bytes())
		if !r.stored && !k.unlisted {
			t.key = append(t.key[:0], k.tag, subList).Str(org).U64(r.seq)
			w.SetString(t.key, id)
		}
		open := k.isOpen(&r.v)
		if open != r.storedOpen {
			t.key = append(t.key[:0], k.tag, subOpen).Str(org).U64(r.seq)
			if open {
				w.SetString(t.key, id)
			} else {
				w.SingleDelete(t.key)
			}
		}
		for i := range k.lookups {
			if r.lookups&(1<<i) != 0 {
				continue
			}
			lk, ok := k.lookups[i].appendKey(t.key[:0], k.tag, &r.v)
			t.key = lk
			if ok {
				w.SetString(lk, id)
				r.lookups |= 1 << i
			}
		}
		for i, f := range k.filters {
			val := f.value(&r.v)
			if val == r.filterVals[i] {
				continue
			}
			if r.filterVals[i] != "" {
				t.key = append(t.key[:0], k.tag, subFilter, f.name).Str(org).Str(r.filterVals[i]).U64(r.seq)
				w.SingleDelete(t.key)
			}
			if val != "" {
				t.key = append(t.key[:0], k.tag, subFilter, f.name).Str(org).Str(val).U64(r.seq)
				w.SetString(t.key, id)
			}
			r.filterVals[i] = val
		}
		r.stored, r.storedOpen, r.dirty = true, open, false
		if !open {
			t.closed = append(t.closed, id)
		}
		if t.publish != nil {
			t.publishing = append(t.publishing, r.v)
		}
	}
	t.dirty = t.dirty[:0]
	if t.seq != t.seqWritten {
		var b [binary.MaxVarintLen64]byte
		t.key = append(t.key[:0], k.tag, subSeq)
		w.Set(t.key, b[:binary.PutUvarint(b[:], t.seq)])
		t.seqWritten = t.seq
	}
}

func (t *store[V]) openRows() int { return len(t.rows) }

// flushed hands the lookup keys of the batch just flushed to flushing,
// which must be empty: released.
func (t *store[V]) flushed() {
	t.pending, t.flushing = t.flushing, t.pending
}

// publishFlushed publishes the records of the flushed batch as it holds
// them. It touches nothing Apply does, so it may run beside it.
func (t *store[V]) publishFlushed() {
	for i := range t.publishing {
		t.publish(&t.publishing[i])
	}
	clear(t.publishing)
	t.publishing = t.publishing[:0]
}

// releaseFlushed drops from memory the rows that closed in the flushed
// batch, and forgets its lookup keys: the state store has them now. A row
// changed again since stays.
func (t *store[V]) releaseFlushed() {
	for _, id := range t.closed {
		if r, ok := t.rows[id]; ok && !r.dirty && !r.storedOpen {
			delete(t.rows, id)
		}
	}
	t.closed = t.closed[:0]
	clear(t.flushing)
}

// load reads the kind's open records from the state store.
func (t *store[V]) load() {
	k := t.k
	t.seq = readKindSeq(t.kv, k.tag)
	t.seqWritten = t.seq
	// The open set is ordered by organization, then creation, so byOrg
	// comes out in creation order.
	prefix := kv.NewKey(k.tag, subOpen)
	kv.Scan(t.kv, prefix, kv.PrefixEnd(prefix), false, func(_, id []byte) bool {
		sr, ok := k.read(t.kv, string(id))
		if !ok {
			kv.Must(fmt.Errorf("open %s %s has no record", k.name, id))
		}
		r := t.storedRow(sr)
		rid, org := k.id(&r.v)
		t.rows[rid] = r
		if t.byOrg != nil {
			t.byOrg[org] = append(t.byOrg[org], rid)
		}
		return true
	})
	if t.index != nil {
		// Feature maps are rebuilt in creation order, as the records
		// were first indexed.
		rows := make([]*row[V], 0, len(t.rows))
		for _, r := range t.rows {
			rows = append(rows, r)
		}
		slices.SortFunc(rows, func(a, b *row[V]) int { return cmpUint(a.seq, b.seq) })
		for _, r := range rows {
			t.index(&r.v)
		}
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readKindSeq returns the last creation sequence number of the kind with
// tag: how many records of it were ever made.
func readKindSeq(kvr KVReader, tag byte) uint64 {
	var seq uint64
	_, err := kvr.Get(kv.NewKey(tag, subSeq), func(b []byte) {
		d := kv.NewDecoder(b)
		seq = d.Uvarint()
		kv.Must(d.Err())
	})
	kv.Must(err)
	return seq
}
