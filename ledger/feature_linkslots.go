package ledger

// Places the kernel keeps for package paymentlinks (payment links, payment
// pages, checkout sessions and their deposits). Payment links lived in the
// kernel before they moved out, and they keep the places they held in two
// of its orders, which NewState reserves where the feature was made
// (reserveLinkSlots): two expirers numbered before the orders' (deadlines
// that fall at the same time expire by number), and an event hook after
// the features'. The feature fills them
// (SetLinkExpirers, SetCollectionHook), so a State expires and reacts in
// the order it did.

// linkSlots are the places reserved for package paymentlinks.
type linkSlots struct {
	linkExpiry, sessionExpiry uint8
	collectionHook            func(*State, Event)
}

// reserveLinkSlots reserves the feature's two expirers and its hook; they
// do nothing until it fills them.
func (s *State) reserveLinkSlots() {
	idle := Expirer{
		Each:     func(*State, func(string, int64, string)) {},
		Deadline: func(*State, string) (string, int64, bool) { return "", 0, false },
		Expire:   func(*State, string, int64) {},
	}
	s.links.linkExpiry = s.registerExpirer(idle)
	s.links.sessionExpiry = s.registerExpirer(idle)
	s.eventHooks = append(s.eventHooks, func(s *State, ev Event) {
		if h := s.links.collectionHook; h != nil {
			h(s, ev)
		}
	})
}

// SetLinkExpirers fills the expirers reserved for payment links and
// checkout sessions, and returns their numbers for AddDeadline. It is
// called from the function package paymentlinks gives AddFeature.
func (s *State) SetLinkExpirers(link, session Expirer) (linkExpiry, sessionExpiry uint8) {
	s.expirers[s.links.linkExpiry] = link
	s.expirers[s.links.sessionExpiry] = session
	return s.links.linkExpiry, s.links.sessionExpiry
}

// SetCollectionHook sets the event hook reserved for package paymentlinks,
// which settles a checkout session when its collection ends, in the Apply
// that settles the collection.
func (s *State) SetCollectionHook(h func(*State, Event)) { s.links.collectionHook = h }
