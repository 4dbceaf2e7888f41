package ledger

// Quotes and conversions.
//
// A quote locks a rate between two of an organization's balances for
// QuoteLifetimeMillis on the organization's clock. The caller (package http)
// prices it: it asks the rate source, computes the side the client did not
// give, and carries both amounts and the rate string in CreateQuote, so the
// ledger never reads a rate and a replay is exact. Executing the quote
// (ExecuteQuote) books, in one Apply, the debit of from.amount and the
// credit of to.amount, each against the service's FX clearing account in
// its currency, so the journal sums to zero per currency; or it books
// nothing. No fee is taken: the spread is in the rate.
//
//	quote:  pending ──ExecuteQuote──▶ executed
//	           └──────expiresAt passes (Tick, AdvanceClock)──▶ expired
//
// A quote's times (createdAt, expiresAt, updatedAt) and its conversion's are
// on the organization's clock (OrgNow), so a sandbox clock advance expires
// it; the conversion's journal entries carry the leader's time, like every
// other entry of the journal, which is ordered by sequence.

// Command kinds of conversions (20–24 are this feature's; 23–24 reserved).
// KindExecuteQuoteRef is KindExecuteQuote with the caller's reference
// appended: an execution without one is still written as
// KindExecuteQuote, so its entry reads the same to every build.
const (
	KindCreateQuote     Kind = 20
	KindExecuteQuote    Kind = 21
	KindExecuteQuoteRef Kind = 22
)

// Subject kinds of conversion events. Frozen. SubjectConversionRef is a
// conversion with its external reference appended; a conversion without
// one is written as SubjectConversion.
const (
	SubjectConversion    SubjectKind = 4
	SubjectConversionRef SubjectKind = 12
)

// QuoteLifetimeMillis is how long a quote holds its rate.
const QuoteLifetimeMillis = 10 * 60 * 1000

// Entry types of conversions. Frozen.
const (
	EntryConversionDebit    EntryType = 20 // the from balance gives from.amount
	EntryConversionCredit   EntryType = 21 // the to balance receives to.amount
	EntryConversionClearing EntryType = 22 // the FX clearing account's side of either leg
)

// PurposeFXClearing is the service's account, one per currency, that takes
// the other side of every conversion leg. Frozen.
const PurposeFXClearing AccountPurpose = 20

// QuoteStatus is where a quote is in its life.
type QuoteStatus uint8

// Quote statuses. Values are frozen.
const (
	QuotePending  QuoteStatus = 1
	QuoteExecuted QuoteStatus = 2
	QuoteExpired  QuoteStatus = 3
)

var quoteStatusNames = [...]string{"", "pending", "executed", "expired"}

func (s QuoteStatus) String() string {
	if int(s) < len(quoteStatusNames) && s != 0 {
		return quoteStatusNames[s]
	}
	return "unknown"
}

// ConversionStatus is a conversion's state. A conversion exists only once
// its quote executed, so today every conversion is completed; failed is the
// contract's other value, kept for a rail-backed conversion.
type ConversionStatus uint8

// Conversion statuses. Values are frozen.
const (
	ConversionCompleted ConversionStatus = 1
	ConversionFailed    ConversionStatus = 2
)

func (s ConversionStatus) String() string {
	switch s {
	case ConversionCompleted:
		return "completed"
	case ConversionFailed:
		return "failed"
	}
	return "unknown"
}

// Quote is a rate locked between two of an organization's balances.
type Quote struct {
	ID           string
	OrgID        string
	FromCurrency string
	FromAmount   Minor
	ToCurrency   string
	ToAmount     Minor
	Side         Side   // which amount the client fixed
	Rate         string // units of ToCurrency per FromCurrency, spread included
	// FromAccount and ToAccount are the balance accounts, when they exist:
	// the to balance is opened by the conversion that first credits it.
	FromAccount string
	ToAccount   string

	Status       QuoteStatus
	ConversionID string // set once executed

	CreatedAt int64 // on the organization's clock
	ExpiresAt int64
	UpdatedAt int64
}

// StatusAt is the quote's status when the organization's clock reads now:
// a pending quote whose deadline has passed is expired, even before the
// Tick that records it.
func (q Quote) StatusAt(now int64) QuoteStatus {
	if q.Status == QuotePending && now >= q.ExpiresAt {
		return QuoteExpired
	}
	return q.Status
}

// Conversion is an executed quote: from.amount left one balance and
// to.amount arrived in another, at the quoted rate.
type Conversion struct {
	ID            string
	OrgID         string
	QuoteID       string
	FromAccount   string
	FromCurrency  string
	FromAmount    Minor
	ToAccount     string
	ToCurrency    string
	ToAmount      Minor
	Rate          string
	Status        ConversionStatus
	StatusMessage string
	CreatedAt     int64 // on the organization's clock
	CompletedAt   int64
	UpdatedAt     int64
	// ExternalReference is the caller's unique string for the execution,
	// or "": unique per organization, forever (conversionKind's lookup).
	ExternalReference string
	// Attempt is the request attempt that executed it under its
	// reference (decided.go); never shown to clients.
	Attempt string
}

func (c Conversion) SubjectKind() SubjectKind {
	if c.ExternalReference != "" {
		return SubjectConversionRef
	}
	return SubjectConversion
}

// CreateQuote records a priced quote. ID is "qte_…"; the amounts and the
// rate are the caller's pricing, applied as given.
type CreateQuote struct {
	At           int64
	ID           string
	OrgID        string
	FromCurrency string
	FromAmount   Minor
	ToCurrency   string
	ToAmount     Minor
	Side         Side
	Rate         string
}

// ExecuteQuote converts at a pending quote, once. ConversionID ("conv_…")
// names the conversion it creates. With an ExternalReference it is
// idempotent like a payout: the reference already names a conversion of
// the same quote → that conversion, Replayed; of another quote →
// duplicate. The reference is checked before the quote's state, so a retry
// finds its conversion after the quote executed, and long after.
type ExecuteQuote struct {
	At                int64
	OrgID             string
	QuoteID           string
	ConversionID      string
	ExternalReference string // "" for none
}

func (*CreateQuote) Kind() Kind { return KindCreateQuote }

// Kind is KindExecuteQuoteRef when the command carries a reference: its
// encoding is KindExecuteQuote's with the reference appended.
func (c *ExecuteQuote) Kind() Kind {
	if c.ExternalReference != "" {
		return KindExecuteQuoteRef
	}
	return KindExecuteQuote
}

func (c *CreateQuote) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.FromCurrency)
	f.Minor(&c.FromAmount)
	f.Str(&c.ToCurrency)
	f.Minor(&c.ToAmount)
	FieldU8(f, &c.Side)
	f.Str(&c.Rate)
}

func (c *CreateQuote) Encode(e *Encoder) { c.fields(e.Codec()) }

// fields are ExecuteQuote's without its reference, which KindExecuteQuoteRef
// appends.
func (c *ExecuteQuote) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.QuoteID)
	f.Str(&c.ConversionID)
}

func (c *ExecuteQuote) Encode(e *Encoder) {
	c.fields(e.Codec())
	if c.ExternalReference != "" {
		e.str(c.ExternalReference)
	}
}

func init() {
	registerEntryType(EntryConversionDebit, "conversion_debit", "conversion")
	registerEntryType(EntryConversionCredit, "conversion_credit", "conversion")
	registerEntryType(EntryConversionClearing, "conversion_clearing", "conversion")
	registerPurpose(PurposeFXClearing, "fx_clearing")
	registerFields[CreateQuote](KindCreateQuote)
	registerFields[ExecuteQuote](KindExecuteQuote)
	RegisterCommand(KindExecuteQuoteRef, func(d *Decoder) Command {
		c := decodeFields[ExecuteQuote](d)
		c.ExternalReference = d.appendedRef()
		return c
	})
	registerFieldsSubject[Conversion](SubjectConversion)
	registerSubject(SubjectConversionRef,
		func(e *Encoder, s Subject) { c := s.(Conversion); c.fields(e.Codec()); e.str(c.ExternalReference) },
		func(d *Decoder) Subject { c := decodeByFields[Conversion](d); c.ExternalReference = d.str(); return c })
}

// quoteKind: a quote stays open while pending; conversionKind: a
// conversion never changes, and is found by its reference.
var quoteKind = &kind[Quote]{
	tag: tagQuote, name: "quote",
	id:  func(q *Quote) (string, string) { return q.ID, q.OrgID },
	enc: encodeByFields[Quote], dec: decodeByFields[Quote],
	open: func(q *Quote) bool { return q.Status == QuotePending },
}

var conversionKind = &kind[Conversion]{
	tag: tagConversion, name: "conversion",
	id:  func(c *Conversion) (string, string) { return c.ID, c.OrgID },
	enc: encodeStoredConversion, dec: decodeStoredConversion,
	open: func(*Conversion) bool { return false },
	lookups: []lookup[Conversion]{
		{name: indexReference, ref: func(c *Conversion) (string, string) { return c.OrgID, c.ExternalReference }},
	},
}

// conversions is the feature's part of State, built by newConversions in
// NewState.
type conversions struct {
	quotes      *store[Quote]
	conversions *store[Conversion]
	expiry      uint8 // the quotes' expirer
}

func newConversions(s *State) conversions {
	c := conversions{quotes: addStore(s, quoteKind), conversions: addStore(s, conversionKind)}
	c.expiry = s.registerExpirer(expirer{
		each: func(s *State, add func(string, int64, string)) {
			for id, r := range s.fx.quotes.rows {
				add(r.v.OrgID, r.v.ExpiresAt, id)
			}
		},
		deadline: func(s *State, id string) (string, int64, bool) {
			q, ok := s.fx.quotes.get(id)
			return q.OrgID, q.ExpiresAt, ok && q.Status == QuotePending
		},
		expire: expireQuote,
	})
	return c
}

func (c *CreateQuote) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "qte_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	from, to, err := lookupCurrencyPair(c.FromCurrency, c.ToCurrency)
	if err != nil {
		return Result{Err: err}
	}
	switch {
	case from.Code == to.Code:
		return Result{Err: FieldInvalid("to.currency", "must differ from from.currency")}
	case c.FromAmount <= 0 || c.FromAmount > AmountMax:
		return Result{Err: FieldInvalid("from.amount", "is out of range")}
	case c.ToAmount <= 0 || c.ToAmount > AmountMax:
		return Result{Err: FieldInvalid("to.amount", "is out of range")}
	case c.Side != SideFrom && c.Side != SideTo:
		return Result{Err: Errorf(CodeValidation, "quote side %d is unknown", c.Side)}
	case !validRate(c.Rate):
		return Result{Err: Errorf(CodeValidation, "rate %q is not a positive decimal", c.Rate)}
	}
	if _, dup := s.fx.quotes.get(c.ID); dup {
		return Result{Err: Errorf(CodeConflict, "quote %s already exists", c.ID)}
	}
	now := s.OrgNow(c.OrgID, c.At)
	q := Quote{
		ID: c.ID, OrgID: c.OrgID,
		FromCurrency: from.Code, FromAmount: c.FromAmount,
		ToCurrency: to.Code, ToAmount: c.ToAmount,
		Side: c.Side, Rate: c.Rate,
		Status:    QuotePending,
		CreatedAt: now, ExpiresAt: now + QuoteLifetimeMillis, UpdatedAt: now,
	}
	if a, ok := s.merchantAccount(c.OrgID, from.Code, c.At, false); ok {
		q.FromAccount = a.Number
	}
	if a, ok := s.merchantAccount(c.OrgID, to.Code, c.At, false); ok {
		q.ToAccount = a.Number
	}
	s.fx.quotes.insert(q)
	s.addDeadline(s.fx.expiry, q.OrgID, q.ExpiresAt, q.ID)
	return Result{Quote: &q}
}

// ErrQuoteExecuted and ErrQuoteExpired are the bad_request answers to an
// execution of a quote that cannot execute; the first names the conversion
// the quote made in ExistingID.
func quoteExecuted(conversionID string) *Error {
	return &Error{Code: CodeBadRequest, Message: "Quote has already been executed; request a new quote", ExistingID: conversionID}
}

func quoteExpired() *Error {
	return &Error{Code: CodeBadRequest, Message: "Quote has expired; request a new quote"}
}

// CheckExecutable is the fast check an executor makes before proposing:
// the answer ExecuteQuote would give for a quote in this state when the
// organization's clock reads now, or nil if it would go ahead (the balance
// is checked at apply time only).
func (q Quote) CheckExecutable(now int64) *Error {
	switch q.StatusAt(now) {
	case QuoteExecuted:
		return quoteExecuted(q.ConversionID)
	case QuoteExpired:
		return quoteExpired()
	}
	return nil
}

func (c *ExecuteQuote) Apply(s *State) Result {
	q, ok := s.fx.quotes.owned(c.OrgID, c.QuoteID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Conversion quote not found")}
	}
	if prev, ok := s.fx.conversions.byReference(c.OrgID, c.ExternalReference); ok {
		conv, e := prev.ReplayOf(c.QuoteID)
		if e != nil {
			return Result{Err: e}
		}
		return Result{Replayed: true, Conversion: &conv, Quote: &q}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if err := q.CheckExecutable(now); err != nil {
		return Result{Err: err}
	}
	if err := CheckID(c.ConversionID, "conv_"); err != nil {
		return Result{Err: err}
	}
	if _, dup := s.fx.conversions.get(c.ConversionID); dup {
		return Result{Err: Errorf(CodeConflict, "conversion %s already exists", c.ConversionID)}
	}
	from, hasFrom := s.merchantAccount(c.OrgID, q.FromCurrency, c.At, false)
	var available Minor
	if hasFrom {
		available = from.Available()
	}
	if available < q.FromAmount {
		e := InsufficientFunds(available, q.FromAmount, q.FromCurrency)
		e.Message = "Insufficient funds: the available " + q.FromCurrency + " balance does not cover the quote's from.amount"
		return Result{Err: e}
	}
	// The credited balance opens on first touch. A new account holds
	// nothing, so its credit cannot overflow and book cannot fail after it.
	to, _ := s.merchantAccount(c.OrgID, q.ToCurrency, c.At, true)
	postings := []posting{
		{from.Number, EntryConversionDebit, -q.FromAmount},
		{s.systemAccount(PurposeFXClearing, q.FromCurrency, c.At), EntryConversionClearing, q.FromAmount},
		{s.systemAccount(PurposeFXClearing, q.ToCurrency, c.At), EntryConversionClearing, -q.ToAmount},
		{to.Number, EntryConversionCredit, q.ToAmount},
	}
	if _, err := s.book(c.At, c.ConversionID, "", postings); err != nil {
		return Result{Err: err}
	}
	conv := Conversion{
		ID: c.ConversionID, OrgID: c.OrgID, QuoteID: q.ID,
		FromAccount: from.Number, FromCurrency: q.FromCurrency, FromAmount: q.FromAmount,
		ToAccount: to.Number, ToCurrency: q.ToCurrency, ToAmount: q.ToAmount,
		Rate: q.Rate, Status: ConversionCompleted,
		CreatedAt: now, CompletedAt: now, UpdatedAt: now,
		ExternalReference: c.ExternalReference,
	}
	s.fx.conversions.insert(conv)
	q.Status = QuoteExecuted
	q.ConversionID = conv.ID
	q.FromAccount, q.ToAccount = from.Number, to.Number
	q.UpdatedAt = now
	s.fx.quotes.put(q)
	s.emit(c.At, c.OrgID, EventConversionCompleted, conv.ID, conv)
	s.emitCredited(c.At, to.Number)
	return Result{Conversion: &conv, Quote: &q}
}

// ReplayOf is the answer to an execution of quoteID under this
// conversion's reference: the conversion itself when it is the same
// request (the same quote), else the contract's duplicate naming it.
func (c Conversion) ReplayOf(quoteID string) (Conversion, *Error) {
	if c.QuoteID == quoteID {
		return c, nil
	}
	return Conversion{}, Duplicate("Conversion", c.ID)
}

// expireQuote records a lapsed pending quote as expired.
func expireQuote(s *State, id string, at int64) {
	q, _ := s.fx.quotes.get(id)
	q.Status = QuoteExpired
	q.UpdatedAt = s.OrgNow(q.OrgID, at)
	s.fx.quotes.put(q)
}

// validRate accepts a positive decimal without sign or exponent: digits,
// at most one point, not all zeros.
func validRate(r string) bool {
	if r == "" || len(r) > 64 || r[0] == '.' || r[len(r)-1] == '.' {
		return false
	}
	point, nonzero := false, false
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == '.' && !point:
			point = true
		case c >= '1' && c <= '9':
			nonzero = true
		case c != '0':
			return false
		}
	}
	return nonzero
}

// Quote returns an organization's quote with its status as of leader time
// at (see StatusAt).
func (r *Reader) Quote(orgID, id string, at int64) (Quote, bool) {
	q, ok := readOwned(r, quoteKind, orgID, id)
	if !ok {
		return Quote{}, false
	}
	if st := q.StatusAt(r.OrgNow(orgID, at)); st != q.Status {
		q.Status = st
		q.UpdatedAt = q.ExpiresAt
	}
	return q, true
}

// Conversion returns an organization's conversion.
func (r *Reader) Conversion(orgID, id string) (Conversion, bool) {
	return readOwned(r, conversionKind, orgID, id)
}

// ConversionByReference returns an organization's conversion by its
// externalReference, however long ago it was made.
func (r *Reader) ConversionByReference(orgID, ref string) (Conversion, bool) {
	return readByReference(r, conversionKind, orgID, ref)
}

// Conversions lists an organization's conversions newest first.
func (r *Reader) Conversions(orgID string, before Cursor, limit int) Page[Conversion] {
	return readPage(r, conversionKind, conversionKind.listPrefix(orgID), before, limit, nil)
}

// PendingQuotes is how many quotes are neither executed nor recorded
// expired, for tests.
func (s *State) PendingQuotes() int { return len(s.fx.quotes.rows) }

func (q *Quote) fields(f *Codec) {
	f.Str(&q.ID)
	f.Str(&q.OrgID)
	f.Str(&q.FromCurrency)
	f.Minor(&q.FromAmount)
	f.Str(&q.ToCurrency)
	f.Minor(&q.ToAmount)
	FieldU8(f, &q.Side)
	f.Str(&q.Rate)
	f.Str(&q.FromAccount)
	f.Str(&q.ToAccount)
	FieldU8(f, &q.Status)
	f.Str(&q.ConversionID)
	f.Varint(&q.CreatedAt)
	f.Varint(&q.ExpiresAt)
	f.Varint(&q.UpdatedAt)
}

// fields are a conversion as an event's subject holds it; the store
// appends its reference and attempt (encodeStoredConversion).
func (c *Conversion) fields(f *Codec) {
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.QuoteID)
	f.Str(&c.FromAccount)
	f.Str(&c.FromCurrency)
	f.Minor(&c.FromAmount)
	f.Str(&c.ToAccount)
	f.Str(&c.ToCurrency)
	f.Minor(&c.ToAmount)
	f.Str(&c.Rate)
	FieldU8(f, &c.Status)
	f.Str(&c.StatusMessage)
	f.Varint(&c.CreatedAt)
	f.Varint(&c.CompletedAt)
	f.Varint(&c.UpdatedAt)
}

// encodeStoredConversion is a conversion as the state store holds it: the
// subject's layout, then, for a conversion with a reference, the reference
// (an appended field, doc.go), so that a record without one is as format 1
// first wrote it.
func encodeStoredConversion(e *Encoder, c *Conversion) {
	c.fields(e.Codec())
	if c.ExternalReference != "" {
		e.str(c.ExternalReference)
		if c.Attempt != "" { // appended after the reference (doc.go)
			e.str(c.Attempt)
		}
	}
}

func decodeStoredConversion(d *Decoder) Conversion {
	c := decodeByFields[Conversion](d)
	if d.more() {
		c.ExternalReference = d.str()
	}
	if d.more() {
		c.Attempt = d.str()
	}
	return c
}
