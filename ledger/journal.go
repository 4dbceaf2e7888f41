package ledger

import (
	"encoding/binary"
	"fmt"
)

// The journal: every entry ever booked, in the state store. Entries are
// numbered from 1 in booking order; the entries booked together (one
// book call: a payout's debit, fee and their other sides) are one
// transaction, stored as one value under the number of its first entry,
// and listed under each merchant account it touches, so that a statement
// is a walk of that list.

// journal is the applying side: the entry numbers handed out, and the
// transactions booked since the last flush.
type journal struct {
	seq        uint64 // the last entry booked
	seqWritten uint64
	pending    []transaction
}

// transaction is entries booked together: they share a reference and a
// time.
type transaction struct {
	first    uint64 // the sequence number of entries[0]
	entries  []Entry
	merchant []string // the merchant accounts among the entries, once each
}

// add records entries and returns the first one's sequence number.
func (j *journal) add(entries []Entry, isMerchant func(string) bool) uint64 {
	t := transaction{first: j.seq + 1, entries: entries}
	for _, e := range entries {
		if isMerchant(e.Account) && !contains(t.merchant, e.Account) {
			t.merchant = append(t.merchant, e.Account)
		}
	}
	j.seq += uint64(len(entries))
	j.pending = append(j.pending, t)
	return t.first
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (j *journal) flush(w KVWriter, e *encoder) {
	for i := range j.pending {
		t := &j.pending[i]
		e.buf = e.buf[:0]
		encodeTransaction(e, t.entries)
		must(w.Set(newKey(tagJournal).u64(t.first), e.buf))
		for _, a := range t.merchant {
			must(w.Set(newKey(tagStatement).str(a).u64(t.first), nil))
		}
	}
	j.pending = j.pending[:0]
	if j.seq != j.seqWritten {
		writeCounter(w, "journal", j.seq)
		j.seqWritten = j.seq
	}
}

func (j *journal) load(kv KVReader) {
	j.seq = readCounter(kv, "journal")
	j.seqWritten = j.seq
}

func writeCounter(w KVWriter, name string, v uint64) {
	var b [binary.MaxVarintLen64]byte
	must(w.Set(newKey(tagCounter).str(name), b[:binary.PutUvarint(b[:], v)]))
}

func readCounter(kv KVReader, name string) uint64 {
	var v uint64
	_, err := kv.Get(newKey(tagCounter).str(name), func(b []byte) {
		d := decoder{buf: b}
		v = d.uvarint()
		must(d.err)
	})
	must(err)
	return v
}

// A transaction's value: the count of entries, each entry's account, type,
// amount and balance after, then the reference, the external reference and
// the time they share.
func encodeTransaction(e *encoder, entries []Entry) {
	e.uvarint(uint64(len(entries)))
	for i := range entries {
		en := &entries[i]
		e.str(en.Account)
		e.u8(uint8(en.Type))
		e.minor(en.Amount)
		e.minor(en.BalanceAfter)
	}
	e.str(entries[0].RefID)
	e.str(entries[0].ExternalRef)
	e.varint(entries[0].At)
}

func decodeTransaction(d *decoder) []Entry {
	n := d.count()
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = Entry{Account: d.str(), Type: EntryType(d.u8()), Amount: d.minor(), BalanceAfter: d.minor()}
	}
	ref, ext, at := d.str(), d.str(), d.varint()
	for i := range entries {
		entries[i].RefID, entries[i].ExternalRef, entries[i].At = ref, ext, at
	}
	return entries
}

// Entry returns the entry with the given sequence number.
func (r *Reader) Entry(seq uint64) (Entry, bool) {
	if seq == 0 {
		return Entry{}, false
	}
	prefix := newKey(tagJournal)
	var out Entry
	var found bool
	scan(r.kv, prefix, prefix.u64(seq+1), true, func(key, value []byte) bool {
		first := trailingSeq(key)
		entries := decodeOrFail(value, decodeTransaction)
		if seq-first < uint64(len(entries)) {
			out, found = entries[seq-first], true
		}
		return false
	})
	return out, found
}

func decodeOrFail[V any](b []byte, dec func(*decoder) V) V {
	d := decoder{buf: b}
	v := dec(&d)
	if d.err == nil && len(d.buf) != 0 {
		d.err = fmt.Errorf("trailing bytes")
	}
	must(d.err)
	return v
}

// JournalFilter selects entries in an organization's journal; zero fields
// match everything.
type JournalFilter struct {
	Account  string // one balance account, by number
	Currency string // the balance account in this currency
	Type     EntryType
	RefID    string
	From     int64 // unix ms, inclusive; 0 for no bound
	To       int64 // unix ms, inclusive; 0 for no bound
}

// Journal lists an organization's entries newest first (by sequence),
// starting below before: a Cursor from an earlier page of the journal, or
// CursorStart. It merges the statements of the organization's balance
// accounts; with orgID empty, f.Account names the one account to list.
// Paging to the end of one account's journal and summing the amounts gives
// its total.
func (r *Reader) Journal(orgID string, f JournalFilter, before Cursor, limit int) Page[NumberedEntry] {
	var numbers []string
	if orgID == "" {
		numbers = append(numbers, f.Account)
	} else {
		for _, a := range r.Accounts(orgID) {
			if (f.Account == "" || a.Number == f.Account) && (f.Currency == "" || a.Currency == f.Currency) {
				numbers = append(numbers, a.Number)
			}
		}
	}
	ef := EntryFilter{Type: f.Type, RefID: f.RefID, From: f.From, To: f.To}
	streams := make([]*statement, 0, len(numbers))
	defer func() {
		for _, st := range streams {
			st.close()
		}
	}()
	for _, n := range numbers {
		st := r.openStatement(n, before)
		if st.next() {
			streams = append(streams, st)
		} else {
			st.close()
		}
	}
	var p Page[NumberedEntry]
	for scanned := 0; ; scanned++ {
		best := -1
		for i, st := range streams {
			if st.ok && (best < 0 || st.head.Seq > streams[best].head.Seq) {
				best = i
			}
		}
		if best < 0 {
			return p
		}
		head := streams[best].head
		if scanned == PageScanMax || (len(p.Items) == limit && ef.keep(&head.Entry)) {
			p.HasMore, p.Next = true, Cursor(head.Seq+1)
			return p
		}
		if ef.keep(&head.Entry) {
			p.Items = append(p.Items, head)
		}
		streams[best].next()
	}
}

// statement walks one account's entries newest first, below a cursor.
type statement struct {
	r       *Reader
	account string
	it      Iterator
	below   uint64          // entries from this sequence number up are skipped
	buf     []NumberedEntry // what is left of the current transaction, oldest first
	head    NumberedEntry
	ok      bool
}

func (r *Reader) openStatement(account string, before Cursor) *statement {
	prefix := newKey(tagStatement).str(account)
	upper := prefixEnd(prefix)
	if before != CursorStart {
		// A transaction that starts below before may hold entries from
		// before up; load drops those.
		upper = keyBuf(append([]byte(nil), prefix...)).u64(uint64(before))
	}
	it, err := r.kv.NewIter(prefix, upper)
	must(err)
	st := &statement{r: r, account: account, it: it, below: uint64(before)}
	if it.Last() {
		st.load()
	} else {
		must(it.Error())
		st.close()
	}
	return st
}

// load reads the transaction at the iterator into buf.
func (st *statement) load() {
	first := trailingSeq(st.it.Key())
	var entries []Entry
	ok, err := st.r.kv.Get(newKey(tagJournal).u64(first), func(b []byte) { entries = decodeOrFail(b, decodeTransaction) })
	must(err)
	if !ok {
		must(fmt.Errorf("statement of %s names transaction %d, which is missing", st.account, first))
	}
	st.buf = st.buf[:0]
	for i, e := range entries {
		seq := first + uint64(i)
		if e.Account == st.account && seq < st.below {
			st.buf = append(st.buf, NumberedEntry{Seq: seq, Entry: e})
		}
	}
}

// next moves head to the next entry, newest first; ok reports whether
// there was one.
func (st *statement) next() bool {
	for len(st.buf) == 0 {
		if st.it == nil {
			st.ok = false
			return false
		}
		if !st.it.Prev() {
			must(st.it.Error())
			st.close()
			st.ok = false
			return false
		}
		st.load()
	}
	st.head = st.buf[len(st.buf)-1]
	st.buf = st.buf[:len(st.buf)-1]
	st.ok = true
	return true
}

func (st *statement) close() {
	if st.it != nil {
		st.it.Close()
		st.it = nil
	}
}

// OrgEntry returns the entry with sequence seq if it is on one of the
// organization's balance accounts, with that account.
func (r *Reader) OrgEntry(orgID string, seq uint64) (NumberedEntry, Account, bool) {
	e, ok := r.Entry(seq)
	if !ok {
		return NumberedEntry{}, Account{}, false
	}
	a, ok := r.Account(e.Account)
	if !ok || a.OrgID != orgID {
		return NumberedEntry{}, Account{}, false
	}
	return NumberedEntry{Seq: seq, Entry: e}, a, true
}
