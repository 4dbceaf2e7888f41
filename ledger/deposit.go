package ledger

// Deposits: money that arrives unasked, by bank transfer into a virtual
// account or on chain to a crypto address. A deposit is one command,
// ReceiveDeposit, that in one Apply
//
//   - creates the collection (type virtual_account or crypto) and emits
//     collection.pending, as every collection starts;
//   - then, for a completed deposit, books the credit as a settled
//     collection does (the collections source pays the balance, the fee, if
//     any, goes to fee revenue) and emits collection.completed and
//     account.credited; for a failed one it books nothing and emits
//     collection.failed.
//
// So a deposit's collection is terminal as soon as it exists: GET returns
// what the deposit's response said, and the rail driver never picks it up.
//
// Fees: the command carries the fee the operation priced with the deposit
// schedule of the method the money came through (rails' catalogue: 0 basis
// points for bank rails and stablecoin networks today). The rule books any
// fee it is given.
//
// The collection's link to its virtual account or address is a Deposit
// record, kept in its own store and in the collection's stored record
// (Collection.Deposit). Events about such a collection use subject kind
// SubjectDepositCollection, whose codec carries the deposit too.
//
// Deposits are idempotent by the caller's externalReference (the sandbox
// simulation's), per organization and shared by both kinds of deposit: the
// same reference with the same source, amount and outcome replays the
// original; anything else is a conflict and changes nothing.

// KindReceiveDeposit is the deposit command (range 20–49, see extend.go).
// Kinds 30 and 31 are reserved for deposits too.
const KindReceiveDeposit Kind = 29

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

// ReceiveDeposit records a deposit; see the package comment above.
type ReceiveDeposit struct {
	At                int64
	ID                string
	CollectionID      string
	OrgID             string
	VirtualAccountID  string // exactly one of these two
	CryptoAddressID   string
	Amount            Minor
	Fee               Minor
	Completed         bool
	Message           string // the collection's status message
	ExternalReference string
	SourceReference   string
}

func (*ReceiveDeposit) Kind() Kind { return KindReceiveDeposit }

func (c Collection) SubjectKind() SubjectKind {
	if c.Deposit != nil {
		return SubjectDepositCollection
	}
	return SubjectCollection
}

func (c *ReceiveDeposit) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.CollectionID)
	f.Str(&c.OrgID)
	f.Str(&c.VirtualAccountID)
	f.Str(&c.CryptoAddressID)
	FieldMinor(f, &c.Amount)
	FieldMinor(f, &c.Fee)
	f.Bool(&c.Completed)
	f.Str(&c.Message)
	f.Str(&c.ExternalReference)
	f.Str(&c.SourceReference)
}

func (c *ReceiveDeposit) Encode(e *Encoder) { c.fields(e.Codec()) }

func init() {
	registerFields[ReceiveDeposit](KindReceiveDeposit)
	registerSubject(SubjectDepositCollection,
		func(e *Encoder, s Subject) {
			c := s.(Collection)
			c.fields(e.Codec())
			encodeDeposit(e, c.Deposit)
		},
		func(d *Decoder) Subject {
			var c Collection
			c.fields(d.Codec())
			dep := decodeDeposit(d)
			c.Deposit = &dep
			return c
		})
}

func encodeDeposit(e *Encoder, d *Deposit) {
	e.Str(d.ID)
	e.Str(d.OrgID)
	e.Str(d.CollectionID)
	e.Str(d.Type)
	e.Str(d.VirtualAccountID)
	e.Str(d.CryptoAddressID)
	e.Str(d.Currency)
	e.Varint(int64(d.Amount))
	e.Bool(d.Completed)
	e.Str(d.ExternalReference)
	e.Str(d.Bank)
	e.Str(d.AccountNumber)
	e.Str(d.AccountName)
	e.Str(d.Chain)
	e.Str(d.Address)
	e.Str(d.Tag)
	e.Str(d.SourceReference)
	e.Varint(d.At)
}

func decodeDeposit(d *Decoder) Deposit {
	return Deposit{
		ID: d.Str(), OrgID: d.Str(), CollectionID: d.Str(), Type: d.Str(), VirtualAccountID: d.Str(),
		CryptoAddressID: d.Str(), Currency: d.Str(), Amount: Minor(d.Varint()), Completed: d.Bool(),
		ExternalReference: d.Str(), Bank: d.Str(), AccountNumber: d.Str(), AccountName: d.Str(),
		Chain: d.Str(), Address: d.Str(), Tag: d.Str(), SourceReference: d.Str(), At: d.Varint(),
	}
}

// depositKind: a deposit never changes once received.
var depositKind = &kind[Deposit]{
	tag: tagDeposit, name: "deposit",
	id:  func(x *Deposit) (string, string) { return x.ID, x.OrgID },
	enc: encodeDeposit, dec: decodeDeposit,
	open: func(*Deposit) bool { return false },
	lookups: []lookup[Deposit]{
		{name: indexReference, ref: func(x *Deposit) (string, string) { return x.OrgID, x.ExternalReference }},
	},
}

// depositState is the records of virtual accounts, crypto addresses and
// deposits, and the indexes of the open ones that the rules need (rebuilt
// by Load).
type depositState struct {
	virtualAccounts *store[VirtualAccount]
	cryptoAddresses *store[CryptoAddress]
	records         *store[Deposit]

	vaByRef           map[orgKey]string // vaRefKey → virtual account id
	vaByNumber        map[string]string // account number → virtual account id
	addressByPair     map[orgKey]string // addressPairKey → address id
	addressByLocation map[string]string // addressLocation → address id
}

// newDepositState builds the stores.
func newDepositState(s *State) *depositState {
	d := &depositState{
		vaByRef:           make(map[orgKey]string),
		vaByNumber:        make(map[string]string),
		addressByPair:     make(map[orgKey]string),
		addressByLocation: make(map[string]string),
	}
	d.virtualAccounts = addStore(s, virtualAccountKind)
	d.virtualAccounts.index = s.indexVirtualAccount
	d.cryptoAddresses = addStore(s, cryptoAddressKind)
	d.cryptoAddresses.index = s.indexCryptoAddress
	d.records = addStore(s, depositKind)
	return d
}

func (dep *Deposit) source() string {
	if dep.VirtualAccountID != "" {
		return dep.VirtualAccountID
	}
	return dep.CryptoAddressID
}

// DepositConflict is the error for a deposit reference reused for a
// different deposit.
func DepositConflict() *Error {
	return &Error{
		Code:    CodeConflict,
		Message: "externalReference was already used for different funding: another deposit, amount or outcome",
	}
}

func (c *ReceiveDeposit) Apply(s *State) Result {
	d := s.deposits
	dep := Deposit{
		ID: c.ID, OrgID: c.OrgID, CollectionID: c.CollectionID,
		VirtualAccountID: c.VirtualAccountID, CryptoAddressID: c.CryptoAddressID,
		Amount: c.Amount, Completed: c.Completed, ExternalReference: c.ExternalReference,
		SourceReference: c.SourceReference, At: s.OrgNow(c.OrgID, c.At),
	}
	prefix := "vad_"
	switch {
	case c.VirtualAccountID != "" && c.CryptoAddressID == "":
		dep.Type = CollectionTypeVirtualAccount
	case c.CryptoAddressID != "" && c.VirtualAccountID == "":
		dep.Type, prefix = CollectionTypeCrypto, "cdp_"
	default:
		return Result{Err: Errorf(CodeValidation, "a deposit names exactly one virtual account or crypto address")}
	}
	if err := CheckID(c.ID, prefix); err != nil {
		return Result{Err: err}
	}
	if err := s.checkNew(c.CollectionID, "col_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	if c.ExternalReference == "" {
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	var paused bool
	if dep.Type == CollectionTypeVirtualAccount {
		v, ok := d.virtualAccounts.owned(c.OrgID, c.VirtualAccountID)
		if !ok {
			return Result{Err: Errorf(CodeNotFound, "Virtual account not found")}
		}
		dep.Currency, dep.Bank, dep.AccountNumber, dep.AccountName = v.Currency, v.Bank, v.AccountNumber, v.AccountName
		paused = v.Status == VirtualAccountPaused
	} else {
		a, ok := d.cryptoAddresses.owned(c.OrgID, c.CryptoAddressID)
		if !ok {
			return Result{Err: Errorf(CodeNotFound, "Crypto address not found")}
		}
		dep.Currency, dep.Chain, dep.Address, dep.Tag = a.Currency, a.Chain, a.Address, a.Tag
	}
	if prev, ok := d.records.byReference(c.OrgID, c.ExternalReference); ok {
		if prev.VirtualAccountID == c.VirtualAccountID && prev.CryptoAddressID == c.CryptoAddressID &&
			prev.Amount == c.Amount && prev.Completed == c.Completed {
			col, _ := s.collections.get(prev.CollectionID)
			return Result{Replayed: true, Deposit: &prev, Collection: &col}
		}
		return Result{Err: DepositConflict()}
	}
	if paused {
		return Result{Err: Errorf(CodeBadRequest,
			"This virtual account is paused and does not accept deposits; reactivate it with PATCH /v1/virtual-accounts/%s", c.VirtualAccountID)}
	}
	if c.Amount <= 0 || c.Amount > AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if c.Fee < 0 || c.Fee > c.Amount {
		return Result{Err: FieldInvalid("amount", "does not cover the deposit fee")}
	}
	if _, ok := d.records.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "deposit %s already exists", c.ID)}
	}
	if _, ok := s.collections.get(c.CollectionID); ok {
		return Result{Err: Errorf(CodeConflict, "collection %s already exists", c.CollectionID)}
	}

	// Book first: a credit that would overflow is refused before anything
	// is recorded.
	cur := dep.Currency
	var account Account
	if c.Completed {
		account, _ = s.merchantAccount(c.OrgID, cur, c.At, true)
		source := s.systemAccount(PurposeCollectionsSource, cur, c.At)
		if err := s.bookCollection(c.At, c.CollectionID, "", source, account, c.Amount, c.Fee); err != nil {
			return Result{Err: err}
		}
	} else {
		account, _ = s.merchantAccount(c.OrgID, cur, c.At, false)
	}

	from := dep.AccountNumber
	if dep.Type == CollectionTypeCrypto {
		from = dep.Address
	}
	col := Collection{
		ID:            c.CollectionID,
		OrgID:         c.OrgID,
		Type:          dep.Type,
		Spec:          CollectionSpec{Currency: cur, Amount: c.Amount, PayerNumber: from},
		MethodType:    depositMethodType(dep.Type),
		Fee:           c.Fee,
		AccountNumber: account.Number,
		Status:        CollectionPending,
		CreatedAt:     dep.At,
		UpdatedAt:     dep.At,
		Deposit:       &dep,
	}
	pending := col
	if c.Completed {
		col.Status = CollectionCompleted
		col.CompletedAt = dep.At
	} else {
		col.Status = CollectionFailed
		col.FailedAt = dep.At
	}
	col.StatusMessage = c.Message
	s.insertCollection(col)
	d.records.insert(dep)

	s.emit(c.At, col.OrgID, EventCollectionPending, col.ID, pending)
	if c.Completed {
		s.emit(c.At, col.OrgID, EventCollectionCompleted, col.ID, col)
		s.emitCredited(c.At, account.Number)
	} else {
		s.emit(c.At, col.OrgID, EventCollectionFailed, col.ID, col)
	}
	return Result{Deposit: &dep, Collection: &col}
}

// OrganizationNumber is the organization's place in creation order, from 1.
// The sandbox derives deposit addresses from it, so that they are stable
// for the same sequence of commands.
func (r *Reader) OrganizationNumber(orgID string) (uint64, bool) {
	sr, ok := organizationKind.read(r.kv, orgID)
	return sr.seq, ok
}

// DepositByReference returns an organization's deposit by the reference it
// was simulated with.
func (r *Reader) DepositByReference(orgID, ref string) (Deposit, bool) {
	return readByReference(r, depositKind, orgID, ref)
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

// depositMethodType is the method type a deposit's collection stores: its
// collection type (doc.go of MethodType).
func depositMethodType(collectionType string) MethodType {
	if collectionType == CollectionTypeCrypto {
		return MethodCrypto
	}
	return methodVirtualAccount
}
