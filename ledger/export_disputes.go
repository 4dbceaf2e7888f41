package ledger

// Kernel exports for package disputes (ledger/disputes): a dispute holds
// part of a merchant's balance while it is open and, when the merchant
// loses, books the amount back to the collections source; its checks read
// the disputed collection; the file signing key is a record kept out of
// the organizations' lists; Check counts the disputes' holds; and the blob
// sweep walks every file.

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
	prefix := newKey(k.k.tag, subRecord)
	scan(r.kv, prefix, prefixEnd(prefix), false, func(_, v []byte) bool {
		rec := decodeOrFail(v, k.k.decodeStored).v
		fn(&rec)
		return true
	})
}

// holdCounts count what a feature holds on accounts, for Check.
var holdCounts []func(r *Reader, hold func(account string, amount Minor))

// AddHoldCount registers count, which calls hold with every amount a
// feature's records hold on an account (an unresolved dispute's), so that
// Check finds every account's Held equal to the sum. It is called from an
// init function.
func AddHoldCount(count func(r *Reader, hold func(account string, amount Minor))) {
	holdCounts = append(holdCounts, count)
}
