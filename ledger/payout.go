package ledger

// PayoutStatus is where a payout is in its life:
//
//	pending ──submitted──▶ processing ──rail confirms──▶ completed
//	   │                       │
//	   └───rail rejects────────┴──────rail rejects─────▶ failed (debit and fee refunded)
type PayoutStatus uint8

// Payout statuses. Values are frozen.
const (
	PayoutPending    PayoutStatus = 1
	PayoutProcessing PayoutStatus = 2
	PayoutCompleted  PayoutStatus = 3
	PayoutFailed     PayoutStatus = 4
)

var payoutStatusNames = EnumNames[PayoutStatus]{"", "pending", "processing", "completed", "failed"}

func (s PayoutStatus) String() string { return payoutStatusNames.String(s) }

// Terminal reports whether the payout can no longer change.
func (s PayoutStatus) Terminal() bool { return s == PayoutCompleted || s == PayoutFailed }

// ParsePayoutStatus returns the status with the given API name.
func ParsePayoutStatus(name string) (PayoutStatus, bool) { return payoutStatusNames.Parse(name) }

// Side says which side of a transfer the caller fixed the amount on.
type Side uint8

// Sides. Values are frozen.
const (
	SideFrom Side = 1 // "debit exactly this much"
	SideTo   Side = 2 // "deliver exactly this much"
)

// PayoutSpec is everything the caller asked for. Two requests with the same
// reference are the same payout exactly when their specs are equal, so every
// field that the caller controls is here, and nothing the service decides.
type PayoutSpec struct {
	Currency      string
	Amount        Minor
	AmountSide    Side
	Method        string // payment method code, e.g. "gh_mtn"
	AccountNumber string // fiat destination
	Address       string // crypto destination
	Tag           string
	RecipientID   string
	Narration     string
	Metadata      string // canonical JSON object, or ""
	FromKYC       string // canonical JSON object, or ""
	ToKYC         string // canonical JSON object, or ""
	// RoutingNumber names the receiving bank of a bank payout (its bank
	// code), or "". Appended after the spec's frozen codec (routing.go).
	RoutingNumber string
}

// Payout sends money from an organization's balance to a destination.
type Payout struct {
	ID                string
	OrgID             string
	AccountNumber     string // the debited balance account
	Spec              PayoutSpec
	MethodType        MethodType
	Fee               Minor
	ExternalReference string

	Status            PayoutStatus
	StatusMessage     string
	ProviderReference string

	CreatedAt    int64
	UpdatedAt    int64
	ProcessingAt int64
	CompletedAt  int64
	FailedAt     int64

	// FX is set for a cross-currency payout (fxpayout.go). Never written
	// through: records are replaced, not changed in place.
	FX *PayoutFX

	// Attempt is the request attempt that created the payout (decided.go):
	// a relay of the same request is answered as its creation, not a
	// replay. Never shown to clients.
	Attempt string
}

// Debit is what the payout takes from the balance, in its currency
// (FromCurrency): principal plus fee.
func (p Payout) Debit() Minor { return p.FromAmount() + p.Fee }

// CreatePayout debits the principal and fee from the organization's balance
// and records a pending payout, or fails as a whole.
type CreatePayout struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              PayoutSpec
	MethodType        MethodType
	Fee               Minor
	// Reservation is the account actor's number for this debit (see
	// Account.Reservation); zero when the command did not come from it.
	Reservation uint64
}

// MarkPayoutProcessing records that the rail accepted (or may have accepted)
// the payout.
type MarkPayoutProcessing struct {
	At                int64
	ID                string
	ProviderReference string
	Message           string
}

// SettlePayout ends a payout: completed, or failed with its debit and fee
// refunded.
type SettlePayout struct {
	At        int64
	ID        string
	Completed bool
	Message   string
}

// payoutKind: a payout stays open until it completes or fails. The stored
// record carries its FX details (fxpayout.go).
var payoutKind = newKind(tagPayout, "payout", func(p *Payout) (string, string) { return p.ID, p.OrgID },
	storedBy(encodeStoredPayout, decodeStoredPayout),
	finalWhileOpen(func(p *Payout) bool { return !p.Status.Terminal() }),
	indexedBy(lookup[Payout]{name: indexReference, ref: func(p *Payout) (string, string) { return p.OrgID, p.ExternalReference }}),
	listedBy(
		filter[Payout]{indexStatus, func(p *Payout) string { return terminalName(p.Status.Terminal(), p.Status.String()) }},
		filter[Payout]{indexRecipient, func(p *Payout) string { return p.Spec.RecipientID }},
	),
)

// terminalName is a status's name for the status index: only statuses that
// no longer change are indexed; open ones are found in the open set.
func terminalName(terminal bool, name string) string {
	if terminal {
		return name
	}
	return ""
}

func encodeStoredPayout(e *Encoder, p *Payout) {
	f := e.Codec()
	p.fields(f)
	fieldOptionalRecord(f, &p.FX)
	if p.Attempt != "" || p.Spec.RoutingNumber != "" { // appended (doc.go)
		e.Str(p.Attempt)
	}
	if p.Spec.RoutingNumber != "" { // appended (routing.go)
		e.Str(p.Spec.RoutingNumber)
	}
}

func decodeStoredPayout(d *Decoder) Payout {
	var p Payout
	f := d.Codec()
	p.fields(f)
	fieldOptionalRecord(f, &p.FX)
	if d.More() {
		p.Attempt = d.Str()
	}
	if d.More() {
		p.Spec.RoutingNumber = readRoutingNumber(d)
	}
	return p
}

func (s *State) createPayout(c *CreatePayout) Result {
	if err := s.checkNew(c.ID, "pay_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	cur, ok := LookupCurrency(c.Spec.Currency)
	if !ok {
		return Result{Err: FieldInvalid("to.currency", "is not a supported currency")}
	}
	if c.Spec.Amount <= 0 || c.Spec.Amount > AmountMax || c.Fee < 0 || c.Fee > AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if err := checkRoutingNumber(&c.Spec); err != nil {
		return Result{Err: err}
	}
	if c.ExternalReference == "" {
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	n := NewPayout{
		At: c.At, ID: c.ID, OrgID: c.OrgID, ExternalReference: c.ExternalReference, Spec: &c.Spec,
		MethodType: c.MethodType, Fee: c.Fee, Reservation: c.Reservation,
		Currency: cur.Code, Principal: c.Spec.Amount,
	}
	account, r, done := s.debitForPayout(&n)
	if done {
		return r
	}
	clearing := s.systemAccount(PurposePayoutsClearing, cur.Code, c.At)
	fees := s.systemAccount(PurposeFeeRevenue, cur.Code, c.At)
	var room [4]Posting
	postings := appendFeePostings(append(room[:0],
		Posting{account.Number, EntryPayoutDebit, -c.Spec.Amount},
		Posting{clearing, EntryPayoutCredit, c.Spec.Amount}), account.Number, fees, c.Fee)
	if _, err := s.book(c.At, c.ID, c.ExternalReference, postings); err != nil {
		return Result{Err: err}
	}
	return s.insertNewPayout(&n, account.Number, c.Spec, nil)
}

// NewPayout is what a plain (CreatePayout) and a cross-currency
// (fxpayouts.Create) payout share once their own fields are checked, for
// debitForPayout and insertNewPayout: Spec is the request's; Currency is the
// debited balance's, Principal what it gives up before the fee. FXFrom is
// the cross-currency payout's from currency, "" for a plain one; it decides
// which earlier payout under the same reference is a replay.
type NewPayout struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              *PayoutSpec
	MethodType        MethodType
	Fee               Minor
	Reservation       uint64
	Currency          string
	FXFrom            string
	Principal         Minor
}

// debitForPayout runs the checks both kinds of payout make once their own
// fields are valid, in the order the API reports them: the account actor's
// reservation is recorded on the debited balance, a reference seen before
// replays the same request or is a duplicate, the id is free, the recipient
// exists, and the balance covers the principal and fee. It returns the debited account,
// or the command's answer with done set.
func (s *State) debitForPayout(d *NewPayout) (account Account, r Result, done bool) {
	account, hasAccount := s.merchantAccount(d.OrgID, d.Currency, d.At, false)
	if hasAccount && d.Reservation > account.Reservation {
		account.Reservation = d.Reservation
		s.accounts.put(account)
	}
	if p, ok := s.payouts.byReference(d.OrgID, d.ExternalReference); ok {
		same := p.FX == nil && p.Spec == *d.Spec
		if d.FXFrom != "" {
			same = p.RequestedSpec() == *d.Spec && p.FromCurrency() == d.FXFrom
		}
		if same {
			replayed := p // a copy, so that p stays on the stack when there is no replay
			return account, Result{Replayed: true, Payout: &replayed}, true
		}
		return account, Result{Err: Duplicate("Payout", p.ID)}, true
	}
	if s.payouts.taken(d.ID) {
		return account, Result{Err: Errorf(CodeConflict, "payout %s already exists", d.ID)}, true
	}
	for _, check := range s.payoutChecks {
		if err := check(d.OrgID, d.Spec); err != nil {
			return account, Result{Err: err}, true
		}
	}
	var available Minor
	if hasAccount {
		available = account.Available()
	}
	if required := d.Principal + d.Fee; available < required {
		return account, Result{Err: InsufficientFunds(available, required, d.Currency)}, true
	}
	return account, Result{}, false
}

// appendFeePostings appends a fee's two legs to a debit's postings: the fee
// leaves the debited account for fee revenue. A zero fee books nothing.
func appendFeePostings(postings []Posting, debited, revenue string, fee Minor) []Posting {
	if fee > 0 {
		postings = append(postings,
			Posting{debited, EntryFeeDebit, -fee},
			Posting{revenue, EntryFeeRevenue, fee})
	}
	return postings
}

// insertNewPayout records the pending payout a CreatePayout or a
// cross-currency payout (with its fx) has just booked, and answers with it.
func (s *State) insertNewPayout(c *NewPayout, account string, spec PayoutSpec, fx *PayoutFX) Result {
	p := Payout{
		ID:                c.ID,
		OrgID:             c.OrgID,
		AccountNumber:     account,
		Spec:              spec,
		MethodType:        c.MethodType,
		Fee:               c.Fee,
		ExternalReference: c.ExternalReference,
		Status:            PayoutPending,
		CreatedAt:         s.OrgNow(c.OrgID, c.At),
		UpdatedAt:         s.OrgNow(c.OrgID, c.At),
		FX:                fx,
	}
	s.insertPayout(p)
	return Result{Payout: &p}
}

// insertPayout records a new payout, open.
func (s *State) insertPayout(p Payout) {
	s.payouts.insert(p)
	s.openPayouts[p.ID] = struct{}{}
}

func (s *State) markPayoutProcessing(c *MarkPayoutProcessing) Result {
	p, ok := s.payouts.get(c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Payout not found")}
	}
	if p.Status != PayoutPending {
		return Result{Err: Errorf(CodeConflict, "payout %s is %s, not pending", p.ID, p.Status)}
	}
	p.Status = PayoutProcessing
	p.StatusMessage = c.Message
	p.ProviderReference = c.ProviderReference
	p.ProcessingAt = s.OrgNow(p.OrgID, c.At)
	p.UpdatedAt = p.ProcessingAt
	s.payouts.put(p)
	s.payoutMoved(p, c.At)
	return Result{Payout: &p}
}

func (s *State) settlePayout(c *SettlePayout) Result {
	p, ok := s.payouts.get(c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Payout not found")}
	}
	if p.Status.Terminal() {
		return Result{Err: Errorf(CodeConflict, "payout %s is already %s", p.ID, p.Status)}
	}
	cur := p.Spec.Currency
	clearing := s.systemAccount(PurposePayoutsClearing, cur, c.At)
	var room [4]Posting
	var postings []Posting
	if c.Completed {
		postings = append(room[:0],
			Posting{clearing, EntryPayoutSettlement, -p.Spec.Amount},
			Posting{s.railAccount(p.ID, cur, c.At), EntryPayoutSettlement, p.Spec.Amount})
	} else if p.FX != nil {
		postings = s.fxRefundPostings(p, *p.FX, c.At)
	} else {
		postings = append(room[:0],
			Posting{clearing, EntryPayoutSettlement, -p.Spec.Amount},
			Posting{p.AccountNumber, EntryPayoutRefund, p.Spec.Amount})
		if p.Fee > 0 {
			fees := s.systemAccount(PurposeFeeRevenue, cur, c.At)
			postings = append(postings,
				Posting{fees, EntryFeeRevenue, -p.Fee},
				Posting{p.AccountNumber, EntryFeeRefund, p.Fee})
		}
	}
	if _, err := s.book(c.At, p.ID, p.ExternalReference, postings); err != nil {
		return Result{Err: err}
	}
	now := s.OrgNow(p.OrgID, c.At)
	if c.Completed {
		p.Status = PayoutCompleted
		p.CompletedAt = now
	} else {
		p.Status = PayoutFailed
		p.FailedAt = now
	}
	p.StatusMessage = c.Message
	p.UpdatedAt = now
	s.payouts.put(p)
	delete(s.openPayouts, p.ID)
	if c.Completed {
		s.emit(c.At, p.OrgID, EventPayoutCompleted, p.ID, p)
	} else {
		s.emit(c.At, p.OrgID, EventPayoutFailed, p.ID, p)
	}
	s.payoutMoved(p, c.At)
	return Result{Payout: &p}
}

// Payout returns the payout with the given id.
func (r *Reader) Payout(id string) (Payout, bool) { return readRecord(r, payoutKind, id) }

// PayoutByReference returns an organization's payout by its externalReference.
func (r *Reader) PayoutByReference(orgID, ref string) (Payout, bool) {
	return readByReference(r, payoutKind, orgID, ref)
}

// PayoutFilter selects payouts in a list; zero fields match everything.
type PayoutFilter struct {
	Status      PayoutStatus
	RecipientID string
}

// Payouts lists an organization's payouts newest first, starting below
// position `before` (a Cursor from an earlier page, or CursorStart).
func (r *Reader) Payouts(orgID string, f PayoutFilter, before Cursor, limit int) Page[Payout] {
	k := payoutKind
	prefix := statusPrefix(k, orgID, f.Status, PayoutStatus.Terminal)
	if f.Status == 0 && f.RecipientID != "" {
		prefix = k.filterPrefix(indexRecipient, orgID, f.RecipientID)
	}
	return readPage(r, k, prefix, before, limit, func(p *Payout) bool {
		return (f.Status == 0 || p.Status == f.Status) &&
			(f.RecipientID == "" || p.Spec.RecipientID == f.RecipientID)
	})
}

// OpenPayouts walks the payouts not yet completed or failed (the rail
// driver's work after a leader change): those among the next limit entries
// of the open set after the position after ("" to start), the position to
// go on from, and whether the walk is done.
func (r *Reader) OpenPayouts(after OpenCursor, limit int) ([]Payout, OpenCursor, bool) {
	return readOpen(r, payoutKind, after, limit)
}
