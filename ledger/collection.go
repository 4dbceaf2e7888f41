package ledger

import "payments/ledger/kv"

// CollectionStatus is where a collection is in its life:
//
//	pending ──payer approves──▶ completed (balance credited, fee debited)
//	   └──────prompt fails────▶ failed (nothing booked)
type CollectionStatus uint8

// Collection statuses. Values are frozen.
const (
	CollectionPending   CollectionStatus = 1
	CollectionCompleted CollectionStatus = 2
	CollectionFailed    CollectionStatus = 3
)

var collectionStatusNames = EnumNames[CollectionStatus]{"", "pending", "completed", "failed"}

func (s CollectionStatus) String() string { return collectionStatusNames.String(s) }

// Terminal reports whether the collection can no longer change.
func (s CollectionStatus) Terminal() bool {
	return s == CollectionCompleted || s == CollectionFailed
}

// ParseCollectionStatus returns the status with the given API name.
func ParseCollectionStatus(name string) (CollectionStatus, bool) {
	return collectionStatusNames.Parse(name)
}

// CollectionSpec is everything the caller asked for; see PayoutSpec.
type CollectionSpec struct {
	Currency    string
	Amount      Minor
	Method      string // payment method code of the payer's wallet
	PayerNumber string // the payer's phone number
	Narration   string
	Metadata    string // canonical JSON object, or ""
	KYC         string // canonical JSON object, or ""
}

// Collection charges a payer's mobile money wallet into the organization's
// balance in the collected currency.
type Collection struct {
	ID                string
	OrgID             string
	Type              string // "mobile_money"
	Spec              CollectionSpec
	MethodType        MethodType
	Fee               Minor
	ExternalReference string

	// AccountNumber is the balance account credited on completion; empty
	// until then if the organization had no account in the currency.
	AccountNumber string

	Status        CollectionStatus
	StatusMessage string

	CreatedAt   int64
	UpdatedAt   int64
	CompletedAt int64
	FailedAt    int64

	// Deposit is set on collections made by a deposit into a virtual
	// account or to a crypto address (deposit.go). It is not in the
	// collection's frozen codec: the deposits store holds it and joins it
	// back on restore. Deposits are immutable; never write through it.
	Deposit *Deposit

	// Attempt is the request attempt that created it (decided.go); never
	// shown to clients.
	Attempt string
}

// CreateCollection records a pending collection; nothing is booked until the
// payer approves.
type CreateCollection struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              CollectionSpec
	MethodType        MethodType
	Fee               Minor
}

// SettleCollection ends a collection: completed credits the balance (less
// the fee), failed books nothing.
type SettleCollection struct {
	At        int64
	ID        string
	Completed bool
	Message   string
}

// collectionKind: a collection stays open while pending. The stored record
// carries the deposit that made it, if one did (deposit.go).
var collectionKind = newKind(tagCollection, "collection", func(c *Collection) (string, string) { return c.ID, c.OrgID },
	storedBy(encodeStoredCollection, decodeStoredCollection),
	finalWhileOpen(func(c *Collection) bool { return !c.Status.Terminal() }),
	indexedBy(lookup[Collection]{name: indexReference, ref: func(c *Collection) (string, string) { return c.OrgID, c.ExternalReference }}),
	listedBy(
		filter[Collection]{indexStatus, func(c *Collection) string { return terminalName(c.Status.Terminal(), c.Status.String()) }},
		filter[Collection]{indexSource, func(c *Collection) string {
			if c.Deposit == nil {
				return ""
			}
			return c.Deposit.source()
		}},
	),
)

func encodeStoredCollection(e *Encoder, c *Collection) {
	f := e.Codec()
	c.fields(f)
	fieldOptionalRecord(f, &c.Deposit)
	if c.Attempt != "" { // appended (doc.go)
		e.Str(c.Attempt)
	}
}

func decodeStoredCollection(d *Decoder) Collection {
	var c Collection
	f := d.Codec()
	c.fields(f)
	fieldOptionalRecord(f, &c.Deposit)
	if d.More() {
		c.Attempt = d.Str()
	}
	return c
}

func (s *State) createCollection(c *CreateCollection) Result {
	if err := s.checkNew(c.ID, "col_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	if _, ok := LookupCurrency(c.Spec.Currency); !ok {
		return Result{Err: FieldInvalid("from.currency", "is not a supported currency")}
	}
	if c.Spec.Amount <= 0 || c.Spec.Amount > AmountMax || c.Fee < 0 || c.Fee > c.Spec.Amount {
		return Result{Err: FieldInvalid("from.amount", "is out of range")}
	}
	if c.ExternalReference == "" {
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	if col, ok := s.collections.byReference(c.OrgID, c.ExternalReference); ok {
		if col.Spec == c.Spec {
			return Result{Replayed: true, Collection: &col}
		}
		return Result{Err: Duplicate("Collection", col.ID)}
	}
	if s.collections.taken(c.ID) {
		return Result{Err: Errorf(CodeConflict, "collection %s already exists", c.ID)}
	}
	col := Collection{
		ID:                c.ID,
		OrgID:             c.OrgID,
		Type:              "mobile_money",
		Spec:              c.Spec,
		MethodType:        c.MethodType,
		Fee:               c.Fee,
		ExternalReference: c.ExternalReference,
		Status:            CollectionPending,
		CreatedAt:         s.OrgNow(c.OrgID, c.At),
		UpdatedAt:         s.OrgNow(c.OrgID, c.At),
	}
	if a, ok := s.merchantAccount(c.OrgID, c.Spec.Currency, c.At, false); ok {
		col.AccountNumber = a.Number
	}
	s.insertCollection(col)
	s.emit(c.At, col.OrgID, EventCollectionPending, col.ID, col)
	return Result{Collection: &col}
}

// insertCollection records a new collection; a pending one is open.
func (s *State) insertCollection(col Collection) {
	s.collections.insert(col)
	if !col.Status.Terminal() {
		s.openCollections[col.ID] = struct{}{}
	}
}

// bookCollection credits amount, paid from the source account, to a
// merchant account, and moves a positive fee on from there to fee revenue:
// every way money arrives books these same entries.
func (s *State) bookCollection(at int64, refID, externalRef, source string, account Account, amount, fee Minor) *Error {
	postings := []Posting{
		{source, EntryCollectionSource, -amount},
		{account.Number, EntryCollectionCredit, amount},
	}
	if fee > 0 {
		postings = append(postings,
			Posting{account.Number, EntryCollectionFeeDebit, -fee},
			Posting{s.systemAccount(PurposeFeeRevenue, account.Currency, at), EntryCollectionFeeRevenue, fee})
	}
	_, err := s.book(at, refID, externalRef, postings)
	return err
}

func (s *State) settleCollection(c *SettleCollection) Result {
	col, ok := s.collections.get(c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Collection not found")}
	}
	if col.Status.Terminal() {
		return Result{Err: Errorf(CodeConflict, "collection %s is already %s", col.ID, col.Status)}
	}
	now := s.OrgNow(col.OrgID, c.At)
	if c.Completed {
		cur := col.Spec.Currency
		account, _ := s.merchantAccount(col.OrgID, cur, c.At, true)
		source := s.collectionSource(col.ID, cur, c.At)
		if err := s.bookCollection(c.At, col.ID, col.ExternalReference, source, account, col.Spec.Amount, col.Fee); err != nil {
			return Result{Err: err}
		}
		col.AccountNumber = account.Number
		col.Status = CollectionCompleted
		col.CompletedAt = now
	} else {
		col.Status = CollectionFailed
		col.FailedAt = now
	}
	col.StatusMessage = c.Message
	col.UpdatedAt = now
	s.collections.put(col)
	delete(s.openCollections, col.ID)
	if col.Status == CollectionCompleted {
		s.emit(c.At, col.OrgID, EventCollectionCompleted, col.ID, col)
		s.emitCredited(c.At, col.AccountNumber)
	} else {
		s.emit(c.At, col.OrgID, EventCollectionFailed, col.ID, col)
	}
	s.collectionSettled(col, c.At)
	return Result{Collection: &col}
}

// Collection returns the collection with the given id.
func (r *Reader) Collection(id string) (Collection, bool) { return readRecord(r, collectionKind, id) }

// CollectionByReference returns an organization's collection by its
// externalReference.
func (r *Reader) CollectionByReference(orgID, ref string) (Collection, bool) {
	return readByReference(r, collectionKind, orgID, ref)
}

// CollectionFilter selects collections in a list; zero fields match everything.
type CollectionFilter struct {
	Status            CollectionStatus
	Type              string
	Method            string
	Currency          string
	ExternalReference string
	CreatedFrom       int64 // unix ms, inclusive; 0 for no bound
	CreatedTo         int64 // unix ms, inclusive; 0 for no bound

	// Deposits into one virtual account or crypto address (deposit.go).
	VirtualAccountID string
	CryptoAddressID  string
}

// Collections lists an organization's collections newest first.
func (r *Reader) Collections(orgID string, f CollectionFilter, before Cursor, limit int) Page[Collection] {
	k := collectionKind
	if f.ExternalReference != "" {
		// At most one: the reference is unique.
		c, ok := r.CollectionByReference(orgID, f.ExternalReference)
		return OnePage(c, ok && f.keep(&c), before)
	}
	var prefix kv.Key
	switch {
	case f.VirtualAccountID != "":
		prefix = k.filterPrefix(indexSource, orgID, f.VirtualAccountID)
	case f.CryptoAddressID != "":
		prefix = k.filterPrefix(indexSource, orgID, f.CryptoAddressID)
	default:
		prefix = statusPrefix(k, orgID, f.Status, CollectionStatus.Terminal)
	}
	return readPage(r, k, prefix, before, limit, f.keep)
}

func (f *CollectionFilter) keep(c *Collection) bool {
	return f.matchesDepositSource(c) &&
		(f.Status == 0 || c.Status == f.Status) &&
		(f.Type == "" || c.Type == f.Type) &&
		(f.Method == "" || c.Spec.Method == f.Method) &&
		(f.Currency == "" || c.Spec.Currency == f.Currency) &&
		(f.ExternalReference == "" || c.ExternalReference == f.ExternalReference) &&
		(f.CreatedFrom == 0 || c.CreatedAt >= f.CreatedFrom) &&
		(f.CreatedTo == 0 || c.CreatedAt <= f.CreatedTo)
}

// OpenCollections walks the pending collections; see OpenPayouts.
func (r *Reader) OpenCollections(after OpenCursor, limit int) ([]Collection, OpenCursor, bool) {
	return readOpen(r, collectionKind, after, limit)
}
