// Package conversions is the ledger's FX quotes and conversions between an
// organization's balances. It is a feature of the ledger's kernel
// (ledger/feature.go): its commands are applied by ledger.State.Apply in
// log order like every other, and its records are kept in the state store
// under tags ledger.TagQuote and ledger.TagConversion.
//
// A quote locks a rate between two of an organization's balances for
// QuoteLifetimeMillis on the organization's clock. The caller (package
// actors/app) prices it: it asks the rate source, computes the side the
// client did not give, and carries both amounts and the rate string in
// CreateQuote, so the ledger never reads a rate and a replay is exact.
// Executing the quote (ExecuteQuote) books, in one Apply, the debit of
// from.amount and the credit of to.amount, each against the service's FX
// clearing account in its currency (ledger.PurposeFXClearing), so the
// journal sums to zero per currency; or it books nothing. No fee is taken:
// the spread is in the rate.
//
//	quote:  pending ──ExecuteQuote──▶ executed
//	           └──────expiresAt passes (Tick, AdvanceClock)──▶ expired
//
// A quote's times (createdAt, expiresAt, updatedAt) and its conversion's are
// on the organization's clock (OrgNow), so a sandbox clock advance expires
// it; the conversion's journal entries carry the leader's time, like every
// other entry of the journal, which is ordered by sequence.
//
// An execution under an external reference is idempotent, and its
// refusals are final for the reference (ledger.Decided, through
// ledger.RegisterDecided). Cross-currency payouts are the kernel's
// (package fxpayouts), not this package's.
package conversions

import (
	"payments/ledger"
)

// Command kinds of conversions (20–24 are this feature's; 23–24 reserved).
// KindExecuteQuoteRef is KindExecuteQuote with the caller's reference
// appended: an execution without one is still written as
// KindExecuteQuote, so its entry reads the same to every build.
const (
	KindCreateQuote     ledger.Kind = 20
	KindExecuteQuote    ledger.Kind = 21
	KindExecuteQuoteRef ledger.Kind = 22
)

// Subject kinds of conversion events. Frozen. SubjectRef is a conversion
// with its external reference appended; a conversion without one is
// written as Subject.
const (
	Subject    ledger.SubjectKind = 4
	SubjectRef ledger.SubjectKind = 12
)

// QuoteLifetimeMillis is how long a quote holds its rate.
const QuoteLifetimeMillis = 10 * 60 * 1000

// Entry types of conversions. Frozen.
const (
	EntryDebit    ledger.EntryType = 20 // the from balance gives from.amount
	EntryCredit   ledger.EntryType = 21 // the to balance receives to.amount
	EntryClearing ledger.EntryType = 22 // the FX clearing account's side of either leg
)

// Refused is the resource a refusal under a conversion's reference names
// (ledger.Refusal.Resource, ledger.Reader.Refusal). Frozen.
const Refused = "conversion"

// QuoteStatus is where a quote is in its life.
type QuoteStatus uint8

// Quote statuses. Values are frozen.
const (
	QuotePending  QuoteStatus = 1
	QuoteExecuted QuoteStatus = 2
	QuoteExpired  QuoteStatus = 3
)

var quoteStatusNames = ledger.EnumNames[QuoteStatus]{"", "pending", "executed", "expired"}

func (s QuoteStatus) String() string { return quoteStatusNames.String(s) }

// Status is a conversion's state. A conversion exists only once its quote
// executed, so today every conversion is completed; failed is the
// contract's other value, kept for a rail-backed conversion.
type Status uint8

// Conversion statuses. Values are frozen.
const (
	Completed Status = 1
	Failed    Status = 2
)

var statusNames = ledger.EnumNames[Status]{"", "completed", "failed"}

func (s Status) String() string { return statusNames.String(s) }

// Quote is a rate locked between two of an organization's balances.
type Quote struct {
	ID           string
	OrgID        string
	FromCurrency string
	FromAmount   ledger.Minor
	ToCurrency   string
	ToAmount     ledger.Minor
	Side         ledger.Side // which amount the client fixed
	Rate         string      // units of ToCurrency per FromCurrency, spread included
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
	FromAmount    ledger.Minor
	ToAccount     string
	ToCurrency    string
	ToAmount      ledger.Minor
	Rate          string
	Status        Status
	StatusMessage string
	CreatedAt     int64 // on the organization's clock
	CompletedAt   int64
	UpdatedAt     int64
	// ExternalReference is the caller's unique string for the execution,
	// or "": unique per organization, forever (conversionKind's lookup).
	ExternalReference string
	// Attempt is the request attempt that executed it under its
	// reference (ledger/decided.go); never shown to clients.
	Attempt string
}

func (c Conversion) SubjectKind() ledger.SubjectKind {
	if c.ExternalReference != "" {
		return SubjectRef
	}
	return Subject
}

// CreateQuote records a priced quote. ID is "qte_…"; the amounts and the
// rate are the caller's pricing, applied as given.
type CreateQuote struct {
	At           int64
	ID           string
	OrgID        string
	FromCurrency string
	FromAmount   ledger.Minor
	ToCurrency   string
	ToAmount     ledger.Minor
	Side         ledger.Side
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

func (*CreateQuote) Kind() ledger.Kind { return KindCreateQuote }

// Kind is KindExecuteQuoteRef when the command carries a reference: its
// encoding is KindExecuteQuote's with the reference appended.
func (c *ExecuteQuote) Kind() ledger.Kind {
	if c.ExternalReference != "" {
		return KindExecuteQuoteRef
	}
	return KindExecuteQuote
}

func (c *CreateQuote) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.FromCurrency)
	ledger.FieldMinor(f, &c.FromAmount)
	f.Str(&c.ToCurrency)
	ledger.FieldMinor(f, &c.ToAmount)
	ledger.FieldU8(f, &c.Side)
	f.Str(&c.Rate)
}

func (c *CreateQuote) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// fields are ExecuteQuote's without its reference, which KindExecuteQuoteRef
// appends.
func (c *ExecuteQuote) fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.QuoteID, &c.ConversionID)
}

func (c *ExecuteQuote) Encode(e *ledger.Encoder) {
	f := e.Codec()
	c.fields(f)
	f.AppendedRef(&c.ExternalReference)
}

// Decision is what ledger.Decided needs of an execution under a
// reference: the request as a retry is compared with it is the quote it
// executes.
func (c *ExecuteQuote) Decision(e *ledger.Encoder) (org, ref, id string, at int64) {
	q := c.QuoteID
	e.Codec().Str(&q)
	return c.OrgID, c.ExternalReference, c.ConversionID, c.At
}

// Execution is the outcome of ExecuteQuote: the conversion (made, or
// replayed under its reference) and its quote.
type Execution struct {
	Conversion *Conversion
	Quote      *Quote
}

// Of returns the conversion an execution made or replayed, or nil.
func Of(res ledger.Result) *Conversion {
	return ledger.ValueIn(res, func(e *Execution) *Conversion { return e.Conversion })
}

// QuoteOf returns the quote a command made, or the one an execution
// executed, or nil.
func QuoteOf(res ledger.Result) *Quote {
	return ledger.ValueIn(res, func(e *Execution) *Quote { return e.Quote })
}

func init() {
	ledger.RegisterEntryType(EntryDebit, "conversion_debit", "conversion")
	ledger.RegisterEntryType(EntryCredit, "conversion_credit", "conversion")
	ledger.RegisterEntryType(EntryClearing, "conversion_clearing", "conversion")
	ledger.RegisterFieldsCommand[CreateQuote](KindCreateQuote)
	ledger.RegisterRefCommand(KindExecuteQuote, KindExecuteQuoteRef, (*ExecuteQuote).fields,
		func(c *ExecuteQuote) *string { return &c.ExternalReference })
	ledger.RegisterSubject(Subject, (*Conversion).fields)
	ledger.RegisterSubject(SubjectRef, func(c *Conversion, f *ledger.Codec) {
		c.fields(f)
		f.Str(&c.ExternalReference)
	})
	ledger.RegisterDecided(KindExecuteQuoteRef, ledger.DecidedRecords(Refused,
		func(s *ledger.State) ledger.Store[Conversion] { return feature.Of(s).conversions }, Of,
		func(c *Conversion) *string { return &c.Attempt },
		func(res *ledger.Result, c *Conversion) {
			res.Value = &Execution{Conversion: c, Quote: QuoteOf(*res)}
		}))
}

// quoteKind: a quote stays open while pending; conversionKind: a
// conversion never changes, and is found by its reference.
var quoteKind = ledger.NewRecordKind(ledger.RecordSpec[Quote]{
	Tag: ledger.TagQuote, Name: "quote",
	ID:     func(q *Quote) (string, string) { return q.ID, q.OrgID },
	Fields: (*Quote).fields,
	Open:   func(q *Quote) bool { return q.Status == QuotePending },
})

var conversionKind = ledger.NewRecordKind(ledger.ReceiptSpec(ledger.RecordSpec[Conversion]{
	Tag: ledger.TagConversion, Name: "conversion",
	ID:     func(c *Conversion) (string, string) { return c.ID, c.OrgID },
	Fields: (*Conversion).stored,
}, func(c *Conversion) (string, string) { return c.OrgID, c.ExternalReference }))

// book is what the feature keeps in a State: the quotes (the pending ones
// in memory), the conversions (none in memory: they never change) and the
// quotes' expirer.
type book struct {
	quotes      ledger.Store[Quote]
	conversions ledger.Store[Conversion]
	expiry      uint8
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{quotes: ledger.AddStore(s, quoteKind), conversions: ledger.AddStore(s, conversionKind)}
	b.expiry = s.AddExpirer(ledger.Expirer{
		Each: func(s *ledger.State, add func(string, int64, string)) {
			b.quotes.EachInMemory(func(q *Quote) { add(q.OrgID, q.ExpiresAt, q.ID) })
		},
		Deadline: func(s *ledger.State, id string) (string, int64, bool) {
			q, ok := b.quotes.Get(id)
			return q.OrgID, q.ExpiresAt, ok && q.Status == QuotePending
		},
		Expire: b.expireQuote,
	})
	return b
})

// byReference returns the conversion an organization's reference names,
// in memory or in the state store, however old.
func (b *book) byReference(org, ref string) (Conversion, bool) {
	return b.conversions.Find(ledger.IndexReference, ledger.RefKey(org, ref))
}

func (c *CreateQuote) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "qte_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	from, to, err := ledger.LookupCrossPair(c.FromCurrency, c.ToCurrency, c.FromAmount, c.ToAmount,
		ledger.FieldInvalid("to.currency", "must differ from from.currency"))
	if err != nil {
		return ledger.Result{Err: err}
	}
	switch {
	case c.Side != ledger.SideFrom && c.Side != ledger.SideTo:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "quote side %d is unknown", c.Side)}
	case !ledger.ValidRate(c.Rate):
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "rate %q is not a positive decimal", c.Rate)}
	}
	b := feature.Of(s)
	if _, dup := b.quotes.Get(c.ID); dup {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "quote %s already exists", c.ID)}
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
	if a, ok := s.MerchantAccount(c.OrgID, from.Code, c.At, false); ok {
		q.FromAccount = a.Number
	}
	if a, ok := s.MerchantAccount(c.OrgID, to.Code, c.At, false); ok {
		q.ToAccount = a.Number
	}
	b.quotes.Insert(q)
	s.AddDeadline(b.expiry, q.OrgID, q.ExpiresAt, q.ID)
	return ledger.Result{Value: &q}
}

// quoteExecuted and quoteExpired are the bad_request answers to an
// execution of a quote that cannot execute; the first names the conversion
// the quote made in ExistingID.
func quoteExecuted(conversionID string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeBadRequest, Message: "Quote has already been executed; request a new quote", ExistingID: conversionID}
}

func quoteExpired() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeBadRequest, Message: "Quote has expired; request a new quote"}
}

// CheckExecutable is the fast check an executor makes before proposing:
// the answer ExecuteQuote would give for a quote in this state when the
// organization's clock reads now, or nil if it would go ahead (the balance
// is checked at apply time only).
func (q Quote) CheckExecutable(now int64) *ledger.Error {
	switch q.StatusAt(now) {
	case QuoteExecuted:
		return quoteExecuted(q.ConversionID)
	case QuoteExpired:
		return quoteExpired()
	}
	return nil
}

func (c *ExecuteQuote) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	q, err := b.quotes.Found(c.OrgID, c.QuoteID, "Conversion quote")
	if err != nil {
		return ledger.Result{Err: err}
	}
	if prev, ok := b.byReference(c.OrgID, c.ExternalReference); ok {
		conv, e := prev.ReplayOf(c.QuoteID)
		if e != nil {
			return ledger.Result{Err: e}
		}
		return ledger.Result{Replayed: true, Value: &Execution{Conversion: &conv, Quote: &q}}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if err := q.CheckExecutable(now); err != nil {
		return ledger.Result{Err: err}
	}
	if err := ledger.CheckID(c.ConversionID, "conv_"); err != nil {
		return ledger.Result{Err: err}
	}
	if _, dup := b.conversions.Get(c.ConversionID); dup {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "conversion %s already exists", c.ConversionID)}
	}
	from, hasFrom := s.MerchantAccount(c.OrgID, q.FromCurrency, c.At, false)
	var available ledger.Minor
	if hasFrom {
		available = from.Available()
	}
	if available < q.FromAmount {
		e := ledger.InsufficientFunds(available, q.FromAmount, q.FromCurrency)
		e.Message = "Insufficient funds: the available " + q.FromCurrency + " balance does not cover the quote's from.amount"
		return ledger.Result{Err: e}
	}
	// The credited balance opens on first touch. A new account holds
	// nothing, so its credit cannot overflow and Book cannot fail after it.
	to, _ := s.MerchantAccount(c.OrgID, q.ToCurrency, c.At, true)
	postings := []ledger.Posting{
		{Account: from.Number, Type: EntryDebit, Amount: -q.FromAmount},
		{Account: s.SystemAccount(ledger.PurposeFXClearing, q.FromCurrency, c.At), Type: EntryClearing, Amount: q.FromAmount},
		{Account: s.SystemAccount(ledger.PurposeFXClearing, q.ToCurrency, c.At), Type: EntryClearing, Amount: -q.ToAmount},
		{Account: to.Number, Type: EntryCredit, Amount: q.ToAmount},
	}
	if _, err := s.Book(c.At, c.ConversionID, "", postings); err != nil {
		return ledger.Result{Err: err}
	}
	conv := Conversion{
		ID: c.ConversionID, OrgID: c.OrgID, QuoteID: q.ID,
		FromAccount: from.Number, FromCurrency: q.FromCurrency, FromAmount: q.FromAmount,
		ToAccount: to.Number, ToCurrency: q.ToCurrency, ToAmount: q.ToAmount,
		Rate: q.Rate, Status: Completed,
		CreatedAt: now, CompletedAt: now, UpdatedAt: now,
		ExternalReference: c.ExternalReference,
	}
	b.conversions.Insert(conv)
	q.Status = QuoteExecuted
	q.ConversionID = conv.ID
	q.FromAccount, q.ToAccount = from.Number, to.Number
	q.UpdatedAt = now
	b.quotes.Put(q)
	s.Emit(c.At, c.OrgID, ledger.EventConversionCompleted, conv.ID, conv)
	s.EmitCredited(c.At, to.Number)
	return ledger.Result{Value: &Execution{Conversion: &conv, Quote: &q}}
}

// ReplayOf is the answer to an execution of quoteID under this
// conversion's reference: the conversion itself when it is the same
// request (the same quote), else the contract's duplicate naming it.
func (c Conversion) ReplayOf(quoteID string) (Conversion, *ledger.Error) {
	if c.QuoteID == quoteID {
		return c, nil
	}
	return Conversion{}, ledger.Duplicate("Conversion", c.ID)
}

// expireQuote records a lapsed pending quote as expired.
func (b *book) expireQuote(s *ledger.State, id string, at int64) {
	q, _ := b.quotes.Get(id)
	q.Status = QuoteExpired
	q.UpdatedAt = s.OrgNow(q.OrgID, at)
	b.quotes.Put(q)
}

// GetQuote returns an organization's quote with its status as of leader
// time at (see StatusAt).
func GetQuote(r *ledger.Reader, orgID, id string, at int64) (Quote, bool) {
	q, ok := ledger.ReadOwned(r, quoteKind, orgID, id)
	if !ok {
		return Quote{}, false
	}
	if st := q.StatusAt(r.OrgNow(orgID, at)); st != q.Status {
		q.Status = st
		q.UpdatedAt = q.ExpiresAt
	}
	return q, true
}

// Get returns an organization's conversion.
func Get(r *ledger.Reader, orgID, id string) (Conversion, bool) {
	return ledger.ReadOwned(r, conversionKind, orgID, id)
}

// ByReference returns an organization's conversion by its
// externalReference, however long ago it was made.
func ByReference(r *ledger.Reader, orgID, ref string) (Conversion, bool) {
	return ledger.ReadByReference(r, conversionKind, orgID, ref)
}

// List lists an organization's conversions newest first.
func List(r *ledger.Reader, orgID string, before ledger.Cursor, limit int) ledger.Page[Conversion] {
	return ledger.ReadList(r, conversionKind, orgID, before, limit, nil)
}

// PendingQuotes is how many quotes are neither executed nor recorded
// expired, for tests.
func PendingQuotes(s *ledger.State) int { return feature.Of(s).quotes.InMemory() }

func (q *Quote) fields(f *ledger.Codec) {
	f.Str(&q.ID, &q.OrgID, &q.FromCurrency)
	ledger.FieldMinor(f, &q.FromAmount)
	f.Str(&q.ToCurrency)
	ledger.FieldMinor(f, &q.ToAmount)
	ledger.FieldU8(f, &q.Side)
	f.Str(&q.Rate, &q.FromAccount, &q.ToAccount)
	ledger.FieldU8(f, &q.Status)
	f.Str(&q.ConversionID)
	f.Varint(&q.CreatedAt, &q.ExpiresAt, &q.UpdatedAt)
}

// fields are a conversion as an event's subject holds it; the store
// appends its reference and attempt (stored).
func (c *Conversion) fields(f *ledger.Codec) {
	f.Str(&c.ID, &c.OrgID, &c.QuoteID, &c.FromAccount, &c.FromCurrency)
	ledger.FieldMinor(f, &c.FromAmount)
	f.Str(&c.ToAccount, &c.ToCurrency)
	ledger.FieldMinor(f, &c.ToAmount)
	f.Str(&c.Rate)
	ledger.FieldU8(f, &c.Status)
	f.Str(&c.StatusMessage)
	f.Varint(&c.CreatedAt, &c.CompletedAt, &c.UpdatedAt)
}

// stored is a conversion as the state store holds it: the subject's
// layout, then, for a conversion with a reference, the reference (an
// appended field, ledger/doc.go), so that a record without one is as
// format 1 first wrote it, and after it the attempt, when there is one.
// Read, each is there only where bytes remain.
func (c *Conversion) stored(f *ledger.Codec) {
	c.fields(f)
	if f.Decoding() {
		if f.More() {
			f.Str(&c.ExternalReference)
		}
		if f.More() {
			f.Str(&c.Attempt)
		}
		return
	}
	if c.ExternalReference != "" {
		f.Str(&c.ExternalReference)
		if c.Attempt != "" { // appended after the reference (ledger/doc.go)
			f.Str(&c.Attempt)
		}
	}
}
