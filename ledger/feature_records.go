package ledger

import "payments/ledger/kv"

// Records and codecs, as features reach them beyond feature.go: kinds kept
// out of the organizations' lists, walks of a kind or of what memory holds,
// the kernel's reference lookup (its index name and key) and reads by it,
// and the codec's view of fields a layout appended.

// ReadByReference returns the record of kind k an organization's
// reference names, however old.
func ReadByReference[V any](r *Reader, k RecordKind[V], org, ref string) (V, bool) {
	return readByReference(r, k.k, org, ref)
}

// InMemory is how many records of the store memory holds: once a batch
// is committed, the open ones.
func (st Store[V]) InMemory() int { return len(st.t.rows) }

// NewUnlistedRecordKind is NewRecordKind for a kind that keeps no list by
// organization (a deployment's one key).
func NewUnlistedRecordKind[V any](sp RecordSpec[V]) RecordKind[V] {
	k := NewRecordKind(sp)
	k.k.unlisted = true
	return k
}

// EachRecord calls fn with every record of kind k in the committed state
// store, open or closed, in id order. It walks the whole kind: for audits
// and sweeps, not requests.
func EachRecord[V any](r *Reader, k RecordKind[V], fn func(*V)) {
	prefix := kv.NewKey(k.k.tag, subRecord)
	kv.Scan(r.kv, prefix, kv.PrefixEnd(prefix), false, func(_, v []byte) bool {
		rec := decodeOrFail(v, k.k.decodeStored).v
		fn(&rec)
		return true
	})
}

// EachInMemory calls fn with every record of the store that is in memory:
// the open ones, and those changed since the last release. An expirer
// walks them for its deadlines (Expirer.Each); the order is not defined.
func (st Store[V]) EachInMemory(fn func(*V)) {
	for _, r := range st.t.rows {
		fn(&r.v)
	}
}

// Lookup and filter names a checkout's records use (layout.go).
const (
	IndexReference = indexReference // the organization's reference: RefKey(org, ref)
	IndexLeg       = indexLeg       // a session's collection
)

// RefKey is an organization's reference as a lookup key of IndexReference,
// "" for no reference: references are unique within an organization.
func RefKey(org, ref string) string { return refKey(org, ref) }
