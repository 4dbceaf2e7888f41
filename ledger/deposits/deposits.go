// Package deposits is the ledger's money that arrives unasked: virtual
// accounts (a bank account number in the organization's name), crypto
// deposit addresses, the deposits made into them, and the deposit feeds
// that report on-chain transfers from the providers. It is a feature of
// the ledger's kernel (ledger/feature.go): its commands are applied by
// ledger.State.Apply in log order like every other, and its records are
// kept in the state store under tags ledger.TagVirtualAccount,
// ledger.TagCryptoAddress, ledger.TagDeposit and ledger.TagProvider.
//
// A deposit makes a collection, which the kernel keeps: the Deposit record
// (ledger.Deposit) is part of the collection's stored record and of its
// events (ledger.SubjectDepositCollection), and collections are listed by
// their virtual account or address (ledger.CollectionFilter). This package
// keeps the deposits' own store besides, found by their reference.
package deposits

import "payments/ledger"

// Deposits: money that arrives unasked, by bank transfer into a virtual
// account or on chain to a crypto address. A deposit is one command,
// Receive, that in one Apply
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

// KindReceive is the deposit command (range 20–49, see ledger/extend.go).
// Kinds 30 and 31 are reserved for deposits too.
const KindReceive ledger.Kind = 29

// Receive records a deposit; see the comment above.
type Receive struct {
	At                int64
	ID                string
	CollectionID      string
	OrgID             string
	VirtualAccountID  string // exactly one of these two
	CryptoAddressID   string
	Amount            ledger.Minor
	Fee               ledger.Minor
	Completed         bool
	Message           string // the collection's status message
	ExternalReference string
	SourceReference   string
}

func (*Receive) Kind() ledger.Kind { return KindReceive }

// Fields is the command's codec, in its frozen order.
func (c *Receive) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.CollectionID, &c.OrgID, &c.VirtualAccountID, &c.CryptoAddressID)
	ledger.FieldMinor(f, &c.Amount, &c.Fee)
	f.Bool(&c.Completed)
	f.Str(&c.Message, &c.ExternalReference, &c.SourceReference)
}

func (c *Receive) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// DepositOf returns the deposit a Receive recorded or replayed, or nil;
// Result.Collection is the collection it made.
func DepositOf(res ledger.Result) *ledger.Deposit { return ledger.ValueOf[ledger.Deposit](res) }

func init() {
	ledger.RegisterFieldsCommands(
		ledger.Fresh[CreateVirtualAccount], ledger.Fresh[UpdateVirtualAccount],
		ledger.Fresh[CreateCryptoAddress], ledger.Fresh[UpdateCryptoAddress],
		ledger.Fresh[Receive], ledger.Fresh[RecordFeed], ledger.Fresh[AllocateIndex])
}

// depositKind: a deposit never changes once received; it is found by its
// organization's reference.
var depositKind = ledger.NewRecordKind(ledger.ReceiptSpec(ledger.RecordSpec[ledger.Deposit]{
	Tag: ledger.TagDeposit, Name: "deposit",
	ID:     func(x *ledger.Deposit) (string, string) { return x.ID, x.OrgID },
	Fields: ledger.DepositFields,
}, func(x *ledger.Deposit) (string, string) { return x.OrgID, x.ExternalReference }))

// orgKey is a key scoped to an organization.
type orgKey struct{ org, key string }

// book is what the feature keeps in a State: the records of virtual
// accounts, crypto addresses, deposits and providers, and the indexes of
// the open ones that the rules need (rebuilt as Load reads them back).
type book struct {
	virtualAccounts ledger.Store[VirtualAccount]
	cryptoAddresses ledger.Store[CryptoAddress]
	records         ledger.Store[ledger.Deposit]
	providers       ledger.Store[Provider]

	vaByRef           map[orgKey]string // vaRefKey → virtual account id
	vaByNumber        map[string]string // account number → virtual account id
	addressByPair     map[orgKey]string // addressPairKey → address id
	addressByLocation map[string]string // addressLocation → address id
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{
		vaByRef:           make(map[orgKey]string),
		vaByNumber:        make(map[string]string),
		addressByPair:     make(map[orgKey]string),
		addressByLocation: make(map[string]string),
	}
	b.virtualAccounts = ledger.AddStore(s, virtualAccountKind)
	b.virtualAccounts.OnLoad(b.indexVirtualAccount)
	b.cryptoAddresses = ledger.AddStore(s, cryptoAddressKind)
	b.cryptoAddresses.OnLoad(b.indexCryptoAddress)
	b.records = ledger.AddStore(s, depositKind)
	b.providers = ledger.AddStore(s, providerKind)
	return b
})

// byReference returns an organization's deposit by its reference.
func (b *book) byReference(org, ref string) (ledger.Deposit, bool) {
	return b.records.Find(ledger.IndexReference, ledger.RefKey(org, ref))
}

// Conflict is the error for a deposit reference reused for a different
// deposit.
func Conflict() *ledger.Error {
	return &ledger.Error{
		Code:    ledger.CodeConflict,
		Message: "externalReference was already used for different funding: another deposit, amount or outcome",
	}
}

func (c *Receive) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	dep := ledger.Deposit{
		ID: c.ID, OrgID: c.OrgID, CollectionID: c.CollectionID,
		VirtualAccountID: c.VirtualAccountID, CryptoAddressID: c.CryptoAddressID,
		Amount: c.Amount, Completed: c.Completed, ExternalReference: c.ExternalReference,
		SourceReference: c.SourceReference, At: s.OrgNow(c.OrgID, c.At),
	}
	prefix := "vad_"
	switch {
	case c.VirtualAccountID != "" && c.CryptoAddressID == "":
		dep.Type = ledger.CollectionTypeVirtualAccount
	case c.CryptoAddressID != "" && c.VirtualAccountID == "":
		dep.Type, prefix = ledger.CollectionTypeCrypto, "cdp_"
	default:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "a deposit names exactly one virtual account or crypto address")}
	}
	if err := ledger.CheckID(c.ID, prefix); err != nil {
		return ledger.Result{Err: err}
	}
	if err := ledger.CheckID(c.CollectionID, "col_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	if c.ExternalReference == "" {
		return ledger.Result{Err: ledger.FieldInvalid("externalReference", "is required")}
	}
	var paused bool
	if dep.Type == ledger.CollectionTypeVirtualAccount {
		v, err := b.virtualAccounts.Found(c.OrgID, c.VirtualAccountID, "Virtual account")
		if err != nil {
			return ledger.Result{Err: err}
		}
		dep.Currency, dep.Bank, dep.AccountNumber, dep.AccountName = v.Currency, v.Bank, v.AccountNumber, v.AccountName
		paused = v.Status == VirtualAccountPaused
	} else {
		a, err := b.cryptoAddresses.Found(c.OrgID, c.CryptoAddressID, "Crypto address")
		if err != nil {
			return ledger.Result{Err: err}
		}
		dep.Currency, dep.Chain, dep.Address, dep.Tag = a.Currency, a.Chain, a.Address, a.Tag
	}
	if prev, ok := b.byReference(c.OrgID, c.ExternalReference); ok {
		if prev.VirtualAccountID == c.VirtualAccountID && prev.CryptoAddressID == c.CryptoAddressID &&
			prev.Amount == c.Amount && prev.Completed == c.Completed {
			col, _ := s.Collection(prev.CollectionID)
			return ledger.Result{Replayed: true, Value: &prev, Collection: &col}
		}
		return ledger.Result{Err: Conflict()}
	}
	if paused {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest,
			"This virtual account is paused and does not accept deposits; reactivate it with PATCH /v1/virtual-accounts/%s", c.VirtualAccountID)}
	}
	if c.Amount <= 0 || c.Amount > ledger.AmountMax {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	if c.Fee < 0 || c.Fee > c.Amount {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "does not cover the deposit fee")}
	}
	if _, ok := b.records.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "deposit %s already exists", c.ID)}
	}
	if _, ok := s.Collection(c.CollectionID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "collection %s already exists", c.CollectionID)}
	}

	// Book first: a credit that would overflow is refused before anything
	// is recorded.
	cur := dep.Currency
	var account ledger.Account
	if c.Completed {
		account, _ = s.MerchantAccount(c.OrgID, cur, c.At, true)
		source := s.SystemAccount(ledger.PurposeCollectionsSource, cur, c.At)
		if err := s.BookCollection(c.At, c.CollectionID, "", source, account, c.Amount, c.Fee); err != nil {
			return ledger.Result{Err: err}
		}
	} else {
		account, _ = s.MerchantAccount(c.OrgID, cur, c.At, false)
	}

	from := dep.AccountNumber
	if dep.Type == ledger.CollectionTypeCrypto {
		from = dep.Address
	}
	col := ledger.Collection{
		ID:            c.CollectionID,
		OrgID:         c.OrgID,
		Type:          dep.Type,
		Spec:          ledger.CollectionSpec{Currency: cur, Amount: c.Amount, PayerNumber: from},
		MethodType:    ledger.DepositMethodType(dep.Type),
		Fee:           c.Fee,
		AccountNumber: account.Number,
		Status:        ledger.CollectionPending,
		CreatedAt:     dep.At,
		UpdatedAt:     dep.At,
		Deposit:       &dep,
	}
	pending := col
	if c.Completed {
		col.Status = ledger.CollectionCompleted
		col.CompletedAt = dep.At
	} else {
		col.Status = ledger.CollectionFailed
		col.FailedAt = dep.At
	}
	col.StatusMessage = c.Message
	s.InsertCollection(col)
	b.records.Insert(dep)

	s.Emit(c.At, col.OrgID, ledger.EventCollectionPending, col.ID, pending)
	if c.Completed {
		s.Emit(c.At, col.OrgID, ledger.EventCollectionCompleted, col.ID, col)
		s.EmitCredited(c.At, account.Number)
	} else {
		s.Emit(c.At, col.OrgID, ledger.EventCollectionFailed, col.ID, col)
	}
	return ledger.Result{Value: &dep, Collection: &col}
}

// ByReference returns an organization's deposit by the reference it was
// simulated with (or, for a deposit feed's, its transfer's identity).
func ByReference(r *ledger.Reader, orgID, ref string) (ledger.Deposit, bool) {
	return ledger.ReadByReference(r, depositKind, orgID, ref)
}
