package ledger

import "fmt"

// State is the whole ledger: every resource, every balance, every posting.
// It changes only through Apply, which is deterministic: the same commands in
// the same order produce the same state, byte for byte (see Snapshot).
//
// State is not safe for concurrent use. Its owner (the Raft FSM) applies
// commands on one goroutine and guards reads from other goroutines with a
// read-write lock; the read methods never modify the state.
type State struct {
	// Tables of records, by id. They are what a snapshot holds.
	orgs        table[Organization]
	keys        table[APIKey]
	accounts    table[Account]
	payouts     table[Payout]
	collections table[Collection]
	fundings    table[Funding] // by refKey(org, externalReference)

	// Creation order of every table, append-only; a snapshot walks these so
	// that its bytes do not depend on map iteration order.
	orgOrder        []string
	keyOrder        []string
	accountOrder    []string
	payoutOrder     appendList[string]
	collectionOrder appendList[string]
	fundingOrder    []string

	// entries is the journal: every posting, in booking order. Entries are
	// immutable; an entry's sequence number is its index plus one.
	entries appendList[Entry]

	// Indexes, derived from the tables and rebuilt on restore.
	keyByHash            map[[32]byte]string
	systemAccounts       map[systemKey]string
	keysByOrg            map[string][]string
	accountByOrgCurrency map[orgKey]string
	accountsByOrg        map[string][]string
	entriesByAccount     map[string]*appendList[uint64]
	payoutsByOrg         map[string]*appendList[string]
	payoutByRef          map[orgKey]string
	openPayouts          map[string]struct{}
	collectionsByOrg     map[string]*appendList[string]
	collectionByRef      map[orgKey]string
	openCollections      map[string]struct{}

	// Records of later features (see extend.go), snapshotted in this order
	// after the built-in tables.
	sections []section
	events   *eventLog
	clocks   *store[Clock]

	// eventHooks run for every event, in the Apply that emits it (webhook
	// fan-out, checkout sessions following their collections).
	eventHooks []func(*State, Event)
	// expirers make deadline-driven transitions (see clock.go).
	expirers []expirer

	// The features' records and indexes, each owned by its file.
	recipients          *store[Recipient]      // recipient.go
	files               *store[File]           // file.go
	fileKeys            *store[fileSigningKey] // file.go
	disputes            *store[Dispute]        // dispute.go
	disputeByCollection map[string]string      // dispute.go: collection id → its dispute
	fx                  conversions            // conversion.go: quotes and conversions
	webhooks            webhookState           // webhook.go: endpoints and deliveries
	pl                  *linkState             // paymentlink.go, checkout.go: links, pages, sessions
	deposits            *depositState          // deposit.go: virtual accounts, crypto addresses, deposits
	orders              *orderBook             // order.go
	payoutFX            *store[PayoutFX]       // fxpayout.go: cross-currency payouts' FX details

	frozen bool // a snapshot is reading the tables' bases
}

// orgKey is a map key scoped to an organization: a reference, a currency.
type orgKey struct {
	org, name string
}

// indexOf returns the list under key, creating it.
func indexOf[T any](m map[string]*appendList[T], key string) *appendList[T] {
	l, ok := m[key]
	if !ok {
		l = &appendList[T]{}
		m[key] = l
	}
	return l
}

// NewState returns an empty ledger.
func NewState() *State {
	s := &State{
		orgs:        newTable[Organization](),
		keys:        newTable[APIKey](),
		accounts:    newTable[Account](),
		payouts:     newTable[Payout](),
		collections: newTable[Collection](),
		fundings:    newTable[Funding](),

		keyByHash:            make(map[[32]byte]string),
		systemAccounts:       make(map[systemKey]string),
		keysByOrg:            make(map[string][]string),
		accountByOrgCurrency: make(map[orgKey]string),
		accountsByOrg:        make(map[string][]string),
		entriesByAccount:     make(map[string]*appendList[uint64]),
		payoutsByOrg:         make(map[string]*appendList[string]),
		payoutByRef:          make(map[orgKey]string),
		openPayouts:          make(map[string]struct{}),
		collectionsByOrg:     make(map[string]*appendList[string]),
		collectionByRef:      make(map[orgKey]string),
		openCollections:      make(map[string]struct{}),
	}
	s.events = newEventLog()
	s.clocks = newStore("clocks", func(c *Clock) (string, string) { return c.OrgID, c.OrgID }, encodeClock, decodeClock)
	s.sections = append(s.sections, s.events, s.clocks)

	// The features, each registering its stores, hooks and expirers. The
	// order fixes the order of snapshot sections and of hooks; Restore
	// finds sections by name.
	s.recipients = newRecipientStore()
	s.sections = append(s.sections, s.recipients)
	s.files, s.fileKeys = newFileStores()
	s.disputes = newDisputeStore()
	s.disputeByCollection = make(map[string]string)
	s.sections = append(s.sections, s.files, s.fileKeys, s.disputes)
	s.fx = newConversions(s)
	s.initWebhooks()
	s.initPaymentLinks()
	s.deposits = newDepositState(s)
	s.registerOrders()
	s.payoutFX = newPayoutFXStore()
	s.sections = append(s.sections, s.payoutFX)
	return s
}

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

	PaymentLink     *PaymentLink
	PaymentPage     *PaymentPage
	CheckoutSession *CheckoutSession
	CheckoutDeposit *CheckoutDeposit

	// Recipients (recipient.go).
	Recipient      *Recipient
	RecipientBatch []RecipientOutcome
	// Files and disputes.
	File           *File
	Dispute        *Dispute
	DisputeMessage *DisputeMessage

	// Quotes and conversions.
	Quote      *Quote
	Conversion *Conversion

	// Webhooks (webhook.go).
	WebhookEndpoint *WebhookEndpoint
	WebhookDelivery *WebhookDelivery

	// Virtual accounts, crypto addresses and deposits (deposit.go).
	VirtualAccount *VirtualAccount
	CryptoAddress  *CryptoAddress
	Deposit        *Deposit // with Collection, the collection it made
	// Orders (order.go).
	Order *Order
}

// Apply applies one command and returns its result.
func (s *State) Apply(cmd Command) Result {
	switch c := cmd.(type) {
	case *CreateOrganization:
		return s.createOrganization(c)
	case *CreateAPIKey:
		return s.createAPIKey(c)
	case *RevokeAPIKey:
		return s.revokeAPIKey(c)
	case *FundBalance:
		return s.fundBalance(c)
	case *CreatePayout:
		return s.createPayout(c)
	case *MarkPayoutProcessing:
		return s.markPayoutProcessing(c)
	case *SettlePayout:
		return s.settlePayout(c)
	case *CreateCollection:
		return s.createCollection(c)
	case *SettleCollection:
		return s.settleCollection(c)
	case applier:
		return c.apply(s)
	default:
		panic(fmt.Sprintf("ledger: no rule for command %T", cmd))
	}
}

// Check verifies the ledger's invariants and returns the first violation:
// the journal sums to zero per currency; every account's total is the sum of
// its entries and each entry's BalanceAfter is the running total; no
// merchant's available balance is negative. It walks the whole journal, so
// tests and audits call it, not the hot path.
func (s *State) Check() error {
	sums := make(map[string]Minor)
	running := make(map[string]Minor)
	var err error
	s.entries.all(func(i int, e Entry) {
		a, ok := s.accounts.get(e.Account)
		switch {
		case err != nil:
		case !ok:
			err = fmt.Errorf("entry %d: unknown account %s", i+1, e.Account)
		default:
			sums[a.Currency] += e.Amount
			running[e.Account] += e.Amount
			if running[e.Account] != e.BalanceAfter {
				err = fmt.Errorf("entry %d on %s: balanceAfter %d, running total %d", i+1, e.Account, e.BalanceAfter, running[e.Account])
			}
		}
	})
	if err != nil {
		return err
	}
	for cur, sum := range sums {
		if sum != 0 {
			return fmt.Errorf("postings in %s sum to %d, not zero", cur, sum)
		}
	}
	for _, n := range s.accountOrder {
		a, _ := s.accounts.get(n)
		if a.Total != running[n] {
			return fmt.Errorf("account %s: total %d, entries sum to %d", n, a.Total, running[n])
		}
		if a.Purpose == PurposeMerchant && a.Available() < 0 {
			return fmt.Errorf("account %s: available balance %d is negative", n, a.Available())
		}
		if a.Held < 0 {
			return fmt.Errorf("account %s: holds %d, a negative amount", n, a.Held)
		}
	}
	return s.checkHolds()
}
