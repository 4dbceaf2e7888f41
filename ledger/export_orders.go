package ledger

// What package orders needs of the kernel. An order's legs are the
// kernel's own collection and payout: the feature follows them through
// hooks the kernel calls where it moves them (AddCollectionSettled,
// AddPayoutMoved), starts its payout leg as a payout the kernel created
// would be (InsertPayout), and a create of an order is a debit spend caps
// charge (KindCreateOrder, ChargedOp).

// KindCreateOrder is package orders' create (orders.KindCreate). It stays
// here because package keycontrols charges it among the kernel's
// payouts (chargeable).
const KindCreateOrder Kind = 32

// IndexLeg2 is the lookup name of an order's second leg, its payout
// (layout.go).
const IndexLeg2 = indexLeg2

// collectionSettledHooks and payoutMovedHooks are the features' hooks on
// the kernel's collections and payouts, in the order they were added.
var (
	collectionSettledHooks []func(*State, Collection, int64)
	payoutMovedHooks       []func(*State, Payout, int64)
)

// AddCollectionSettled adds fn, which the kernel calls with a collection
// that just settled (completed or failed) and the leader's time, in the
// Apply that settles it, after its events: an order's mobile money leg. It
// is called from an init function.
func AddCollectionSettled(fn func(s *State, col Collection, at int64)) {
	collectionSettledHooks = append(collectionSettledHooks, fn)
}

// AddPayoutMoved adds fn, which the kernel calls with a payout that was
// just marked processing or settled and the leader's time, in the Apply
// that moves it, after its events: an order's payout leg. It is called
// from an init function.
func AddPayoutMoved(fn func(s *State, p Payout, at int64)) {
	payoutMovedHooks = append(payoutMovedHooks, fn)
}

// collectionSettled runs the AddCollectionSettled hooks.
func (s *State) collectionSettled(col Collection, at int64) {
	for _, fn := range collectionSettledHooks {
		fn(s, col, at)
	}
}

// payoutMoved runs the AddPayoutMoved hooks.
func (s *State) payoutMoved(p Payout, at int64) {
	for _, fn := range payoutMovedHooks {
		fn(s, p, at)
	}
}

// Payout returns the payout with id, open or closed: an order checks that
// its payout leg's id is free.
func (s *State) Payout(id string) (Payout, bool) { return s.payouts.get(id) }

// InsertPayout adds a new payout, pending, with the kernel's set of open
// payouts (which the rail driver moves): an order's payout leg, whose
// debit the feature booked (EntryPayoutDebit, EntryPayoutCredit).
func (s *State) InsertPayout(p Payout) { s.insertPayout(p) }

// ChargedOp is a debit that a key's spend charge (keycontrols.Charged) may
// wrap (its kind is in keycontrols' chargeable list): Charged names its
// organization and reference and reports whether the reference already
// names a resource (the debit then answers for itself, and nothing is
// counted); ChargedID is the id of the resource its result made, which the
// charge is kept by ("" for none).
type ChargedOp interface {
	Command
	Charged(s *State) (org, ref string, taken bool)
	ChargedID(res *Result) string
}
