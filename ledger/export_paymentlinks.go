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

// InsertCollection adds a new collection, the charge of a mobile money
// session or the collection of a deposit, with the kernel's set of open
// collections (which the rail driver moves).
func (s *State) InsertCollection(col Collection) { s.insertCollection(col) }
