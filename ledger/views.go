package ledger

import (
	"slices"
	"sync"
	"sync/atomic"

	"payments/ledger/kv"
)

// views are the always-open records that readers look at on every request
// (the API key that authenticates it, its organization, the balances an
// account actor checks, the sandbox clocks), kept in memory for them. The
// applying goroutine publishes each change once its batch is committed,
// so a reader sees what the state store holds, and never waits for Apply:
// reads are lock-free loads of a sync.Map.
type views struct {
	orgs     syncMap[string, Organization]
	firstOrg atomic.Pointer[string]
	keys     syncMap[[32]byte, APIKey] // by the hash of the secret
	accounts syncMap[string, Account]  // merchant accounts, by number
	// byOrgCurrency and byOrg are merchant account numbers: they never
	// change once set, but for byOrg growing by copy.
	byOrgCurrency syncMap[orgKey, string]
	byOrg         syncMap[string, []string]
	clocks        syncMap[string, Clock]
	// nextDeadline is the earliest deadline in leader time (clock.go).
	nextDeadline atomic.Int64
	// lookups proves references new without reading the state store.
	lookups *kv.LookupFilter
}

func newViews() *views { return &views{lookups: kv.NewLookupFilter()} }

func (v *views) putOrganization(o *Organization) {
	v.orgs.store(o.ID, *o)
	if v.firstOrg.Load() == nil {
		id := o.ID
		v.firstOrg.Store(&id)
	}
}

func (v *views) putKey(k *APIKey) { v.keys.store(digest(k.Hash), *k) }

func (v *views) putAccount(a *Account) {
	if a.Purpose != PurposeMerchant {
		return
	}
	if _, ok := v.accounts.load(a.Number); !ok {
		v.byOrgCurrency.store(orgKey{a.OrgID, a.Currency}, a.Number)
		numbers, _ := v.byOrg.load(a.OrgID)
		v.byOrg.store(a.OrgID, append(slices.Clip(numbers), a.Number))
	}
	v.accounts.store(a.Number, *a)
}

func (v *views) putClock(c *Clock) { v.clocks.store(c.OrgID, *c) }

// load publishes every always-open record of a freshly loaded state, in
// creation order.
func (v *views) load(s *State) {
	eachBySeq(s.orgs, v.putOrganization)
	eachBySeq(s.keys, v.putKey)
	eachBySeq(s.accounts, v.putAccount)
	eachBySeq(s.clocks, v.putClock)
}

func eachBySeq[V any](t *store[V], fn func(*V)) {
	rows := make([]*row[V], 0, len(t.rows))
	for _, r := range t.rows {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b *row[V]) int { return cmpUint(a.seq, b.seq) })
	for _, r := range rows {
		fn(&r.v)
	}
}

// Views is the readers' side of views; see Reader, which embeds it.
type Views struct{ v *views }

// Organization returns the organization with the given id.
func (w Views) Organization(id string) (Organization, bool) { return w.v.orgs.load(id) }

// FirstOrganization returns the organization created first, the one the
// server bootstrapped on an empty data directory.
func (w Views) FirstOrganization() (Organization, bool) {
	id := w.v.firstOrg.Load()
	if id == nil {
		return Organization{}, false
	}
	return w.v.orgs.load(*id)
}

// APIKeyByHash finds a key by the SHA-256 of its secret.
func (w Views) APIKeyByHash(hash [32]byte) (APIKey, bool) { return w.v.keys.load(hash) }

// Account returns the merchant account with the given number.
func (w Views) Account(number string) (Account, bool) { return w.v.accounts.load(number) }

// AccountFor returns an organization's account in a currency.
func (w Views) AccountFor(orgID, currency string) (Account, bool) {
	number, ok := w.v.byOrgCurrency.load(orgKey{orgID, currency})
	if !ok {
		return Account{}, false
	}
	return w.v.accounts.load(number)
}

// Accounts lists an organization's accounts in the order they were opened.
func (w Views) Accounts(orgID string) []Account {
	numbers, _ := w.v.byOrg.load(orgID)
	out := make([]Account, 0, len(numbers))
	for _, n := range numbers {
		if a, ok := w.v.accounts.load(n); ok {
			out = append(out, a)
		}
	}
	return out
}

// Clock returns an organization's sandbox clock; the zero offset if it was
// never advanced.
func (w Views) Clock(orgID string) Clock {
	if c, ok := w.v.clocks.load(orgID); ok {
		return c
	}
	return Clock{OrgID: orgID}
}

// OrgNow is an organization's current time, in unix milliseconds, when the
// leader's clock reads at.
func (w Views) OrgNow(orgID string, at int64) int64 {
	return at + w.Clock(orgID).OffsetMillis
}

// NextDeadline is the earliest deadline of a quote, order, link or session,
// in leader time (unix ms), 0 for none: the leader proposes a Tick once it
// has passed.
func (w Views) NextDeadline() int64 { return w.v.nextDeadline.Load() }

// syncMap is sync.Map with types: lock-free loads, for maps written by one
// goroutine and read by many.
type syncMap[K comparable, V any] struct{ m sync.Map }

func (m *syncMap[K, V]) load(k K) (V, bool) {
	v, ok := m.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (m *syncMap[K, V]) store(k K, v V) { m.m.Store(k, v) }

// FillLookupFilter reads every lookup key of the state store r into the
// filter that lets creates skip the state store when their reference is
// new (kv.LookupFilter). The FSM runs it on a goroutine of its own once the
// state is loaded; until it returns, lookups read the state store. stop
// is polled between chunks of keys: when it reports true, the fill is
// abandoned and the filter stays off.
func (w Views) FillLookupFilter(r KVReader, stop func() bool) error {
	return w.v.lookups.Fill(r, stop, kv.FillChunk)
}

// LookupFilterOn reports whether the lookup filter holds every lookup key
// and answers (see FillLookupFilter).
func (w Views) LookupFilterOn() bool { return w.v.lookups.On() }

// RetireLookupFilter stops the lookup filter answering for good, before
// the state store under it is replaced: a Reader made before the new
// state is loaded then reads the store rather than trust keys it never
// saw.
func (w Views) RetireLookupFilter() { w.v.lookups.Retire() }
