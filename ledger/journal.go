package ledger

import (
	"encoding/binary"
	"fmt"
	"slices"

	"payments/ledger/kv"
)

// The journal: every entry ever booked, in the state store. Entries are
// numbered from 1 in booking order; the entries booked together (one book
// call: a payout's debit, fee and their other sides) are one transaction.
// Each flush writes the transactions booked since the last one as one page,
// under the number of its first entry, and for each merchant account they
// touch, a page of that account's entries alone, so that a statement is a
// walk of the account's pages and nothing else.

// journal is the applying side: the entry numbers handed out, and the
// transactions booked since the last flush. A page holds the transactions
// of one log entry (State.EndEntry), so that pages are the same on every
// node whatever batches the log was applied in.
type journal struct {
	seq        uint64 // the last entry booked
	seqWritten uint64
	pending    []transaction
	ends       []int // pending[:ends[i]] ends the i-th log entry's page
	// entries and merchant hold the pending transactions' entries, which
	// take slices of them: one allocation for many transactions.
	entries   []Entry
	merchant  []bool
	byAccount kv.Grouper[NumberedEntry] // flush's scratch
	key       kv.Key                    // flush's scratch
}

// endEntry closes the page of the log entry just applied.
func (j *journal) endEntry() {
	if n := len(j.pending); n > 0 && (len(j.ends) == 0 || j.ends[len(j.ends)-1] < n) {
		j.ends = append(j.ends, n)
	}
}

// transaction is entries booked together: they share a reference and a
// time.
type transaction struct {
	first    uint64 // the sequence number of entries[0]
	entries  []Entry
	merchant []bool // entries[i] is on a merchant account
}

// newEntries returns room for n entries, for book to fill and then add or
// drop: the room is taken only by add.
func (j *journal) newEntries(n int) []Entry {
	at := len(j.entries)
	j.entries = slices.Grow(j.entries, n)[:at+n]
	room := j.entries[at : at+n : at+n]
	clear(room)
	j.entries = j.entries[:at]
	return room
}

// newMerchantFlags returns room for the flags of n entries, which say
// whether each is on a merchant account, for add.
func (j *journal) newMerchantFlags(n int) []bool {
	at := len(j.merchant)
	j.merchant = slices.Grow(j.merchant, n)[:at+n]
	room := j.merchant[at : at+n : at+n]
	j.merchant = j.merchant[:at]
	return room
}

// add records entries and their merchant flags, which newEntries and
// newMerchantFlags returned, and returns the first entry's sequence
// number.
func (j *journal) add(entries []Entry, merchant []bool) uint64 {
	j.entries = j.entries[:len(j.entries)+len(entries)]
	j.merchant = j.merchant[:len(j.merchant)+len(merchant)]
	t := transaction{first: j.seq + 1, entries: entries, merchant: merchant}
	j.seq += uint64(len(entries))
	j.pending = append(j.pending, t)
	return t.first
}

func (j *journal) flush(w *kv.SortedWriter, e *Encoder) {
	j.endEntry()
	start := 0
	for _, end := range j.ends {
		j.flushPage(w, e, j.pending[start:end])
		start = end
	}
	clear(j.pending) // the entries' strings
	j.pending, j.ends = j.pending[:0], j.ends[:0]
	// The slabs are reused, but one huge batch does not pin its memory.
	if cap(j.entries) > journalSlabMax {
		j.entries, j.merchant = nil, nil
	}
	clear(j.entries)
	j.entries, j.merchant = j.entries[:0], j.merchant[:0]
	if j.seq != j.seqWritten {
		writeCounter(w, "journal", j.seq)
		j.seqWritten = j.seq
	}
}

// journalSlabMax bounds the entries a journal keeps room for between
// flushes.
const journalSlabMax = 1 << 16

// flushPage writes the transactions of one log entry: the journal page,
// and a statement page for each merchant account they touch.
func (j *journal) flushPage(w *kv.SortedWriter, e *Encoder, page []transaction) {
	e.Reset()
	e.Uvarint(uint64(len(page)))
	for i := range page {
		encodeTransaction(e, page[i].entries)
	}
	j.key = append(j.key[:0], tagJournal).U64(page[0].first)
	w.Set(j.key, e.Bytes())
	for _, t := range page {
		for i, en := range t.entries {
			if t.merchant[i] {
				j.byAccount.Add(en.Account, NumberedEntry{Seq: t.first + uint64(i), Entry: en})
			}
		}
	}
	for i, account := range j.byAccount.Keys() {
		entries := j.byAccount.Group(i)
		e.Reset()
		encodeStatementPage(e, entries)
		j.key = append(j.key[:0], tagStatement).Str(account).U64(entries[0].Seq)
		w.Set(j.key, e.Bytes())
	}
	j.byAccount.Reset()
}

func (j *journal) load(kv KVReader) {
	j.seq = readCounter(kv, "journal")
	j.seqWritten = j.seq
}

func writeCounter(w KVWriter, name string, v uint64) {
	var b [binary.MaxVarintLen64]byte
	kv.Must(w.Set(kv.NewKey(tagCounter).Str(name), b[:binary.PutUvarint(b[:], v)]))
}

func readCounter(kvr KVReader, name string) uint64 {
	var v uint64
	_, err := kvr.Get(kv.NewKey(tagCounter).Str(name), func(b []byte) {
		d := kv.NewDecoder(b)
		v = d.Uvarint()
		kv.Must(d.Err())
	})
	kv.Must(err)
	return v
}

// A transaction: the count of entries, each entry's account, type, amount
// and balance after, then the reference, the external reference and the
// time they share. A journal page is the count of transactions, then each.
func encodeTransaction(e *Encoder, entries []Entry) {
	e.Uvarint(uint64(len(entries)))
	for i := range entries {
		en := &entries[i]
		e.Str(en.Account)
		e.U8(uint8(en.Type))
		e.Varint(int64(en.Amount))
		e.Varint(int64(en.BalanceAfter))
	}
	e.Str(entries[0].RefID)
	e.Str(entries[0].ExternalRef)
	e.Varint(entries[0].At)
}

func decodeTransaction(d *Decoder) []Entry {
	n := d.Count()
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = Entry{Account: d.Str(), Type: EntryType(d.U8()), Amount: Minor(d.Varint()), BalanceAfter: Minor(d.Varint())}
	}
	ref, ext, at := d.Str(), d.Str(), d.Varint()
	for i := range entries {
		entries[i].RefID, entries[i].ExternalRef, entries[i].At = ref, ext, at
	}
	return entries
}

// eachEntry calls fn with each entry of a journal page, in order, numbered
// from first, until fn returns false.
func eachEntry(page []byte, first uint64, fn func(NumberedEntry) bool) {
	d := kv.NewDecoder(page)
	n := d.Count()
	seq := first
	for i := 0; i < n && d.Err() == nil; i++ {
		for _, en := range decodeTransaction(&d) {
			if d.Err() == nil && !fn(NumberedEntry{Seq: seq, Entry: en}) {
				return
			}
			seq++
		}
	}
	kv.Must(d.Err())
}

// A statement page: an account's entries of one journal page, oldest
// first: the count, then each entry's sequence number, type, amount,
// balance after, reference, external reference and time.
func encodeStatementPage(e *Encoder, entries []NumberedEntry) {
	e.Uvarint(uint64(len(entries)))
	for i := range entries {
		n := &entries[i]
		e.Uvarint(n.Seq)
		e.U8(uint8(n.Entry.Type))
		e.Varint(int64(n.Entry.Amount))
		e.Varint(int64(n.Entry.BalanceAfter))
		e.Str(n.Entry.RefID)
		e.Str(n.Entry.ExternalRef)
		e.Varint(n.Entry.At)
	}
}

func decodeStatementPage(d *Decoder, account string, out []NumberedEntry) []NumberedEntry {
	n := d.Count()
	for i := 0; i < n && d.Err() == nil; i++ {
		out = append(out, NumberedEntry{Seq: d.Uvarint(), Entry: Entry{Account: account, Type: EntryType(d.U8()),
			Amount: Minor(d.Varint()), BalanceAfter: Minor(d.Varint()), RefID: d.Str(), ExternalRef: d.Str(), At: d.Varint()}})
	}
	return out
}

// Entry returns the entry with the given sequence number.
func (r *Reader) Entry(seq uint64) (Entry, bool) {
	if seq == 0 {
		return Entry{}, false
	}
	prefix := kv.NewKey(tagJournal)
	var out Entry
	var found bool
	kv.Scan(r.kv, prefix, prefix.U64(seq+1), true, func(key, page []byte) bool {
		eachEntry(page, kv.TrailingSeq(key), func(n NumberedEntry) bool {
			if n.Seq == seq {
				out, found = n.Entry, true
				return false
			}
			return n.Seq < seq
		})
		return false
	})
	return out, found
}

func decodeOrFail[V any](b []byte, dec func(*Decoder) V) V {
	d := kv.NewDecoder(b)
	v := dec(&d)
	if d.Err() == nil && len(d.Rest()) != 0 {
		d.Fail(fmt.Errorf("trailing bytes"))
	}
	kv.Must(d.Err())
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
		if ef.To != 0 {
			st.skipNewer(ef.To)
		}
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
		if ef.From != 0 && head.Entry.At < ef.From {
			// Everything further down this account is older still.
			streams[best].close()
			streams[best].ok = false
			continue
		}
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
	buf     []NumberedEntry // what is left of the current page, oldest first
	head    NumberedEntry
	ok      bool
}

func (r *Reader) openStatement(account string, before Cursor) *statement {
	prefix := kv.NewKey(tagStatement).Str(account)
	upper := kv.PrefixEnd(prefix)
	if before != CursorStart {
		// A page that starts below before may hold entries from before
		// up; load drops those.
		upper = kv.Key(append([]byte(nil), prefix...)).U64(uint64(before))
	}
	it, err := r.kv.NewIter(prefix, upper)
	kv.Must(err)
	st := &statement{r: r, account: account, it: it, below: uint64(before)}
	if it.Last() {
		st.load()
	} else {
		kv.Must(it.Error())
		st.close()
	}
	return st
}

// skipNewer moves the walk down past the pages whose entries are all newer
// than t, without reading them one by one: it searches the pages by their
// first sequence number, halving the range each step, since entry times
// never go back along a merchant account (Account.LastEntryAt).
func (st *statement) skipNewer(t int64) {
	if st.it == nil || !st.it.Last() {
		return
	}
	var scratch []NumberedEntry
	firstOf := func() (seq uint64, at int64) {
		d := kv.NewDecoder(st.it.Value())
		scratch = decodeStatementPage(&d, st.account, scratch[:0])
		kv.Must(d.Err())
		if len(scratch) == 0 {
			return 0, 0
		}
		return scratch[0].Seq, scratch[0].Entry.At
	}
	prefix := kv.NewKey(tagStatement).Str(st.account)
	// newer(s): the first page at or after s starts after t, or there is
	// none. It is false at 0 unless every page is newer, true past the last.
	newer := func(s uint64) bool {
		if !st.it.SeekGE(kv.Key(append([]byte(nil), prefix...)).U64(s)) {
			kv.Must(st.it.Error())
			return true
		}
		_, at := firstOf()
		return at > t
	}
	last, _ := firstOf()
	lo, hi := uint64(0), last+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if newer(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	var ok bool
	if lo <= last {
		// The first page at or after lo starts after t, and so does every
		// page after it; the walk starts below it.
		newer(lo)
		from, _ := firstOf()
		st.below = min(st.below, from)
		ok = st.it.SeekLT(kv.Key(append([]byte(nil), prefix...)).U64(from))
	} else {
		ok = st.it.Last() // the newest page starts at or before t
	}
	if ok {
		st.load()
	} else {
		kv.Must(st.it.Error())
		st.buf = st.buf[:0]
		st.close()
	}
}

// load reads the statement page at the iterator into buf.
func (st *statement) load() {
	d := kv.NewDecoder(st.it.Value())
	st.buf = st.buf[:0]
	page := decodeStatementPage(&d, st.account, st.buf)
	if d.Err() == nil && len(d.Rest()) != 0 {
		d.Fail(fmt.Errorf("trailing bytes in the statement page of %s", st.account))
	}
	kv.Must(d.Err())
	st.buf = page[:0]
	for _, n := range page {
		if n.Seq < st.below {
			st.buf = append(st.buf, n)
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
			kv.Must(st.it.Error())
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
