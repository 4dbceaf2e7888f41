package ledger

// Kernel exports for package disputes (ledger/disputes): a dispute holds
// part of a merchant's balance while it is open and, when the merchant
// loses, books the amount back to the collections source; its checks read
// the disputed collection; the file signing key is a record kept out of
// the organizations' lists; Check counts the disputes' holds; and the blob
// sweep walks every file.

// Collection returns the collection with id, open or closed: a dispute is
// opened against a completed one.
func (s *State) Collection(id string) (Collection, bool) { return s.collections.get(id) }

// Account returns the balance account with number.
func (s *State) Account(number string) (Account, bool) { return s.accounts.get(number) }

// Hold moves the amount held on an account by delta (more than zero
// holds, less releases): held money stays in Total but not in Available.
// The caller checks Available first; a release of more than is held, or
// an unknown account, is a bug and panics.
func (s *State) Hold(number string, delta Minor) {
	a, ok := s.accounts.get(number)
	if !ok || a.Held+delta < 0 {
		panic("ledger: hold of " + number + " out of range")
	}
	a.Held += delta
	s.accounts.put(a)
}

// Posting is one leg of a transaction a feature books (Book).
type Posting struct {
	Account string
	Type    EntryType
	Amount  Minor
}

// Book books a balanced set of postings as one transaction, all or none
// (see book): a lost dispute debits the merchant and credits the
// collections source.
func (s *State) Book(at int64, refID, externalRef string, postings []Posting) (uint64, *Error) {
	ps := make([]posting, len(postings))
	for i, p := range postings {
		ps[i] = posting{p.Account, p.Type, p.Amount}
	}
	return s.book(at, refID, externalRef, ps)
}

// SystemAccount returns the number of the service's account for a purpose
// and currency, creating it on first use.
func (s *State) SystemAccount(p AccountPurpose, currency string, at int64) string {
	return s.systemAccount(p, currency, at)
}

// RegisterEntryType adds a feature's type of journal entry, outside the
// built-in range, with its name and the type of resource its reference
// names. It is called from an init function.
func RegisterEntryType(t EntryType, name, referenceType string) {
	registerEntryType(t, name, referenceType)
}

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
