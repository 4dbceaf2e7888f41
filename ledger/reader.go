package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"

	"payments/ledger/kv"
)

// Reader answers the read endpoints: from the committed state store, where
// every record is, open or closed, and from the views of the always-open
// records (views.go). It never takes a lock that Apply needs, and a read
// sees whole applied batches: a write acknowledged to a client is in every
// read that starts after the acknowledgement.
//
// A Reader is safe for concurrent use. Its methods panic with a StoreError
// when the state store fails; see package http for where that is caught.
type Reader struct {
	Views
	kv     KVReader
	pinned bool // balances come from kv, not the views (see Pinned)
}

// NewReader returns a Reader over the state store kv and the views of the
// state that writes it.
func NewReader(kv KVReader, v *Views) *Reader { return &Reader{Views: *v, kv: kv} }

// Cursor is a position in one of an organization's lists, which only ever
// grow at the end: a page starting at Cursor c holds items created before
// position c, newest first. Positions never move, so a cursor stays valid
// while new items arrive.
type Cursor uint64

// CursorStart asks for the newest page.
const CursorStart Cursor = math.MaxUint64

// Page is one page of a list, newest first.
type Page[T any] struct {
	Items   []T
	HasMore bool
	Next    Cursor // valid when HasMore
}

// OnePage is a list by a unique key (a reference): the record alone on the
// first page when it was found and kept, and nothing after.
func OnePage[T any](v T, kept bool, before Cursor) Page[T] {
	var p Page[T]
	if kept && before == CursorStart {
		p.Items = append(p.Items, v)
	}
	return p
}

// PageScanMax bounds the index entries one page looks at. A filter that
// matches little may fill only part of a page before it: the page then
// ends early with HasMore set, and its cursor goes on from where it
// stopped. A page never costs more than this, whatever the history.
const PageScanMax = 10_000

// readRecord returns the record of kind k with id.
func readRecord[V any](r *Reader, k *kind[V], id string) (V, bool) {
	sr, ok := k.read(r.kv, id)
	return sr.v, ok
}

// readOwned returns the record with id if it belongs to org.
func readOwned[V any](r *Reader, k *kind[V], org, id string) (V, bool) {
	v, ok := readRecord(r, k, id)
	if !ok {
		return v, false
	}
	if _, o := k.id(&v); o != org {
		var zero V
		return zero, false
	}
	return v, true
}

// readByReference returns the record of kind k that an organization's
// reference names (indexReference), for the by-reference reads and the
// actors' idempotency checks.
func readByReference[V any](r *Reader, k *kind[V], org, ref string) (V, bool) {
	return readFind(r, k, indexReference, refKey(org, ref))
}

// readFind returns the record that lookup index name maps key to.
func readFind[V any](r *Reader, k *kind[V], name byte, key string) (V, bool) {
	var zero V
	if key == "" {
		return zero, false
	}
	id, ok := r.v.lookups.Find(r.kv, k.lookupKey(name, key))
	if !ok {
		return zero, false
	}
	return readRecord(r, k, id)
}

// readPage returns one page from an index of kind k: the entries under
// prefix, whose keys end in a creation sequence number and whose values are
// record ids, newest first from before, keeping those that keep accepts.
func readPage[V any](r *Reader, k *kind[V], prefix kv.Key, before Cursor, limit int, keep func(*V) bool) Page[V] {
	return pageOf(r.kv, prefix, before, limit, func(seq uint64, id []byte) (V, bool) {
		v, ok := readRecord(r, k, string(id))
		if !ok {
			kv.Must(errMissing(k.name, string(id)))
		}
		return v, keep == nil || keep(&v)
	})
}

// pageOf walks the index under prefix backwards from before, resolving each
// entry with get, until it has limit items and knows whether another
// exists, or has looked at PageScanMax entries.
func pageOf[T any](kvr KVReader, prefix kv.Key, before Cursor, limit int, get func(seq uint64, value []byte) (T, bool)) Page[T] {
	pg := pager[T]{limit: limit}
	kv.Scan(kvr, prefix, pageUpper(prefix, before), true, func(key, value []byte) bool {
		seq := kv.TrailingSeq(key)
		if !pg.scan(seq) {
			return false
		}
		v, ok := get(seq, value)
		return !ok || pg.keep(seq, v)
	})
	return pg.page
}

// pageUpper is where a walk backwards under prefix for the page before
// starts.
func pageUpper(prefix kv.Key, before Cursor) []byte {
	if before == CursorStart {
		return kv.PrefixEnd(prefix)
	}
	return slices.Clip(prefix).U64(uint64(before))
}

// pager collects one page, newest first, from the entries a walk offers
// it: it ends the walk once the page has limit items and another, or the
// walk has looked at PageScanMax entries.
type pager[T any] struct {
	page    Page[T]
	limit   int
	scanned int
}

// scan counts the entry at seq as looked at, or reports that the walk ends
// before it.
func (pg *pager[T]) scan(seq uint64) bool {
	if pg.scanned == PageScanMax {
		pg.page.HasMore, pg.page.Next = true, Cursor(seq+1)
		return false
	}
	pg.scanned++
	return true
}

// keep adds the item of the entry at seq, or reports that the page is full
// before it and the walk ends.
func (pg *pager[T]) keep(seq uint64, v T) bool {
	if len(pg.page.Items) == pg.limit {
		pg.page.HasMore, pg.page.Next = true, Cursor(seq+1)
		return false
	}
	pg.page.Items = append(pg.page.Items, v)
	return true
}

func errMissing(what, id string) error {
	return &Error{Code: CodeInternal, Message: "index names " + what + " " + id + ", which is missing"}
}

// OpenCursor is a position in a walk of the open records of a kind: the
// last key seen ("" for the start).
type OpenCursor string

// readOpen returns the open records of kind k among the next limit entries
// of its open set after the position after (by organization, then
// creation), the position to go on from, and whether the walk is done.
func readOpen[V any](r *Reader, k *kind[V], after OpenCursor, limit int) (out []V, next OpenCursor, done bool) {
	prefix := kv.NewKey(k.tag, subOpen)
	lower := []byte(prefix)
	if after != "" {
		lower = append([]byte(after), 0) // the first key after it
	}
	next, done = after, true
	walked := 0
	kv.Scan(r.kv, lower, kv.PrefixEnd(prefix), false, func(key, id []byte) bool {
		if walked == limit {
			done = false
			return false
		}
		walked++
		next = OpenCursor(key)
		v, ok := readRecord(r, k, string(id))
		if !ok {
			kv.Must(errMissing(k.name, string(id)))
		}
		if k.isOpen(&v) { // it may have closed since the walk began
			out = append(out, v)
		}
		return true
	})
	return out, next, done
}

// Snapshotter is a KVReader that can pin a consistent view of itself, for
// reads of many keys that must agree (an audit, an export).
type Snapshotter interface {
	Snapshot() (view KVReader, release func(), err error)
}

// Pinned returns a Reader whose reads of the state store all see one
// moment, and the function that releases it. Its merchant accounts come
// from that moment too, since one command moves several balances (a
// conversion); the other views stay live. Without a Snapshotter under it,
// it returns r itself.
func (r *Reader) Pinned() (*Reader, func()) {
	s, ok := r.kv.(Snapshotter)
	if !ok {
		return r, func() {}
	}
	view, release, err := s.Snapshot()
	kv.Must(err)
	return &Reader{Views: r.Views, kv: view, pinned: true}, release
}

// Account returns the merchant account with the given number, as of the
// Reader's moment when it is pinned.
func (r *Reader) Account(number string) (Account, bool) {
	if !r.pinned {
		return r.Views.Account(number)
	}
	a, ok := readRecord(r, accountKind, number)
	if !ok || a.Purpose != PurposeMerchant {
		return Account{}, false
	}
	return a, true
}

// AccountFor returns an organization's account in a currency, as of the
// Reader's moment when it is pinned.
func (r *Reader) AccountFor(orgID, currency string) (Account, bool) {
	if !r.pinned {
		return r.Views.AccountFor(orgID, currency)
	}
	number, ok := r.v.byOrgCurrency.load(orgKey{orgID, currency})
	if !ok {
		return Account{}, false
	}
	return r.Account(number)
}

// Accounts lists an organization's accounts in the order they were
// opened, as of the Reader's moment when it is pinned: balances that one
// command changed together agree.
func (r *Reader) Accounts(orgID string) []Account {
	if !r.pinned {
		return r.Views.Accounts(orgID)
	}
	numbers, _ := r.v.byOrg.load(orgID)
	out := make([]Account, 0, len(numbers))
	for _, n := range numbers {
		if a, ok := r.Account(n); ok {
			out = append(out, a)
		}
	}
	return out
}

// Check verifies the ledger's invariants (see Check) over one consistent
// view of the state store. It reads the whole journal.
func (r *Reader) Check() error {
	p, release := r.Pinned()
	defer release()
	return Check(p.kv)
}

// Digest returns the SHA-256 of the whole state store (every key and value
// the ledger wrote), over one consistent view: two replicas at the same
// applied index have the same digest. It reads everything.
func (r *Reader) Digest() [32]byte {
	p, release := r.Pinned()
	defer release()
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	kv.Scan(p.kv, []byte{tagCounter}, nil, false, func(k, v []byte) bool {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(k)))])
		h.Write(k)
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
		h.Write(v)
		return true
	})
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}
