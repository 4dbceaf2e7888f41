package ledger

import (
	"strconv"
	"strings"
)

// Deposit feeds: a provider instance that reports incoming transfers (an
// EVM chain's log watcher) is polled by the leader, and what each poll
// reported is committed together with the feed's new cursor, in one
// RecordDepositFeed, so that a new leader resumes where the old one
// stopped and never credits a transfer twice.
//
// A transfer is one deposit (deposit.go) and one collection of type crypto,
// ever, found again by its identity (for a chain "<chain>:<tx
// hash>:<log index>"), kept as the deposit's reference in its
// organization:
//
//   - first sight: the deposit is recorded and its collection is pending
//     (collection.pending), crediting nothing;
//   - confirmed (the instance's confirmations reached, in that poll or a
//     later one): the collection completes, the provider's float pays the
//     balance (treasury.go), collection.completed and account.credited;
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
// allocates (AllocateDepositIndex), so that every node, and every future
// leader, derives the same address for the same index.

// Command kinds of deposit feeds (range 121–129, instruction.go).
const (
	KindRecordDepositFeed    Kind = 125
	KindAllocateDepositIndex Kind = 126
)

// FeedDepositsMax bounds the transfers one RecordDepositFeed carries.
const FeedDepositsMax = 4096

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

var providerKind = &kind[Provider]{
	tag: tagProvider, name: "provider",
	id: func(p *Provider) (string, string) { return p.Name, "" },
	enc: func(e *Encoder, p *Provider) {
		e.Str(p.Name)
		e.Str(p.DepositCursor)
		e.Uvarint(uint64(p.DepositIndexes))
		e.Uvarint(p.Polls)
		e.Varint(p.UpdatedAt)
	},
	dec: func(d *Decoder) Provider {
		return Provider{Name: d.Str(), DepositCursor: d.Str(), DepositIndexes: uint32(d.Uvarint()), Polls: d.Uvarint(), UpdatedAt: d.Varint()}
	},
	unlisted: true,
}

// FeedDeposit is one transfer as a poll reported it, with the identifiers
// the leader drew for it in case it is new.
type FeedDeposit struct {
	Identity        string
	Chain           string // the catalogue's chain id of the method
	Currency        string
	Amount          Minor
	To              string // the address it was sent to
	Tag             string
	SourceReference string // the transaction hash
	Confirmations   uint32
	Required        uint32
	Confirmed       bool
	Dropped         bool
	Fee             Minor
	DepositID       string // cdp_…
	CollectionID    string // col_…
}

// RecordDepositFeed commits one poll of a provider instance's deposit
// feed: what it reported and the cursor to poll from next.
type RecordDepositFeed struct {
	At       int64
	Provider string
	From     string // the cursor the poll started from
	Cursor   string // the cursor it returned
	Deposits []FeedDeposit
}

// AllocateDepositIndex allocates a provider instance's next deposit
// index (Result.Provider: the index is DepositIndexes-1).
type AllocateDepositIndex struct {
	At       int64
	Provider string
}

func (*RecordDepositFeed) Kind() Kind    { return KindRecordDepositFeed }
func (*AllocateDepositIndex) Kind() Kind { return KindAllocateDepositIndex }

func (c *RecordDepositFeed) Encode(e *Encoder) {
	e.Varint(c.At)
	e.Str(c.Provider)
	e.Str(c.From)
	e.Str(c.Cursor)
	e.Uvarint(uint64(len(c.Deposits)))
	for i := range c.Deposits {
		f := &c.Deposits[i]
		e.Str(f.Identity)
		e.Str(f.Chain)
		e.Str(f.Currency)
		e.Varint(int64(f.Amount))
		e.Str(f.To)
		e.Str(f.Tag)
		e.Str(f.SourceReference)
		e.Uvarint(uint64(f.Confirmations))
		e.Uvarint(uint64(f.Required))
		e.Bool(f.Confirmed)
		e.Bool(f.Dropped)
		e.Varint(int64(f.Fee))
		e.Str(f.DepositID)
		e.Str(f.CollectionID)
	}
}

func decodeRecordDepositFeed(d *Decoder) Command {
	c := &RecordDepositFeed{At: d.Varint(), Provider: d.Str(), From: d.Str(), Cursor: d.Str()}
	n := d.Count()
	if n > FeedDepositsMax {
		d.Fail(Errorf(CodeValidation, "a poll reports at most %d deposits", FeedDepositsMax))
		return c
	}
	if n > 0 {
		c.Deposits = make([]FeedDeposit, n)
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		c.Deposits[i] = FeedDeposit{
			Identity: d.Str(), Chain: d.Str(), Currency: d.Str(), Amount: Minor(d.Varint()), To: d.Str(), Tag: d.Str(),
			SourceReference: d.Str(), Confirmations: uint32(d.Uvarint()), Required: uint32(d.Uvarint()),
			Confirmed: d.Bool(), Dropped: d.Bool(), Fee: Minor(d.Varint()), DepositID: d.Str(), CollectionID: d.Str(),
		}
	}
	return c
}

func (c *AllocateDepositIndex) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.Provider)
}

func (c *AllocateDepositIndex) Encode(e *Encoder) { c.fields(e.Codec()) }

func init() {
	RegisterCommand(KindRecordDepositFeed, decodeRecordDepositFeed)
	registerFields[AllocateDepositIndex](KindAllocateDepositIndex)
}

func validProviderName(name string) bool {
	return name != "" && len(name) <= instructionFieldMax && !strings.ContainsRune(name, 0)
}

func (c *AllocateDepositIndex) Apply(s *State) Result {
	if !validProviderName(c.Provider) {
		return Result{Err: FieldInvalid("provider", "is required")}
	}
	p, known := s.provider(c.Provider)
	if p.DepositIndexes == 1<<31-1 {
		return Result{Err: Errorf(CodeConflict, "provider %s has allocated every deposit index", c.Provider)}
	}
	p.DepositIndexes++
	s.saveProvider(&p, known, c.At)
	return Result{Provider: &p}
}

// provider returns the named provider instance's record; known is false,
// and the record new, for one nothing was recorded of yet.
func (s *State) provider(name string) (p Provider, known bool) {
	if p, known = s.providers.get(name); !known {
		p = Provider{Name: name}
	}
	return p, known
}

// saveProvider stamps a provider instance's record as changed at at and
// stores it, inserting it if it was not known.
func (s *State) saveProvider(p *Provider, known bool, at int64) {
	p.UpdatedAt = at
	if known {
		s.providers.put(*p)
	} else {
		s.providers.insert(*p)
	}
}

func (c *RecordDepositFeed) Apply(s *State) Result {
	switch {
	case !validProviderName(c.Provider):
		return Result{Err: FieldInvalid("provider", "is required")}
	case len(c.Cursor) > feedCursorBytesMax:
		return Result{Err: Errorf(CodeValidation, "a feed's cursor is at most %d bytes", feedCursorBytesMax)}
	case len(c.Deposits) > FeedDepositsMax:
		return Result{Err: Errorf(CodeValidation, "a poll reports at most %d deposits", FeedDepositsMax)}
	}
	p, known := s.provider(c.Provider)
	if p.DepositCursor != c.From {
		return Result{Err: Errorf(CodeConflict, "the feed of %s has moved on from this poll's cursor", c.Provider)}
	}
	// Identifiers first, so that a clash refuses the poll before anything
	// changed: the leader draws new ones and proposes it again.
	for i := range c.Deposits {
		f := &c.Deposits[i]
		if CheckID(f.DepositID, "cdp_") != nil || CheckID(f.CollectionID, "col_") != nil {
			return Result{Err: Errorf(CodeValidation, "deposit %d of the poll has no identifiers", i)}
		}
		if s.deposits.records.taken(f.DepositID) || s.collections.taken(f.CollectionID) {
			return Result{Err: Errorf(CodeConflict, "deposit %d of the poll: its identifiers are taken", i)}
		}
	}
	for i := range c.Deposits {
		s.feedDeposit(c, &c.Deposits[i])
	}
	p.DepositCursor = c.Cursor
	p.Polls++
	s.saveProvider(&p, known, c.At)
	return Result{Provider: &p}
}

// feedDeposit applies one reported transfer; see the comment at the top.
func (s *State) feedDeposit(c *RecordDepositFeed, f *FeedDeposit) {
	d := s.deposits
	id, ok := d.addressByLocation[f.Chain+"\x00"+f.To+"\x00"+f.Tag+"\x00"+f.Currency]
	if !ok || f.Identity == "" {
		return // not an address of ours
	}
	addr, _ := d.cryptoAddresses.get(id)
	if prev, ok := d.records.byReference(addr.OrgID, f.Identity); ok {
		col, _ := s.collections.get(prev.CollectionID)
		switch {
		case col.Status.Terminal():
		case f.Dropped:
			s.failFeedDeposit(c, prev, col, f)
		case f.Confirmed:
			s.creditFeedDeposit(c, prev, col)
		}
		return
	}
	if f.Dropped || f.Amount <= 0 || f.Amount > AmountMax || f.Fee < 0 || f.Fee > f.Amount {
		return // never credited: nothing to record
	}
	at := s.OrgNow(addr.OrgID, c.At)
	dep := Deposit{
		ID: f.DepositID, OrgID: addr.OrgID, CollectionID: f.CollectionID, Type: CollectionTypeCrypto,
		CryptoAddressID: addr.ID, Currency: addr.Currency, Amount: f.Amount, ExternalReference: f.Identity,
		Chain: addr.Chain, Address: addr.Address, Tag: addr.Tag, SourceReference: f.SourceReference, At: at,
	}
	col := Collection{
		ID: f.CollectionID, OrgID: addr.OrgID, Type: CollectionTypeCrypto,
		Spec:       CollectionSpec{Currency: addr.Currency, Amount: f.Amount, PayerNumber: addr.Address},
		MethodType: MethodCrypto, Fee: f.Fee, Status: CollectionPending,
		StatusMessage: awaitingConfirmations(f.Required),
		CreatedAt:     at, UpdatedAt: at, Deposit: &dep,
	}
	if a, ok := s.merchantAccount(addr.OrgID, addr.Currency, c.At, false); ok {
		col.AccountNumber = a.Number
	}
	s.insertCollection(col)
	d.records.insert(dep)
	s.emit(c.At, col.OrgID, EventCollectionPending, col.ID, col)
	if f.Confirmed {
		s.creditFeedDeposit(c, dep, col)
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
func (s *State) creditFeedDeposit(c *RecordDepositFeed, dep Deposit, col Collection) {
	cur := col.Spec.Currency
	account, _ := s.merchantAccount(col.OrgID, cur, c.At, true)
	float := s.floatAccount(c.Provider, cur, c.At)
	if err := s.bookCollection(c.At, col.ID, "", float, account, col.Spec.Amount, col.Fee); err != nil {
		return // a balance that would overflow: the deposit stays pending
	}
	now := s.OrgNow(col.OrgID, c.At)
	dep.Completed = true
	s.deposits.records.put(dep)
	col.Deposit = &dep
	col.AccountNumber = account.Number
	col.Status, col.StatusMessage = CollectionCompleted, ""
	col.CompletedAt, col.UpdatedAt = now, now
	s.collections.put(col)
	delete(s.openCollections, col.ID)
	s.emit(c.At, col.OrgID, EventCollectionCompleted, col.ID, col)
	s.emitCredited(c.At, account.Number)
}

// failFeedDeposit fails a pending deposit's collection that a
// reorganisation dropped.
func (s *State) failFeedDeposit(c *RecordDepositFeed, dep Deposit, col Collection, f *FeedDeposit) {
	now := s.OrgNow(col.OrgID, c.At)
	col.Deposit = &dep
	col.Status = CollectionFailed
	col.StatusMessage = "The transfer was dropped by a chain reorganisation before " +
		strconv.FormatUint(uint64(max(f.Required, 1)), 10) + " confirmations; nothing was credited"
	col.FailedAt, col.UpdatedAt = now, now
	s.collections.put(col)
	delete(s.openCollections, col.ID)
	s.emit(c.At, col.OrgID, EventCollectionFailed, col.ID, col)
}

// ProviderState returns what the ledger keeps of a provider instance: its
// deposit feed's cursor and allocated deposit indexes.
func (r *Reader) ProviderState(name string) (Provider, bool) {
	return readRecord(r, providerKind, name)
}
