package ledger

// What package fxpayouts needs of the kernel. A cross-currency payout is
// the kernel's payout, debited from a balance in another currency: its
// create runs the checks and records the payout the kernel's own create
// does (DebitForPayout, InsertNewPayout), and books its legs beside them.
// The FX details and their codec stay here (fxpayout.go).

// DebitForPayout runs the checks of a payout's debit once the create's
// own fields are valid (debitForPayout): the balance's reservation, a
// replay or duplicate by reference, a free id, the recipient and the
// funds.
func (s *State) DebitForPayout(n *NewPayout) (account Account, r Result, done bool) {
	return s.debitForPayout(n)
}

// InsertNewPayout records the pending payout a create has just booked,
// with its FX details, and answers with it.
func (s *State) InsertNewPayout(n *NewPayout, account string, spec PayoutSpec, fx *PayoutFX) Result {
	return s.insertNewPayout(n, account, spec, fx)
}

// AppendFeePostings appends a fee's two legs to a debit's postings, as a
// payout's are booked.
func AppendFeePostings(postings []Posting, debited, revenue string, fee Minor) []Posting {
	return appendFeePostings(postings, debited, revenue, fee)
}

// CheckRoutingNumber refuses a routing number that is too long.
func CheckRoutingNumber(spec *PayoutSpec) *Error { return checkRoutingNumber(spec) }

// ReadRoutingNumber reads the routing number appended to a routed
// payout's create (routing.go).
func ReadRoutingNumber(d *Decoder) string { return readRoutingNumber(d) }

// Fields reads or writes the spec as a payout's create encodes it.
func (s *PayoutSpec) Fields(f *Codec) { s.fields(f) }

// PayoutByReference returns an organization's payout by its external
// reference: a spend charge asks whether the reference is taken.
func (s *State) PayoutByReference(org, ref string) (Payout, bool) {
	return s.payouts.byReference(org, ref)
}
