package links

import core "payments/http/core"

import "payments/ledger/paymentlinks"

// The hosted checkout's reads of ledger state: every one of them is here,
// so that they move together when the read path changes.

// checkoutState is what the hosted checkout reads of one link at one
// moment.
type checkoutState struct {
	link     paymentlinks.Link
	sessions []paymentlinks.Session // newest first
	now      int64                  // the link's organization's clock, unix ms
}

// session returns the link's session with id.
func (cs *checkoutState) session(id string) (paymentlinks.Session, bool) {
	for _, c := range cs.sessions {
		if c.ID == id {
			return c, true
		}
	}
	return paymentlinks.Session{}, false
}

// readCheckout reads a link by id, whatever its organization (the checkout
// has no key to name one), with its sessions and its organization's clock,
// from one view of the applied state.
func readCheckout(s *core.Server, linkID string) (checkoutState, bool) {
	r, release := s.Config.Actors.Reader().Pinned()
	defer release()
	l, ok := paymentlinks.LinkByID(r, linkID)
	if !ok {
		return checkoutState{}, false
	}
	return checkoutState{link: l, sessions: paymentlinks.LinkSessions(r, l.OrgID, l.ID), now: r.OrgNow(l.OrgID, s.Config.Actors.Now().UnixMilli())}, true
}
