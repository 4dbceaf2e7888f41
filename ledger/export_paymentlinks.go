package ledger

// What package paymentlinks (payment links, payment pages, checkout
// sessions and their deposits, ledger/paymentlinks) needs of the kernel: a
// checkout charges the payer through a collection, books the deposits it
// takes, expires links and sessions by deadline, and follows the
// collections it made through an event hook. Each export is a thin wrapper
// over the kernel's own.
//
// Payment links lived in the kernel before they moved out, and they keep
// the places they held in two of its orders, which NewState reserves where
// the feature was made (reserveLinkSlots): two expirers numbered between the
// quotes' and the orders' (deadlines that fall at the same time expire by
// number), and an event hook after the features' and before the spend
// caps'. The feature fills them (SetLinkExpirers, SetCollectionHook), so a
// State expires and reacts in the order it did.

// linkSlots are the places reserved for package paymentlinks.
type linkSlots struct {
	linkExpiry, sessionExpiry uint8
	collectionHook            func(*State, Event)
}

// reserveLinkSlots reserves the feature's two expirers and its hook; they
// do nothing until it fills them.
func (s *State) reserveLinkSlots() {
	idle := expirer{
		each:     func(*State, func(string, int64, string)) {},
		deadline: func(*State, string) (string, int64, bool) { return "", 0, false },
		expire:   func(*State, string, int64) {},
	}
	s.links.linkExpiry = s.registerExpirer(idle)
	s.links.sessionExpiry = s.registerExpirer(idle)
	s.eventHooks = append(s.eventHooks, func(s *State, ev Event) {
		if h := s.links.collectionHook; h != nil {
			h(s, ev)
		}
	})
}

// Expirer is a feature's deadline-driven transitions (clock.go): Each
// calls add with every open deadline (at Load, and after a clock jump),
// Deadline returns a record's deadline now on its organization's clock
// (ok false once it has none), and Expire makes the record's transition at
// leader time at.
type Expirer struct {
	Each     func(s *State, add func(org string, due int64, id string))
	Deadline func(s *State, id string) (org string, due int64, ok bool)
	Expire   func(s *State, id string, at int64)
}

func (x Expirer) expirer() expirer {
	return expirer{each: x.Each, deadline: x.Deadline, expire: x.Expire}
}

// SetLinkExpirers fills the expirers reserved for payment links and
// checkout sessions, and returns their numbers for AddDeadline. It is
// called from the function package paymentlinks gives AddFeature.
func (s *State) SetLinkExpirers(link, session Expirer) (linkExpiry, sessionExpiry uint8) {
	s.expirers[s.links.linkExpiry] = link.expirer()
	s.expirers[s.links.sessionExpiry] = session.expirer()
	return s.links.linkExpiry, s.links.sessionExpiry
}

// AddDeadline records that the record id of expirer x falls due when its
// organization's clock reads due: a link or a session given a deadline.
func (s *State) AddDeadline(x uint8, org string, due int64, id string) {
	s.addDeadline(x, org, due, id)
}

// SetCollectionHook sets the event hook reserved for package paymentlinks,
// which settles a checkout session when its collection ends, in the Apply
// that settles the collection.
func (s *State) SetCollectionHook(h func(*State, Event)) { s.links.collectionHook = h }

// EachInMemory calls fn with every record of the store that is in memory:
// the open ones, and those changed since the last release. An expirer
// walks them for its deadlines (Expirer.Each); the order is not defined.
func (st Store[V]) EachInMemory(fn func(*V)) {
	for _, r := range st.t.rows {
		fn(&r.v)
	}
}

// Lookup and filter names a checkout's records use (layout.go).
const (
	IndexReference = indexReference // the organization's reference: RefKey(org, ref)
	IndexLeg       = indexLeg       // a session's collection
)

// RefKey is an organization's reference as a lookup key of IndexReference,
// "" for no reference: references are unique within an organization.
func RefKey(org, ref string) string { return refKey(org, ref) }

// CollectionByID returns a collection, open or closed: a checkout checks
// that its new collection's id is free, and its hook reads the collection
// an event is about.
func (s *State) CollectionByID(id string) (Collection, bool) { return s.collections.get(id) }

// InsertCollection adds a new collection, the charge of a mobile money
// session or the collection of a deposit, with the kernel's set of open
// collections (which the rail driver moves).
func (s *State) InsertCollection(col Collection) { s.insertCollection(col) }

// MerchantAccount returns an organization's balance account in currency,
// creating it (at leader time at) when create is set: where a checkout
// credits.
func (s *State) MerchantAccount(org, currency string, at int64, create bool) (Account, bool) {
	return s.merchantAccount(org, currency, at, create)
}

// SystemAccount returns the service's account for a purpose and currency,
// creating it on first use: the source a deposit is booked from.
func (s *State) SystemAccount(p AccountPurpose, currency string, at int64) string {
	return s.systemAccount(p, currency, at)
}

// Posting is one leg of a balanced booking (Book).
type Posting struct {
	Account string
	Type    EntryType
	Amount  Minor
}

// Book books balanced postings atomically in the journal, under the
// record refID and its external reference: a deposit into a checkout
// session credits the merchant from the collections source.
func (s *State) Book(at int64, refID, externalRef string, ps []Posting) (uint64, *Error) {
	postings := make([]posting, len(ps))
	for i, p := range ps {
		postings[i] = posting{p.Account, p.Type, p.Amount}
	}
	return s.book(at, refID, externalRef, postings)
}

// EmitCredited records account.credited for the account as it is after a
// credit.
func (s *State) EmitCredited(at int64, number string) { s.emitCredited(at, number) }
