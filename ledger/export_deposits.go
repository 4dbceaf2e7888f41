package ledger

// Kernel exports for package deposits (ledger/deposits): virtual accounts,
// crypto addresses, deposits and deposit feeds. A deposit makes a
// collection, which the kernel keeps, and a deposit feed's credit is paid
// from a provider's float (FloatAccount, export_instructions.go).

// DepositFields is the Deposit record's codec, in its frozen order: the
// deposits' own store (tag TagDeposit) writes it as a collection's stored
// record and a deposit's event subject do.
func DepositFields(d *Deposit, f *Codec) { d.fields(f) }

// DepositMethodType is the method type a deposit's collection stores: its
// collection type (method.go: a virtual account's is kept apart from a
// bank transfer for the encoding).
func DepositMethodType(collectionType string) MethodType {
	if collectionType == CollectionTypeCrypto {
		return MethodCrypto
	}
	return methodVirtualAccount
}

// OrgName returns an organization's name: a virtual account is issued in
// it.
func (s *State) OrgName(orgID string) (string, bool) {
	o, ok := s.orgs.get(orgID)
	return o.Name, ok
}

// BookCollection credits amount, paid from the source account, to a
// merchant account, and moves a positive fee on to fee revenue: the
// entries every way money arrives books, a deposit's included.
func (s *State) BookCollection(at int64, refID, externalRef, source string, account Account, amount, fee Minor) *Error {
	return s.bookCollection(at, refID, externalRef, source, account, amount, fee)
}

// CollectionTaken reports whether a collection in memory has id: a deposit
// feed's poll checks the identifiers the leader drew (store.go, taken).
func (s *State) CollectionTaken(id string) bool { return s.collections.taken(id) }

// CloseCollection stores a collection that just became terminal (a feed
// deposit confirmed or dropped) and takes it out of the open set the rail
// driver moves.
func (s *State) CloseCollection(col Collection) {
	s.collections.put(col)
	delete(s.openCollections, col.ID)
}
