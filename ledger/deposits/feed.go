package deposits

import (
	"strconv"
	"strings"

	"payments/ledger"
	"payments/ledger/kv"
)

// Deposit feeds: a provider instance that reports incoming transfers (an
// EVM chain's log watcher) is polled by the leader, and what each poll
// reported is committed together with the feed's new cursor, in one
// RecordFeed, so that a new leader resumes where the old one
// stopped and never credits a transfer twice.
//
// A transfer is one deposit (deposits.go) and one collection of type crypto,
// ever, found again by its identity (for a chain "<chain>:<tx
// hash>:<log index>"), kept as the deposit's reference in its
// organization:
//
//   - first sight: the deposit is recorded and its collection is pending
//     (collection.pending), crediting nothing;
//   - confirmed (the instance's confirmations reached, in that poll or a
//     later one): the collection completes, the provider's float pays the
//     balance (ledger/instructions), collection.completed and account.credited;
//   - dropped by a reorganisation before that: the collection fails with
//     a statusMessage, crediting nothing; the identity stays spent, so
//     the same transfer found again later changes nothing (an operator
//     reconciles it: the float shows it).
//
// A transfer to an address that is not one of ours, or that was never
// seen and is reported dropped, changes nothing. Each poll carries the
// cursor it started from: a poll from a cursor the log has moved past (a
// deposed leader's, committed late) is refused whole.
//
// The instance's deposit addresses are derived from indexes the ledger
// allocates (AllocateIndex), so that every node, and every future
// leader, derives the same address for the same index.

// Command kinds of deposit feeds (range 121–129, ledger/instructions).
const (
	KindRecordFeed    ledger.Kind = 125
	KindAllocateIndex ledger.Kind = 126
)

// FeedMax bounds the transfers one RecordFeed carries.
const FeedMax = 4096

// feedCursorBytesMax bounds a feed's cursor.
const feedCursorBytesMax = 1 << 20

// Provider is what the ledger keeps of a provider instance: its deposit
// feed's cursor and how many deposit indexes it allocated.
type Provider struct {
	Name           string
	DepositCursor  string
	DepositIndexes uint32 // indexes 0..DepositIndexes-1 are allocated
	Polls          uint64 // committed polls of its feed
	UpdatedAt      int64
}

func (p *Provider) fields(f *ledger.Codec) {
	f.Str(&p.Name, &p.DepositCursor)
	uvarint32(f, &p.DepositIndexes)
	f.Uvarint(&p.Polls)
	f.Varint(&p.UpdatedAt)
}

// uvarint32 reads or writes a uint32 as a uvarint, truncating what it
// reads to 32 bits as the codec always did.
func uvarint32(f *ledger.Codec, p *uint32) {
	v := uint64(*p)
	f.Uvarint(&v)
	*p = uint32(v)
}

// providerKind: a provider instance's record, in no organization's list,
// every one in memory.
var providerKind = ledger.NewUnlistedRecordKind(ledger.RecordSpec[Provider]{
	Tag: ledger.TagProvider, Name: "provider",
	ID:     func(p *Provider) (string, string) { return p.Name, "" },
	Fields: (*Provider).fields,
})

// ProviderOf returns the provider instance's record a RecordFeed or an
// AllocateIndex left, or nil.
func ProviderOf(res ledger.Result) *Provider { return ledger.ValueOf[Provider](res) }

// FeedDeposit is one transfer as a poll reported it, with the identifiers
// the leader drew for it in case it is new.
type FeedDeposit struct {
	Identity        string
	Chain           string // the catalogue's chain id of the method
	Currency        string
	Amount          ledger.Minor
	To              string // the address it was sent to
	Tag             string
	SourceReference string // the transaction hash
	Confirmations   uint32
	Required        uint32
	Confirmed       bool
	Dropped         bool
	Fee             ledger.Minor
	DepositID       string // cdp_…
	CollectionID    string // col_…
}

// RecordFeed commits one poll of a provider instance's deposit feed: what
// it reported and the cursor to poll from next.
type RecordFeed struct {
	At       int64
	Provider string
	From     string // the cursor the poll started from
	Cursor   string // the cursor it returned
	Deposits []FeedDeposit
}

// AllocateIndex allocates a provider instance's next deposit index
// (ProviderOf: the index is DepositIndexes-1).
type AllocateIndex struct {
	At       int64
	Provider string
}

func (*RecordFeed) Kind() ledger.Kind    { return KindRecordFeed }
func (*AllocateIndex) Kind() ledger.Kind { return KindAllocateIndex }

// Fields is the command's codec, in its frozen order.
func (c *RecordFeed) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.Provider, &c.From, &c.Cursor)
	// More than a poll may report is refused as a request would be, as it
	// was before the feed's codec became a field list.
	tooMany := func(int) error {
		return ledger.Errorf(ledger.CodeValidation, "a poll reports at most %d deposits", FeedMax)
	}
	kv.FieldSlice(f, &c.Deposits, FeedMax, tooMany, func(f *ledger.Codec, d *FeedDeposit) { d.fields(f) })
}

func (c *RecordFeed) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (d *FeedDeposit) fields(f *ledger.Codec) {
	f.Str(&d.Identity, &d.Chain, &d.Currency)
	ledger.FieldMinor(f, &d.Amount)
	f.Str(&d.To, &d.Tag, &d.SourceReference)
	uvarint32(f, &d.Confirmations)
	uvarint32(f, &d.Required)
	f.Bool(&d.Confirmed, &d.Dropped)
	ledger.FieldMinor(f, &d.Fee)
	f.Str(&d.DepositID, &d.CollectionID)
}

// Fields is the command's codec, in its frozen order.
func (c *AllocateIndex) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.Provider)
}

func (c *AllocateIndex) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func validProviderName(name string) bool {
	return name != "" && len(name) <= ledger.InstructionFieldMax && !strings.ContainsRune(name, 0)
}

func (c *AllocateIndex) Apply(s *ledger.State) ledger.Result {
	if !validProviderName(c.Provider) {
		return ledger.Result{Err: ledger.FieldInvalid("provider", "is required")}
	}
	b := feature.Of(s)
	p, known := b.provider(c.Provider)
	if p.DepositIndexes == 1<<31-1 {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "provider %s has allocated every deposit index", c.Provider)}
	}
	p.DepositIndexes++
	b.saveProvider(&p, known, c.At)
	return ledger.Result{Value: &p}
}

// provider returns the named provider instance's record; known is false,
// and the record new, for one nothing was recorded of yet.
func (b *book) provider(name string) (p Provider, known bool) {
	if p, known = b.providers.Get(name); !known {
		p = Provider{Name: name}
	}
	return p, known
}

// saveProvider stamps a provider instance's record as changed at at and
// stores it, inserting it if it was not known.
func (b *book) saveProvider(p *Provider, known bool, at int64) {
	p.UpdatedAt = at
	if known {
		b.providers.Put(*p)
	} else {
		b.providers.Insert(*p)
	}
}

func (c *RecordFeed) Apply(s *ledger.State) ledger.Result {
	switch {
	case !validProviderName(c.Provider):
		return ledger.Result{Err: ledger.FieldInvalid("provider", "is required")}
	case len(c.Cursor) > feedCursorBytesMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "a feed's cursor is at most %d bytes", feedCursorBytesMax)}
	case len(c.Deposits) > FeedMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "a poll reports at most %d deposits", FeedMax)}
	}
	b := feature.Of(s)
	p, known := b.provider(c.Provider)
	if p.DepositCursor != c.From {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "the feed of %s has moved on from this poll's cursor", c.Provider)}
	}
	// Identifiers first, so that a clash refuses the poll before anything
	// changed: the leader draws new ones and proposes it again.
	for i := range c.Deposits {
		f := &c.Deposits[i]
		if ledger.CheckID(f.DepositID, "cdp_") != nil || ledger.CheckID(f.CollectionID, "col_") != nil {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "deposit %d of the poll has no identifiers", i)}
		}
		if b.records.Taken(f.DepositID) || s.CollectionTaken(f.CollectionID) {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "deposit %d of the poll: its identifiers are taken", i)}
		}
	}
	for i := range c.Deposits {
		b.feedDeposit(s, c, &c.Deposits[i])
	}
	p.DepositCursor = c.Cursor
	p.Polls++
	b.saveProvider(&p, known, c.At)
	return ledger.Result{Value: &p}
}

// feedDeposit applies one reported transfer; see the comment at the top.
func (b *book) feedDeposit(s *ledger.State, c *RecordFeed, f *FeedDeposit) {
	id, ok := b.addressByLocation[addressLocation(f.Chain, f.To, f.Tag, f.Currency)]
	if !ok || f.Identity == "" {
		return // not an address of ours
	}
	addr, _ := b.cryptoAddresses.Get(id)
	if prev, ok := b.byReference(addr.OrgID, f.Identity); ok {
		col, _ := s.Collection(prev.CollectionID)
		switch {
		case col.Status.Terminal():
		case f.Dropped:
			failFeedDeposit(s, c, prev, col, f)
		case f.Confirmed:
			b.creditFeedDeposit(s, c, prev, col)
		}
		return
	}
	if f.Dropped || f.Amount <= 0 || f.Amount > ledger.AmountMax || f.Fee < 0 || f.Fee > f.Amount {
		return // never credited: nothing to record
	}
	at := s.OrgNow(addr.OrgID, c.At)
	dep := ledger.Deposit{
		ID: f.DepositID, OrgID: addr.OrgID, CollectionID: f.CollectionID, Type: ledger.CollectionTypeCrypto,
		CryptoAddressID: addr.ID, Currency: addr.Currency, Amount: f.Amount, ExternalReference: f.Identity,
		Chain: addr.Chain, Address: addr.Address, Tag: addr.Tag, SourceReference: f.SourceReference, At: at,
	}
	col := ledger.Collection{
		ID: f.CollectionID, OrgID: addr.OrgID, Type: ledger.CollectionTypeCrypto,
		Spec:       ledger.CollectionSpec{Currency: addr.Currency, Amount: f.Amount, PayerNumber: addr.Address},
		MethodType: ledger.MethodCrypto, Fee: f.Fee, Status: ledger.CollectionPending,
		StatusMessage: awaitingConfirmations(f.Required),
		CreatedAt:     at, UpdatedAt: at, Deposit: &dep,
	}
	if a, ok := s.MerchantAccount(addr.OrgID, addr.Currency, c.At, false); ok {
		col.AccountNumber = a.Number
	}
	s.InsertCollection(col)
	b.records.Insert(dep)
	s.Emit(c.At, col.OrgID, ledger.EventCollectionPending, col.ID, col)
	if f.Confirmed {
		b.creditFeedDeposit(s, c, dep, col)
	}
}

func awaitingConfirmations(required uint32) string {
	if required == 0 {
		return ""
	}
	return "Seen on chain; credited after " + strconv.FormatUint(uint64(required), 10) + " confirmations"
}

// creditFeedDeposit completes a pending deposit's collection: the
// provider's float pays the balance, less the fee.
func (b *book) creditFeedDeposit(s *ledger.State, c *RecordFeed, dep ledger.Deposit, col ledger.Collection) {
	cur := col.Spec.Currency
	account, _ := s.MerchantAccount(col.OrgID, cur, c.At, true)
	float := s.FloatAccount(c.Provider, cur, c.At)
	if err := s.BookCollection(c.At, col.ID, "", float, account, col.Spec.Amount, col.Fee); err != nil {
		return // a balance that would overflow: the deposit stays pending
	}
	now := s.OrgNow(col.OrgID, c.At)
	dep.Completed = true
	b.records.Put(dep)
	col.Deposit = &dep
	col.AccountNumber = account.Number
	col.Status, col.StatusMessage = ledger.CollectionCompleted, ""
	col.CompletedAt, col.UpdatedAt = now, now
	s.CloseCollection(col)
	s.Emit(c.At, col.OrgID, ledger.EventCollectionCompleted, col.ID, col)
	s.EmitCredited(c.At, account.Number)
}

// failFeedDeposit fails a pending deposit's collection that a
// reorganisation dropped.
func failFeedDeposit(s *ledger.State, c *RecordFeed, dep ledger.Deposit, col ledger.Collection, f *FeedDeposit) {
	now := s.OrgNow(col.OrgID, c.At)
	col.Deposit = &dep
	col.Status = ledger.CollectionFailed
	col.StatusMessage = "The transfer was dropped by a chain reorganisation before " +
		strconv.FormatUint(uint64(max(f.Required, 1)), 10) + " confirmations; nothing was credited"
	col.FailedAt, col.UpdatedAt = now, now
	s.CloseCollection(col)
	s.Emit(c.At, col.OrgID, ledger.EventCollectionFailed, col.ID, col)
}

// ProviderState returns what the ledger keeps of a provider instance: its
// deposit feed's cursor and allocated deposit indexes.
func ProviderState(r *ledger.Reader, name string) (Provider, bool) {
	return ledger.ReadRecord(r, providerKind, name)
}
