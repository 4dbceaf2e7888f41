package ledger

// Deposits: money that arrives unasked, by bank transfer into a virtual
// account or on chain to a crypto address. Their rules, and virtual
// accounts, crypto addresses and deposit feeds, are package deposits'
// (ledger/deposits). The kernel keeps the Deposit record itself: a
// collection made by a deposit carries it in its stored record
// (Collection.Deposit), events about such a collection use subject kind
// SubjectDepositCollection, whose codec carries the deposit too, and
// collections are listed by the virtual account or address a deposit came
// through (CollectionFilter).

// SubjectDepositCollection tags an event subject that is a collection made
// by a deposit: the collection and its Deposit.
const SubjectDepositCollection SubjectKind = 5

// Collection types of deposits.
const (
	CollectionTypeVirtualAccount = "virtual_account"
	CollectionTypeCrypto         = "crypto"
)

// Deposit is one transfer into a virtual account or to a crypto address,
// with what the rail reported about it.
type Deposit struct {
	ID                string // vad_… (virtual account) or cdp_… (crypto)
	OrgID             string
	CollectionID      string
	Type              string // CollectionTypeVirtualAccount or CollectionTypeCrypto
	VirtualAccountID  string
	CryptoAddressID   string
	Currency          string
	Amount            Minor
	Completed         bool // the outcome; false: the deposit failed
	ExternalReference string

	// The virtual account as the sender saw it.
	Bank, AccountNumber, AccountName string
	// The address as the sender paid it.
	Chain, Address, Tag string
	// SourceReference is the rail's reference: the bank's session id or
	// the transaction hash.
	SourceReference string

	At int64
}

func (c Collection) SubjectKind() SubjectKind {
	if c.Deposit != nil {
		return SubjectDepositCollection
	}
	return SubjectCollection
}

func init() {
	registerSubject(SubjectDepositCollection,
		func(e *Encoder, s Subject) { c := s.(Collection); c.depositFields(e.Codec()) },
		func(d *Decoder) Subject { var c Collection; c.depositFields(d.Codec()); return c })
}

// depositFields are a deposit's collection as its subject kind codes it:
// the collection, then its deposit.
func (c *Collection) depositFields(f *Codec) {
	c.fields(f)
	fieldRecord(f, &c.Deposit)
}

func (dep *Deposit) fields(f *Codec) {
	f.Str(&dep.ID, &dep.OrgID, &dep.CollectionID, &dep.Type, &dep.VirtualAccountID, &dep.CryptoAddressID, &dep.Currency)
	FieldMinor(f, &dep.Amount)
	f.Bool(&dep.Completed)
	f.Str(&dep.ExternalReference, &dep.Bank, &dep.AccountNumber, &dep.AccountName,
		&dep.Chain, &dep.Address, &dep.Tag, &dep.SourceReference)
	f.Varint(&dep.At)
}

func (dep *Deposit) source() string {
	if dep.VirtualAccountID != "" {
		return dep.VirtualAccountID
	}
	return dep.CryptoAddressID
}

// OrganizationNumber is the organization's place in creation order, from 1.
// The sandbox derives deposit addresses from it, so that they are stable
// for the same sequence of commands.
func (r *Reader) OrganizationNumber(orgID string) (uint64, bool) {
	sr, ok := organizationKind.read(r.kv, orgID)
	return sr.seq, ok
}

// matchesDepositSource reports whether c was deposited into the virtual
// account and address f names, if any.
func (f *CollectionFilter) matchesDepositSource(c *Collection) bool {
	if f.VirtualAccountID == "" && f.CryptoAddressID == "" {
		return true
	}
	return c.Deposit != nil &&
		(f.VirtualAccountID == "" || c.Deposit.VirtualAccountID == f.VirtualAccountID) &&
		(f.CryptoAddressID == "" || c.Deposit.CryptoAddressID == f.CryptoAddressID)
}
