package ledger

import (
	"fmt"

	"payments/ledger/kv"
)

// State is the ledger's state machine. It changes only through Apply, which
// is deterministic: the same commands in the same order leave the same
// state store, byte for byte.
//
// The open records (what can still change: organizations, keys, balances,
// pending payouts, open orders…) are in memory, in the stores below, with
// the indexes Apply needs. Every change is written to the state store when
// the FSM flushes the batch (Flush), and a record that closes leaves memory
// once that batch is committed (ReleaseFlushed); Apply finds closed records
// in the state store when it needs them, which it reads through kv.
//
// State is not safe for concurrent use: one goroutine at a time applies,
// flushes and releases, but for PublishFlushed. Readers never touch it;
// they read the committed state store through a Reader (reader.go).
type State struct {
	kv  *kvRef
	enc Encoder // flush's buffer
	out kv.SortedWriter
	cmp [2]Encoder // recordSubject's

	orgs        *store[Organization]
	keys        *store[APIKey]
	accounts    *store[Account]
	payouts     *store[Payout]
	collections *store[Collection]
	fundings    *store[Funding]

	journal journal  // account.go: booked entries, by transaction
	events  eventLog // event.go

	// Indexes of open records, rebuilt by Load.
	keyByHash            map[[32]byte]string
	systemAccounts       map[systemKey]string
	accountByOrgCurrency map[orgKey]string
	openPayouts          map[string]struct{} // payout.go: what the rail driver resumes
	openCollections      map[string]struct{}

	// The features' stores (extend.go), in the order they are flushed and
	// loaded.
	stores []storeOps

	// eventHooks run for every event, in the Apply that emits it (webhook
	// fan-out, checkout sessions following their collections).
	eventHooks []func(*State, Event)
	// expirers make deadline-driven transitions, due by the heap of
	// deadlines (clock.go).
	expirers  []Expirer
	deadlines deadlineHeap

	clocks *store[Clock]

	// The features' records and indexes, each owned by its file.
	links linkSlots // feature_linkslots.go: package paymentlinks' expirers and hook

	refusals *store[Refusal] // decided.go: creates refused under a reference

	views *views // what readers see of the always-open records (views.go)
	// flushedDeadline is the earliest deadline as of the last Flush, for
	// PublishFlushed.
	flushedDeadline int64

	formatWritten bool

	// The features of sub-packages (feature.go), in registration order,
	// and the payout rules they add.
	features     []any
	payoutChecks []func(org string, spec *PayoutSpec) *Error
	// featureHooks is how many of eventHooks, at their head, the
	// features added (AddEventHook).
	featureHooks int
}

// StoreFormat is the version of the state store's layout (doc.go). A store
// of another version is refused rather than misread.
const StoreFormat = 1

// kvRef is the state store Apply reads: the store itself, or for the
// length of one batch, a faster reader of it (ReadThrough).
type kvRef struct{ KVReader }

// ReadThrough makes Apply read the committed state through kv until the
// returned function is called: the FSM hands a reader that keeps one
// iterator open for a whole applied batch, whose reads then cost no set-up
// each. kv must see the state as committed, which nothing changes while a
// batch is applied.
func (s *State) ReadThrough(kv KVReader) (restore func()) {
	prev := s.kv.KVReader
	s.kv.KVReader = kv
	return func() { s.kv.KVReader = prev }
}

// storeOps is a store, whatever its record type.
type storeOps interface {
	flush(w *kv.SortedWriter, e *Encoder)
	flushed()
	publishFlushed()
	releaseFlushed()
	load()
	openRows() int
}

func addStore[V any](s *State, k *kind[V]) *store[V] {
	t := newStore(k, s.kv)
	if len(k.lookups) > 0 {
		t.filter = s.views.lookups
		t.filter.AddPrefix(kv.NewKey(k.tag, subLookup))
	}
	s.stores = append(s.stores, t)
	return t
}

// orgKey is a map key scoped to an organization: a reference, a currency.
type orgKey struct {
	org, name string
}

// refKey is an organization's reference as a lookup key.
func refKey(org, ref string) string {
	if ref == "" {
		return ""
	}
	return org + "\x00" + ref
}

// NewState returns the state machine over the state store kv, which must be
// empty; see Load for one that is not.
func NewState(kv KVReader) *State {
	s := &State{
		kv:                   &kvRef{kv},
		keyByHash:            make(map[[32]byte]string),
		systemAccounts:       make(map[systemKey]string),
		accountByOrgCurrency: make(map[orgKey]string),
		openPayouts:          make(map[string]struct{}),
		openCollections:      make(map[string]struct{}),
		views:                newViews(),
	}
	s.orgs = addStore(s, organizationKind)
	s.orgs.publish = s.views.putOrganization
	s.keys = addStore(s, apiKeyKind)
	s.keys.index = s.indexKey
	s.keys.publish = s.views.putKey
	s.accounts = addStore(s, accountKind)
	s.accounts.index = s.indexAccount
	s.accounts.publish = s.views.putAccount
	s.payouts = addStore(s, payoutKind)
	s.payouts.index = func(p *Payout) { s.openPayouts[p.ID] = struct{}{} }
	s.collections = addStore(s, collectionKind)
	s.collections.index = func(c *Collection) { s.openCollections[c.ID] = struct{}{} }
	s.fundings = addStore(s, fundingKind)
	s.clocks = addStore(s, clockKind)
	s.clocks.publish = s.views.putClock

	// The features, each registering its stores, hooks and expirers. The
	// order fixes the order of hooks.
	s.reserveLinkSlots()
	s.refusals = addStore(s, refusalKind)
	for _, part := range features {
		s.features = append(s.features, part(s))
	}
	return s
}

// Load returns the state machine over a state store that holds the state
// as of some applied index: it reads the open records back into memory, and
// with them the indexes Apply needs. Its cost follows the open records, not
// history.
func Load(kvr KVReader) (_ *State, err error) {
	defer kv.RecoverStoreError(&err)
	s := NewState(kvr)
	switch format := readCounter(kvr, "format"); format {
	case 0: // empty
	case StoreFormat:
		s.formatWritten = true
	default:
		return nil, fmt.Errorf("ledger: the state store has format %d; this build reads %d", format, StoreFormat)
	}
	for _, t := range s.stores {
		t.load()
	}
	s.journal.load(kvr)
	s.events.load(kvr)
	s.rebuildDeadlines()
	s.views.load(s)
	s.views.nextDeadline.Store(s.nextDeadline())
	return s, nil
}

// Flush writes every change made since the last flush into w, in key
// order (see sortedWriter), which the FSM then commits. The batch flushed
// before must be released (Committed, or ReleaseFlushed) first.
func (s *State) Flush(w KVWriter) {
	out := &s.out
	if !s.formatWritten {
		writeCounter(out, "format", StoreFormat)
		s.formatWritten = true
	}
	for _, t := range s.stores {
		t.flush(out, &s.enc)
		t.flushed()
	}
	s.journal.flush(out, &s.enc)
	s.events.flush(out, &s.enc, s.recordSubject)
	s.flushedDeadline = s.nextDeadline()
	out.WriteTo(w)
}

// EndEntry marks the end of a log entry's commands. The journal and the
// events are stored in pages of one log entry each, so that the state
// store is the same on every node whatever batches of entries it applied
// together; the FSM calls it after each entry it applies.
func (s *State) EndEntry() {
	s.journal.endEntry()
	s.events.endEntry()
}

// Committed tells the state that the writes of the last Flush are in the
// state store: readers' views move on and closed records leave memory. It
// is PublishFlushed then ReleaseFlushed.
func (s *State) Committed() {
	s.PublishFlushed()
	s.ReleaseFlushed()
}

// PublishFlushed moves readers' views on to the batch last flushed, once
// it is in the state store. Unlike every other method of State, it may
// run on another goroutine while Apply goes on with the next batch: it
// touches only what Flush set aside for it and the views. It must finish
// before the next Flush.
func (s *State) PublishFlushed() {
	for _, t := range s.stores {
		t.publishFlushed()
	}
	s.views.nextDeadline.Store(s.flushedDeadline)
}

// ReleaseFlushed drops from memory what the batch last flushed closed,
// once it is in the state store; a record that changed again since stays.
// Rules may have applied more commands since the flush.
func (s *State) ReleaseFlushed() {
	for _, t := range s.stores {
		t.releaseFlushed()
	}
	s.events.releaseFlushed()
}

// OpenRecords counts the records held in memory (the hot state): the open
// ones, and those closed in a batch not yet committed. The node's metrics
// read it; like every method of State, it is for the applying goroutine.
func (s *State) OpenRecords() int {
	n := 0
	for _, t := range s.stores {
		n += t.openRows()
	}
	return n
}

// Views are what readers see of the always-open records, as of the last
// commit.
func (s *State) Views() *Views { return &Views{v: s.views} }

// Result is the outcome of applying one command. Err is set when the command
// was rejected, in which case the state is unchanged (but for the account's
// reservation number, see Account.Reservation). Otherwise the affected
// resource is returned as a copy.
type Result struct {
	Err      *Error
	Replayed bool // the command repeated an earlier one; nothing changed

	Organization *Organization
	APIKey       *APIKey
	Payout       *Payout
	Collection   *Collection
	Funding      *Funding
	Clock        *Clock

	// Value is the outcome of a command of a feature's sub-package (a
	// copy of the record it made or changed…), which that package reads
	// back (feature.go).
	Value any
}

// Apply applies one command and returns its result: every command carries
// its rule (Applier), the built-in ones' included.
func (s *State) Apply(cmd Command) Result {
	if c, ok := cmd.(Applier); ok {
		return c.Apply(s)
	}
	panic(fmt.Sprintf("ledger: no rule for command %T", cmd))
}

// The built-in commands' rules.
func (c *CreateOrganization) Apply(s *State) Result   { return s.createOrganization(c) }
func (c *CreateAPIKey) Apply(s *State) Result         { return s.createAPIKey(c) }
func (c *RevokeAPIKey) Apply(s *State) Result         { return s.revokeAPIKey(c) }
func (c *FundBalance) Apply(s *State) Result          { return s.fundBalance(c) }
func (c *CreatePayout) Apply(s *State) Result         { return s.createPayout(c) }
func (c *MarkPayoutProcessing) Apply(s *State) Result { return s.markPayoutProcessing(c) }
func (c *SettlePayout) Apply(s *State) Result         { return s.settlePayout(c) }
func (c *CreateCollection) Apply(s *State) Result     { return s.createCollection(c) }
func (c *SettleCollection) Apply(s *State) Result     { return s.settleCollection(c) }
