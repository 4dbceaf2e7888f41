package ledger

import (
	"fmt"
	"hash/fnv"
	"strconv"
)

// Account is a balance: a merchant's balance account in one currency, or one
// of the service's own accounts (clearing, fees, funding) that hold the other
// side of every posting. Merchant account numbers are the currency code and
// eight digits ("GHS12345678"); system account numbers are "SYS:" + purpose +
// ":" + currency (+ ":" + organization, for one organization's) and never
// leave the ledger.
type Account struct {
	Number   string
	OrgID    string // empty for the system accounts every organization shares
	Currency string
	Purpose  AccountPurpose

	Total Minor // sum of every posting on the account
	Held  Minor // amounts on hold (not spendable, still in Total)

	// Reservation is the highest reservation number of a debit proposed by
	// the account's actor that the ledger has applied, whatever its outcome.
	// The actor counts its in-flight debits above this number as reserved;
	// see package actors.
	Reservation uint64

	CreatedAt int64
	// LastEntryAt is the time of the account's newest entry (unix ms),
	// kept on merchant accounts: their entries' times never go back, so
	// that a walk of a statement bounded by time can stop, or start, at
	// the range's edge (Reader.Journal). An entry carries its command's
	// time, the proposing leader's clock; after a leader change the new
	// leader's clock may be a little behind, and book then uses this.
	LastEntryAt int64
}

// Available is what a debit created now could draw on.
func (a Account) Available() Minor { return a.Total - a.Held }

// AccountPurpose says what an account is for.
type AccountPurpose uint8

// Account purposes. Values are frozen (stored in snapshots).
const (
	PurposeMerchant          AccountPurpose = 1 // an organization's balance
	PurposePayoutsClearing   AccountPurpose = 2 // payouts accepted, not yet settled by the rail
	PurposeFeeRevenue        AccountPurpose = 3 // fees earned
	PurposeSandboxFunding    AccountPurpose = 4 // the source of simulated top-ups
	PurposeRailSettlement    AccountPurpose = 5 // money that left through a rail (payouts settled)
	PurposeCollectionsSource AccountPurpose = 6 // money that arrived through a rail (collections)
	purposeEnd               AccountPurpose = 7
)

var purposeNames = [...]string{
	PurposeMerchant:          "merchant",
	PurposePayoutsClearing:   "payouts_clearing",
	PurposeFeeRevenue:        "fee_revenue",
	PurposeSandboxFunding:    "sandbox_funding",
	PurposeRailSettlement:    "rail_settlement",
	PurposeCollectionsSource: "collections_source",
}

// featurePurposes are account purposes that features register from their
// own files (registerPurpose), by name.
var featurePurposes = map[AccountPurpose]string{}

// registerPurpose adds an account purpose outside the built-in range. It is
// called from init functions.
func registerPurpose(p AccountPurpose, name string) {
	if _, dup := featurePurposes[p]; dup || p < purposeEnd {
		panic(fmt.Sprintf("ledger: account purpose %d registered twice", p))
	}
	featurePurposes[p] = name
}

func (p AccountPurpose) String() string {
	if name, ok := featurePurposes[p]; ok {
		return name
	}
	if p == 0 || p >= purposeEnd {
		return "purpose(" + strconv.Itoa(int(p)) + ")"
	}
	return purposeNames[p]
}

func systemAccountNumber(p AccountPurpose, currency string) string {
	return "SYS:" + p.String() + ":" + currency
}

// EntryType is what booked a ledger entry. Values are frozen (stored in the
// log's effects and in snapshots); names are the API's.
type EntryType uint8

// Entry types. The first group appears on merchant accounts, the second only
// on system accounts.
const (
	EntryManualCredit         EntryType = 1
	EntryPayoutDebit          EntryType = 2
	EntryPayoutRefund         EntryType = 3
	EntryFeeDebit             EntryType = 4
	EntryFeeRefund            EntryType = 5
	EntryCollectionCredit     EntryType = 6
	EntryCollectionFeeDebit   EntryType = 7
	EntryPayoutCredit         EntryType = 8  // clearing receives a payout's principal
	EntryFeeRevenue           EntryType = 9  // fee revenue receives a payout fee
	EntryCollectionFeeRevenue EntryType = 10 // fee revenue receives a collection fee
	EntryPayoutSettlement     EntryType = 11 // a settled payout leaves clearing
	EntryFundingSource        EntryType = 12 // the sandbox funding source pays a top-up
	EntryCollectionSource     EntryType = 13 // the rail pays a collection
	entryTypeEnd              EntryType = 14
)

var entryTypeNames = EnumNames[EntryType]{
	EntryManualCredit:         "manual_credit",
	EntryPayoutDebit:          "payout_debit",
	EntryPayoutRefund:         "payout_refund",
	EntryFeeDebit:             "fee_debit",
	EntryFeeRefund:            "fee_refund",
	EntryCollectionCredit:     "collection_credit",
	EntryCollectionFeeDebit:   "collection_fee_debit",
	EntryPayoutCredit:         "payout_credit",
	EntryFeeRevenue:           "fee_revenue",
	EntryCollectionFeeRevenue: "collection_fee_revenue",
	EntryPayoutSettlement:     "payout_settlement",
	EntryFundingSource:        "funding_source",
	EntryCollectionSource:     "collection_source",
}

// featureEntryTypes are entry types that features register from their own
// files (registerEntryType): name and reference type.
var featureEntryTypes = map[EntryType][2]string{}

// registerEntryType adds an entry type outside the built-in range. It is
// called from init functions.
func registerEntryType(t EntryType, name, referenceType string) {
	if _, dup := featureEntryTypes[t]; dup || t < entryTypeEnd {
		panic(fmt.Sprintf("ledger: entry type %d registered twice", t))
	}
	featureEntryTypes[t] = [2]string{name, referenceType}
}

func (t EntryType) String() string {
	if f, ok := featureEntryTypes[t]; ok {
		return f[0]
	}
	if t == 0 || t >= entryTypeEnd {
		return "entry(" + strconv.Itoa(int(t)) + ")"
	}
	return entryTypeNames[t]
}

// ParseEntryType returns the entry type with the given API name.
func ParseEntryType(name string) (EntryType, bool) {
	if t, ok := entryTypeNames.Parse(name); ok {
		return t, true
	}
	for t, f := range featureEntryTypes {
		if f[0] == name {
			return t, true
		}
	}
	return 0, false
}

// ReferenceType names the kind of resource that booked entries of type t.
func (t EntryType) ReferenceType() string {
	if f, ok := featureEntryTypes[t]; ok {
		return f[1]
	}
	switch t {
	case EntryManualCredit, EntryFundingSource:
		return "topup"
	case EntryCollectionCredit, EntryCollectionFeeDebit, EntryCollectionFeeRevenue, EntryCollectionSource:
		return "collection"
	default:
		return "payout"
	}
}

// Entry is one posting: a signed amount on one account. Its sequence number
// is its position in the global journal (1-based), which orders every booking.
type Entry struct {
	Account      string
	Type         EntryType
	Amount       Minor // credits positive, debits negative
	BalanceAfter Minor // the account's Total after this entry
	RefID        string
	ExternalRef  string
	At           int64
}

// accountKind: balance accounts stay open for good.
var accountKind = newKind(tagAccount, "account", func(a *Account) (string, string) { return a.Number, a.OrgID },
	storedBy(func(e *Encoder, a *Account) { a.fields(e.Codec()) }, decodeAccount))

// Posting is one leg of a transaction before it is booked (book, and a
// feature's Book).
type Posting struct {
	Account string
	Type    EntryType
	Amount  Minor
}

// book applies a balanced set of postings atomically: all of them or, when an
// account would overflow, none. Postings must sum to zero; a set that does
// not is a bug, and the ledger stops rather than book it. It returns the
// sequence number of the first entry; the others follow in order.
func (s *State) book(at int64, refID, externalRef string, postings []Posting) (uint64, *Error) {
	var sum Minor
	for _, p := range postings {
		var ok bool
		if sum, ok = addMinor(sum, p.Amount); !ok {
			return 0, Errorf(CodeValidation, "amount out of range")
		}
	}
	if sum != 0 {
		panic(fmt.Sprintf("ledger: unbalanced postings for %s: sum %d", refID, sum))
	}
	// The accounts' rows, looked up once: every account is in memory
	// (accounts never close), and a missing one is a bug, found below.
	var room [8]*row[Account]
	rows := room[:0]
	for _, p := range postings {
		rows = append(rows, s.accounts.rows[p.Account])
	}
	// The entries are on the clock of the organization whose balances they
	// move (clock.go), and never go back along a merchant account's
	// statement.
	org := ""
	for _, r := range rows {
		if r != nil && r.v.OrgID != "" {
			org = r.v.OrgID
			break
		}
	}
	at = s.OrgNow(org, at)
	for _, r := range rows {
		if r != nil && r.v.Purpose == PurposeMerchant && r.v.LastEntryAt > at {
			at = r.v.LastEntryAt
		}
	}
	// Compute every balance first so a failure leaves nothing half-booked.
	// One account may take several postings (a debit and its fee).
	entries := s.journal.newEntries(len(postings))
	merchant := s.journal.newMerchantFlags(len(postings))
	for i, p := range postings {
		total, found := Minor(0), false
		for j := i - 1; j >= 0; j-- {
			if postings[j].Account == p.Account {
				total, found = entries[j].BalanceAfter, true
				break
			}
		}
		r := rows[i]
		if r == nil {
			panic("ledger: posting to missing account " + p.Account)
		}
		if !found {
			total = r.v.Total
		}
		after, ok := addMinor(total, p.Amount)
		if !ok {
			return 0, BalanceLimit(r.v.Currency)
		}
		entries[i] = Entry{Account: p.Account, Type: p.Type, Amount: p.Amount, BalanceAfter: after,
			RefID: refID, ExternalRef: externalRef, At: at}
		merchant[i] = r.v.Purpose == PurposeMerchant
	}
	for i, r := range rows {
		r.v.Total = entries[i].BalanceAfter
		if r.v.Purpose == PurposeMerchant {
			r.v.LastEntryAt = at
		}
		s.accounts.touch(r)
	}
	return s.journal.add(entries, merchant), nil
}

// merchantAccount returns the organization's account in currency, creating
// it on first touch when create is set; at is leader time.
func (s *State) merchantAccount(orgID, currency string, at int64, create bool) (Account, bool) {
	if number, ok := s.accountByOrgCurrency[orgKey{orgID, currency}]; ok {
		a, _ := s.accounts.get(number)
		return a, true
	}
	if !create {
		return Account{}, false
	}
	a := Account{
		Number:    s.newAccountNumber(orgID, currency),
		OrgID:     orgID,
		Currency:  currency,
		Purpose:   PurposeMerchant,
		CreatedAt: s.OrgNow(orgID, at),
	}
	s.accounts.insert(a)
	s.indexAccount(&a)
	return a, true
}

// systemAccount returns the service's account for a purpose and currency,
// creating it on first use.
func (s *State) systemAccount(p AccountPurpose, currency string, at int64) string {
	return s.orgSystemAccount(p, "", currency, at)
}

// orgSystemAccount returns the service's account for a purpose and
// currency that belongs to one organization (org "" for one shared by
// all), creating it on first use. Sandbox top-ups are paid from one per
// organization, so that one tenant's top-ups, however large, never take
// the source past its limit for another.
func (s *State) orgSystemAccount(p AccountPurpose, org, currency string, at int64) string {
	if number, ok := s.systemAccounts[systemKey{p, currency, org}]; ok {
		return number
	}
	number := systemAccountNumber(p, currency)
	if org != "" {
		number += ":" + org
	}
	a := Account{Number: number, OrgID: org, Currency: currency, Purpose: p, CreatedAt: s.OrgNow(org, at)}
	s.accounts.insert(a)
	s.indexAccount(&a)
	return a.Number
}

// systemKey names a system account: its purpose, currency, and the
// organization it serves ("" for every one).
type systemKey struct {
	purpose  AccountPurpose
	currency string
	org      string
}

func (s *State) indexAccount(a *Account) {
	if a.Purpose != PurposeMerchant {
		s.systemAccounts[systemKey{a.Purpose, a.Currency, a.OrgID}] = a.Number
		return
	}
	s.accountByOrgCurrency[orgKey{a.OrgID, a.Currency}] = a.Number
}

// newAccountNumber derives an account number from the organization and
// currency, probing forward on a collision. It depends only on the state, so
// every replica picks the same number.
func (s *State) newAccountNumber(orgID, currency string) string {
	h := fnv.New64a()
	h.Write([]byte(orgID))
	h.Write([]byte{0})
	h.Write([]byte(currency))
	n := h.Sum64() % 100_000_000
	for {
		number := fmt.Sprintf("%s%08d", currency, n)
		if _, taken := s.accounts.get(number); !taken {
			return number
		}
		n = (n + 1) % 100_000_000
	}
}

// NumberedEntry is an entry with its sequence number in the journal.
type NumberedEntry struct {
	Seq   uint64
	Entry Entry
}

// EntryFilter selects entries in a statement; zero fields match everything.
type EntryFilter struct {
	Type  EntryType
	RefID string
	From  int64 // unix ms, inclusive; 0 for no bound
	To    int64 // unix ms, inclusive; 0 for no bound
}

func (f *EntryFilter) keep(e *Entry) bool {
	return (f.Type == 0 || e.Type == f.Type) &&
		(f.RefID == "" || e.RefID == f.RefID) &&
		(f.From == 0 || e.At >= f.From) &&
		(f.To == 0 || e.At <= f.To)
}

// Statement lists a merchant account's entries newest first, from below
// the entry sequence number before. Paging back to the start and summing
// the amounts gives the account's total.
func (r *Reader) Statement(number string, f EntryFilter, before Cursor, limit int) Page[NumberedEntry] {
	return r.Journal("", JournalFilter{Account: number, Type: f.Type, RefID: f.RefID, From: f.From, To: f.To}, before, limit)
}

// Entry identifiers are "le_" and a bijective scramble of the sequence
// number, so they look opaque yet map back to their place in the journal
// without an index.

// EntryID returns the public identifier of the entry with sequence seq.
func EntryID(seq uint64) string {
	return "le_" + strconv.FormatUint(scramble(seq), 36)
}

// ParseEntryID returns the sequence number of an entry identifier.
func ParseEntryID(id string) (uint64, bool) {
	if len(id) <= 3 || id[:3] != "le_" {
		return 0, false
	}
	v, err := strconv.ParseUint(id[3:], 36, 64)
	if err != nil || EntryID(unscramble(v)) != id {
		return 0, false
	}
	return unscramble(v), true
}

const (
	mixA = 0xbf58476d1ce4e5b9
	mixB = 0x94d049bb133111eb
)

var (
	mixAInverse = inverseMod64(mixA)
	mixBInverse = inverseMod64(mixB)
)

// scramble is the splitmix64 finalizer: every step is invertible.
func scramble(z uint64) uint64 {
	z = (z ^ (z >> 30)) * mixA
	z = (z ^ (z >> 27)) * mixB
	return z ^ (z >> 31)
}

func unscramble(z uint64) uint64 {
	z = unshiftXor(z, 31) * mixBInverse
	z = unshiftXor(z, 27) * mixAInverse
	return unshiftXor(z, 30)
}

// unshiftXor inverts z ^= z >> k.
func unshiftXor(z uint64, k uint) uint64 {
	x := z
	for i := k; i < 64; i += k {
		x = z ^ (x >> k)
	}
	return x
}

// inverseMod64 returns the inverse of an odd x modulo 2^64 (Newton's method).
func inverseMod64(x uint64) uint64 {
	inv := x
	for i := 0; i < 6; i++ {
		inv *= 2 - x*inv
	}
	return inv
}
