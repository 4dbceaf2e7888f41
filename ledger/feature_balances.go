package ledger

// Balances and the journal, as features reach them: a feature's rule that
// moves money books balanced postings against merchant and system accounts
// (Book), holds part of a balance (Hold), and announces what it credited;
// the kernel keeps the accounts, the journal and their invariants.

// Book applies a balanced set of postings atomically, all or none (an
// account that would overflow refuses them all); a conversion books its
// two legs through the FX clearing accounts with it.
func (s *State) Book(at int64, refID, externalRef string, postings []Posting) (uint64, *Error) {
	return s.book(at, refID, externalRef, postings)
}

// MerchantAccount returns an organization's balance in currency; with
// create, it opens one the organization does not have yet (a
// conversion's credited balance opens on first touch).
func (s *State) MerchantAccount(org, currency string, at int64, create bool) (Account, bool) {
	return s.merchantAccount(org, currency, at, create)
}

// SystemAccount returns the service's account for a purpose and currency
// (the FX clearing account a conversion leg books against), opening it on
// first use.
func (s *State) SystemAccount(p AccountPurpose, currency string, at int64) string {
	return s.systemAccount(p, currency, at)
}

// EmitCredited records account.credited for a balance a feature's rule
// just credited, with the account as it is after the credit.
func (s *State) EmitCredited(at int64, number string) { s.emitCredited(at, number) }

// RegisterEntryType adds a feature's entry type outside the built-in
// range, by name and the type of resource its entries reference. It is
// called from an init function.
func RegisterEntryType(t EntryType, name, referenceType string) {
	registerEntryType(t, name, referenceType)
}

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

// InsertCollection adds a new collection, the charge of a mobile money
// session or the collection of a deposit, with the kernel's set of open
// collections (which the rail driver moves).
func (s *State) InsertCollection(col Collection) { s.insertCollection(col) }
