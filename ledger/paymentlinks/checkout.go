package paymentlinks

import (
	"math"
	"math/bits"
	"strings"

	"payments/ledger"
)

// Checkout sessions: one attempt to pay a payment link with one method.
//
//	mobile money   processing ──collection completed──▶ complete
//	               (5 min)     ──collection failed─────▶ failed
//	bank transfer  awaiting_transfer ──deposits cover the link──▶ complete
//	               (30 min)
//	stablecoins    awaiting_payment  ──deposits cover the link──▶ complete
//	               (90 min)
//	any open session ──its expiresAt passes──────────────▶ expired
//	                 ──the payer opens another session───▶ failed (switched)
//	                 ──the link is closed or paid────────▶ failed
//	                 ──the link expires──────────────────▶ expired
//
// A mobile money session charges the payer through a collection created in
// the same Apply as the session; the rail driver moves it like any other
// collection, and its settlement settles the session (collectionSettled,
// an event hook, in the same Apply). Bank-transfer and stablecoin sessions
// are paid by deposits (Deposit: on the sandbox, the checkout-deposit
// simulation), each of which creates a completed collection and credits the
// balance in one Apply. A deposit smaller than what remains leaves the
// session open for the rest; a larger one pays the link and records the
// overpayment. Money that arrives for a session that has already ended
// (a mobile money approval after the session expired) is credited all the
// same, since it reached the balance through its collection, and is counted
// on the link.
//
// A stablecoin session may pay a link in another currency: the HTTP layer
// prices it at the all-in rate (OriginAmount of the coin for DestAmount of
// the link currency), and each deposit credits its share of DestAmount in
// the link currency. The coin leg stays outside the ledger, as the payer's
// side of a mobile money collection does.

// SessionStatus is where a session is. Values are frozen.
type SessionStatus uint8

const (
	SessionProcessing       SessionStatus = 1 // mobile money charge sent
	SessionAwaitingTransfer SessionStatus = 2 // bank transfer expected
	SessionAwaitingPayment  SessionStatus = 3 // stablecoin deposit expected
	SessionComplete         SessionStatus = 4
	SessionFailed           SessionStatus = 5
	SessionExpired          SessionStatus = 6
)

var sessionStatusNames = ledger.EnumNames[SessionStatus]{"", "processing", "awaiting_transfer", "awaiting_payment", "complete", "failed", "expired"}

func (s SessionStatus) String() string { return sessionStatusNames.String(s) }

// Terminal reports whether the session has ended.
func (s SessionStatus) Terminal() bool { return s >= SessionComplete }

// Session lifetimes, by method, in milliseconds.
const (
	LifetimeMobileMoney  = 5 * 60 * 1000
	LifetimeBankTransfer = 30 * 60 * 1000
	LifetimeCrypto       = 90 * 60 * 1000
)

// Lifetime returns how long a session of method m stays open.
func Lifetime(m Method) int64 {
	switch m {
	case MobileMoney:
		return LifetimeMobileMoney
	case BankTransfer:
		return LifetimeBankTransfer
	default:
		return LifetimeCrypto
	}
}

// Session is one attempt to pay a link.
type Session struct {
	ID     string
	OrgID  string
	LinkID string
	Method Method
	// MethodCode is the payer's wallet (mobile money) or the stablecoin
	// network (crypto); empty for bank transfer.
	MethodCode  string
	Chain       string
	PayerNumber string // mobile money: the payer's phone number

	Status        SessionStatus
	StatusMessage string

	OriginCurrency string
	OriginAmount   ledger.Minor // what the payer is asked to send
	DestCurrency   string
	DestAmount     ledger.Minor // what the link had left to pay when the session opened
	Rate           string       // origin → destination; "1" in one currency

	// Where the payer sends funds: the pooled bank account and its bank,
	// or the stablecoin deposit address.
	DepositAccount string
	DepositBank    string

	CollectionID   string // mobile money: the collection charging the payer
	OriginReceived ledger.Minor
	Received       ledger.Minor // credited, in the link currency

	ExpiresAt int64
	CreatedAt int64
	UpdatedAt int64
	EndedAt   int64
}

func (Session) SubjectKind() ledger.SubjectKind { return SubjectSession }

// Deposit is a payment into a bank-transfer or stablecoin session,
// idempotent by the caller's reference.
type Deposit struct {
	ID                string // vad_…
	OrgID             string
	SessionID         string
	LinkID            string
	CollectionID      string
	ExternalReference string
	Requested         ledger.Minor // as asked; 0 for "what remains"
	Amount            ledger.Minor // in the session's origin currency
	Currency          string
	Credited          ledger.Minor // in the link currency
	At                int64
}

// CreateSession opens a session on a link. The caller prices it:
// DestAmount must equal what the link has left to pay.
type CreateSession struct {
	At             int64
	ID             string
	OrgID          string
	LinkID         string
	Method         Method
	MethodCode     string
	Chain          string
	PayerNumber    string
	OriginCurrency string
	OriginAmount   ledger.Minor
	DestAmount     ledger.Minor
	Rate           string
	DepositAccount string
	DepositBank    string
	// Mobile money: the collection to create, and its fee.
	CollectionID string
	MethodType   ledger.MethodType
	Fee          ledger.Minor
}

// DepositCommand pays a bank-transfer or stablecoin session. Amount is in
// the session's origin currency; 0 pays what remains.
type DepositCommand struct {
	At                int64
	OrgID             string
	SessionID         string
	Amount            ledger.Minor
	ExternalReference string
	DepositID         string
	CollectionID      string
}

func (*CreateSession) Kind() ledger.Kind  { return KindCreateSession }
func (*DepositCommand) Kind() ledger.Kind { return KindDeposit }

func init() {
	ledger.RegisterFieldsCommand[CreateSession](KindCreateSession)
	ledger.RegisterFieldsCommand[DepositCommand](KindDeposit)
	ledger.RegisterSubject(SubjectSession, (*Session).fields)
}

func (c *CreateSession) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.LinkID)
	ledger.FieldU8(f, &c.Method)
	f.Str(&c.MethodCode, &c.Chain, &c.PayerNumber, &c.OriginCurrency)
	ledger.FieldMinor(f, &c.OriginAmount, &c.DestAmount)
	f.Str(&c.Rate, &c.DepositAccount, &c.DepositBank, &c.CollectionID)
	ledger.FieldMethodType(f, &c.MethodType)
	ledger.FieldMinor(f, &c.Fee)
}

func (c *CreateSession) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *DepositCommand) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.SessionID)
	ledger.FieldMinor(f, &c.Amount)
	f.Str(&c.ExternalReference, &c.DepositID, &c.CollectionID)
}

func (c *DepositCommand) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *Session) fields(f *ledger.Codec) {
	f.Str(&c.ID, &c.OrgID, &c.LinkID)
	ledger.FieldU8(f, &c.Method)
	f.Str(&c.MethodCode, &c.Chain, &c.PayerNumber)
	ledger.FieldU8(f, &c.Status)
	f.Str(&c.StatusMessage, &c.OriginCurrency)
	ledger.FieldMinor(f, &c.OriginAmount)
	f.Str(&c.DestCurrency)
	ledger.FieldMinor(f, &c.DestAmount)
	f.Str(&c.Rate, &c.DepositAccount, &c.DepositBank, &c.CollectionID)
	ledger.FieldMinor(f, &c.OriginReceived, &c.Received)
	f.Varint(&c.ExpiresAt, &c.CreatedAt, &c.UpdatedAt, &c.EndedAt)
}

func (c *Deposit) fields(f *ledger.Codec) {
	f.Str(&c.ID, &c.OrgID, &c.SessionID, &c.LinkID, &c.CollectionID, &c.ExternalReference)
	ledger.FieldMinor(f, &c.Requested, &c.Amount)
	f.Str(&c.Currency)
	ledger.FieldMinor(f, &c.Credited)
	f.Varint(&c.At)
}

func (c *CreateSession) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if err := ledger.CheckID(c.ID, "cs_"); err != nil {
		return ledger.Result{Err: err}
	}
	l, err := b.links.Found(c.OrgID, c.LinkID, "Payment link")
	if err != nil {
		return ledger.Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	switch {
	case l.Status != LinkActive:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Payment link %s is %s: it takes no new checkout sessions", l.ID, l.Status)}
	case l.Current.ExpiresAt != 0 && now >= l.Current.ExpiresAt:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Payment link %s has expired: it takes no new checkout sessions", l.ID)}
	case c.Method == 0 || c.Method >= methodEnd:
		return ledger.Result{Err: ledger.FieldInvalid("method", "must be one of mobile_money, bank_transfer, crypto")}
	case !l.Current.Methods.Has(c.Method):
		return ledger.Result{Err: ledger.FieldInvalid("method", c.Method.String()+" is not allowed on this payment link")}
	case c.Method == Crypto && !l.Current.AllowsAsset(c.OriginCurrency):
		return ledger.Result{Err: ledger.FieldInvalid("code", c.OriginCurrency+" is not an accepted asset on this payment link")}
	case c.DestAmount != l.Remaining():
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "Payment link %s changed while the session was priced; retry", l.ID)}
	case c.OriginAmount <= 0 || c.OriginAmount > ledger.AmountMax:
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	case l.Sessions >= SessionsPerLinkMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Payment link %s has had %d checkout sessions, the most one link may have", l.ID, SessionsPerLinkMax)}
	}
	if _, ok := ledger.LookupCurrency(c.OriginCurrency); !ok {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "is not a supported currency")}
	}
	if c.Method != Crypto && (c.OriginCurrency != l.Spec.Currency || c.OriginAmount != c.DestAmount) {
		return ledger.Result{Err: ledger.FieldInvalid("method", "must be paid in the link's currency")}
	}
	if c.Method == MobileMoney {
		if err := ledger.CheckID(c.CollectionID, "col_"); err != nil {
			return ledger.Result{Err: err}
		}
		if _, ok := s.Collection(c.CollectionID); ok {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "collection %s already exists", c.CollectionID)}
		}
		if c.Fee < 0 || c.Fee > c.DestAmount {
			return ledger.Result{Err: ledger.FieldInvalid("amount", "fee is out of range")}
		}
		if c.PayerNumber == "" || c.MethodCode == "" {
			return ledger.Result{Err: ledger.FieldInvalid("accountNumber", "is required for mobile money")}
		}
	}
	if _, ok := b.sessions.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "checkout session %s already exists", c.ID)}
	}
	for _, id := range b.openByLink[l.ID] {
		if o, _ := b.sessions.Get(id); o.Status == SessionProcessing {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest,
				"A mobile money charge is in progress on this payment link (session %s); wait for the payer to approve or decline it", o.ID)}
		}
	}
	b.endOpenSessions(s, c.At, l.ID, SessionFailed, "Replaced by a new checkout session: the payer switched method")

	sess := Session{
		ID: c.ID, OrgID: c.OrgID, LinkID: l.ID, Method: c.Method, MethodCode: c.MethodCode, Chain: c.Chain,
		PayerNumber: c.PayerNumber, OriginCurrency: c.OriginCurrency, OriginAmount: c.OriginAmount,
		DestCurrency: l.Spec.Currency, DestAmount: c.DestAmount, Rate: c.Rate,
		DepositAccount: c.DepositAccount, DepositBank: c.DepositBank,
		ExpiresAt: now + Lifetime(c.Method), CreatedAt: now, UpdatedAt: now,
	}
	if sess.Rate == "" {
		sess.Rate = "1"
	}
	var res ledger.Result
	switch c.Method {
	case MobileMoney:
		sess.Status = SessionProcessing
		sess.CollectionID = c.CollectionID
		col := ledger.Collection{
			ID: c.CollectionID, OrgID: c.OrgID, Type: "mobile_money",
			Spec: ledger.CollectionSpec{Currency: l.Spec.Currency, Amount: c.DestAmount, Method: c.MethodCode,
				PayerNumber: c.PayerNumber, Narration: "Payment link " + l.ID},
			MethodType: c.MethodType, Fee: c.Fee, ExternalReference: sess.ID,
			Status: ledger.CollectionPending, CreatedAt: now, UpdatedAt: now,
		}
		if a, ok := s.MerchantAccount(c.OrgID, col.Spec.Currency, c.At, false); ok {
			col.AccountNumber = a.Number
		}
		s.InsertCollection(col)
		s.Emit(c.At, col.OrgID, ledger.EventCollectionPending, col.ID, col)
		res.Collection = &col
	case BankTransfer:
		sess.Status = SessionAwaitingTransfer
	case Crypto:
		sess.Status = SessionAwaitingPayment
	}
	b.openSession(sess)
	s.AddDeadline(b.sessionExpiry, sess.OrgID, sess.ExpiresAt, sess.ID)
	l.Sessions++
	b.links.Put(l)
	res.Value = &sess
	return res
}

func (c *DepositCommand) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if c.ExternalReference == "" {
		return ledger.Result{Err: ledger.FieldInvalid("externalReference", "is required")}
	}
	if d, ok := b.deposits.Find(indexReference, ledger.RefKey(c.OrgID, c.ExternalReference)); ok {
		if d.SessionID == c.SessionID && d.Requested == c.Amount {
			return ledger.Result{Replayed: true, Value: &d}
		}
		return ledger.Result{Err: &ledger.Error{Code: ledger.CodeConflict,
			Message: "externalReference was already used for a different checkout deposit", ExistingID: d.ID}}
	}
	sess, err := b.sessions.Found(c.OrgID, c.SessionID, "Checkout session")
	if err != nil {
		return ledger.Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	switch {
	case sess.Method == MobileMoney:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest,
			"Only bank-transfer and stablecoin checkout sessions accept simulated deposits; a mobile money session is paid through its collection")}
	case sess.Status.Terminal():
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Checkout session %s is %s: it accepts no more deposits", sess.ID, sess.Status)}
	case now >= sess.ExpiresAt:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Checkout session %s has expired: it accepts no more deposits", sess.ID)}
	case c.Amount < 0 || c.Amount > ledger.AmountMax:
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	if err := ledger.CheckID(c.DepositID, "vad_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := ledger.CheckID(c.CollectionID, "col_"); err != nil {
		return ledger.Result{Err: err}
	}
	if _, dup := s.Collection(c.CollectionID); dup {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "collection %s already exists", c.CollectionID)}
	}
	if _, dup := b.deposits.Get(c.DepositID); dup {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "deposit %s already exists", c.DepositID)}
	}
	amount := c.Amount
	if amount == 0 {
		amount = sess.OriginAmount - sess.OriginReceived
		if amount <= 0 {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Checkout session %s has no remaining balance; pass an amount to overpay", sess.ID)}
		}
	}
	credit, ok := sess.creditFor(amount)
	if !ok || credit <= 0 {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is too small to credit anything in "+sess.DestCurrency)}
	}
	colType, methodType, code := "virtual_account", ledger.MethodBankTransfer, "bank_transfer"
	if sess.Method == Crypto {
		colType, methodType, code = "crypto", ledger.MethodCrypto, sess.MethodCode
	}
	cur := sess.DestCurrency
	account, _ := s.MerchantAccount(c.OrgID, cur, c.At, true)
	col := ledger.Collection{
		ID: c.CollectionID, OrgID: c.OrgID, Type: colType,
		Spec:       ledger.CollectionSpec{Currency: cur, Amount: credit, Method: code, Narration: "Payment link " + sess.LinkID},
		MethodType: methodType, ExternalReference: c.DepositID, AccountNumber: account.Number,
		Status: ledger.CollectionCompleted, CreatedAt: now, UpdatedAt: now, CompletedAt: now,
	}
	postings := []ledger.Posting{
		{Account: s.SystemAccount(ledger.PurposeCollectionsSource, cur, c.At), Type: ledger.EntryCollectionSource, Amount: -credit},
		{Account: account.Number, Type: ledger.EntryCollectionCredit, Amount: credit},
	}
	if _, err := s.Book(c.At, col.ID, col.ExternalReference, postings); err != nil {
		return ledger.Result{Err: err}
	}
	s.InsertCollection(col)
	s.Emit(c.At, col.OrgID, ledger.EventCollectionCompleted, col.ID, col)
	s.EmitCredited(c.At, account.Number)

	d := Deposit{
		ID: c.DepositID, OrgID: c.OrgID, SessionID: sess.ID, LinkID: sess.LinkID, CollectionID: col.ID,
		ExternalReference: c.ExternalReference, Requested: c.Amount, Amount: amount,
		Currency: sess.OriginCurrency, Credited: credit, At: now,
	}
	b.deposits.Insert(d)
	b.checkoutPaid(s, c.At, sess, amount, credit)
	return ledger.Result{Value: &d, Collection: &col}
}

// creditFor returns what paying amount more (in the origin currency)
// credits in the link currency: the share of DestAmount that the payments
// so far cover, so that paying OriginAmount in any instalments credits
// exactly DestAmount.
func (c Session) creditFor(amount ledger.Minor) (ledger.Minor, bool) {
	if c.OriginCurrency == c.DestCurrency {
		return amount, true
	}
	before, ok1 := checkoutShare(c.OriginReceived, c.DestAmount, c.OriginAmount)
	after, ok2 := checkoutShare(c.OriginReceived+amount, c.DestAmount, c.OriginAmount)
	if !ok1 || !ok2 || after-before > ledger.AmountMax {
		return 0, false
	}
	return after - before, true
}

// checkoutShare returns a×b÷c rounded down, for non-negative a, b and positive c,
// and false if the result does not fit.
func checkoutShare(a, b, c ledger.Minor) (ledger.Minor, bool) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return 0, false
	}
	return ledger.Minor(q), true
}

// checkoutPaid records a payment of origin (in the session's currency),
// credited as credit in the link currency, on the session and its link.
func (b *book) checkoutPaid(s *ledger.State, at int64, sess Session, origin, credit ledger.Minor) {
	now := s.OrgNow(sess.OrgID, at)
	l, _ := b.links.Get(sess.LinkID)
	cur, _ := ledger.LookupCurrency(l.Spec.Currency)
	wasActive := l.Status == LinkActive
	wasPaid := l.Status == LinkPaid
	sessionWasOpen := !sess.Status.Terminal()

	sess.OriginReceived += origin
	sess.Received += credit
	sess.UpdatedAt = now
	l.TotalReceived += credit
	l.UpdatedAt = now

	paidNow := wasActive && l.TotalReceived >= l.Spec.Amount
	completeNow := false
	switch {
	case paidNow:
		l.Status = LinkPaid
		l.PaidAt = now
		l.StatusMessage = "Paid through checkout session " + sess.ID
		if !sessionWasOpen {
			sess.StatusMessage = "Paid after the session had ended (" + sess.Status.String() + ")"
		} else {
			sess.StatusMessage = ""
		}
		sess.Status, sess.EndedAt = SessionComplete, now
		completeNow = true
	case sessionWasOpen && sess.Method == MobileMoney:
		// A charge that completes ends its session, even if something
		// else paid part of the link meanwhile.
		sess.Status, sess.EndedAt = SessionComplete, now
		completeNow = true
	case sessionWasOpen:
		sess.StatusMessage = "Partial payment received; " + ledger.FormatMinor(l.Remaining(), cur) + " " + cur.Code + " remaining"
	default:
		sess.StatusMessage = "A payment of " + ledger.FormatMinor(credit, cur) + " " + cur.Code +
			" arrived after the session had ended; it is credited and counted on the link"
	}
	if !wasActive && !paidNow {
		l.StatusMessage = "Received " + ledger.FormatMinor(credit, cur) + " " + cur.Code + " after the link was " + l.Status.String()
	}
	if over := l.Overpayment(); over > 0 {
		l.StatusMessage = "Overpaid by " + ledger.FormatMinor(over, cur) + " " + cur.Code
	}
	if l.ParentID != "" {
		if p, ok := b.pages.Get(l.ParentID); ok {
			switch {
			case paidNow:
				p.PaymentCount++
				p.TotalCollected += l.TotalReceived
			case wasPaid:
				p.TotalCollected += credit
			}
			p.UpdatedAt = now
			b.pages.Put(p)
		}
	}
	b.links.Put(l)
	b.sessions.Put(sess)
	if sessionWasOpen && sess.Status.Terminal() {
		b.closeSession(sess)
	}
	if completeNow {
		s.Emit(at, sess.OrgID, EventSessionCompleted, sess.ID, sess)
	}
	if paidNow {
		s.Emit(at, l.OrgID, EventLinkPaid, l.ID, l)
		b.endOpenSessions(s, at, l.ID, SessionFailed, "The payment link was paid through another session")
	}
}

// endOpenSessions ends every open session of a link with status (failed or
// expired), emitting their events.
func (b *book) endOpenSessions(s *ledger.State, at int64, linkID string, status SessionStatus, message string) {
	for _, id := range append([]string(nil), b.openByLink[linkID]...) {
		c, _ := b.sessions.Get(id)
		b.endSession(s, at, c, status, message)
	}
}

func (b *book) endSession(s *ledger.State, at int64, c Session, status SessionStatus, message string) {
	now := s.OrgNow(c.OrgID, at)
	c.Status, c.StatusMessage, c.EndedAt, c.UpdatedAt = status, message, now, now
	b.sessions.Put(c)
	b.closeSession(c)
	typ := EventSessionFailed
	if status == SessionExpired {
		typ = EventSessionExpired
	}
	s.Emit(at, c.OrgID, typ, c.ID, c)
}

// collectionSettled settles a mobile money session when its
// collection ends: an event hook, so it happens in the Apply that settles
// the collection.
func (b *book) collectionSettled(s *ledger.State, ev ledger.Event) {
	if ev.Type != ledger.EventCollectionCompleted && ev.Type != ledger.EventCollectionFailed {
		return
	}
	col, _ := s.Collection(ev.ResourceID)
	if !strings.HasPrefix(col.ExternalReference, "cs_") {
		return // a session's collection carries the session's id as its reference
	}
	sess, ok := b.sessions.Find(indexLeg, ev.ResourceID)
	if !ok {
		return
	}
	if ev.Type == ledger.EventCollectionCompleted {
		b.checkoutPaid(s, ev.At, sess, col.Spec.Amount, col.Spec.Amount)
		return
	}
	if !sess.Status.Terminal() {
		msg := col.StatusMessage
		if msg == "" {
			msg = "The mobile money charge failed"
		}
		b.endSession(s, ev.At, sess, SessionFailed, msg)
	}
}

// expireLink expires an active link whose deadline has passed, and its
// open sessions with it.
func (b *book) expireLink(s *ledger.State, id string, at int64) {
	l, _ := b.links.Get(id)
	now := s.OrgNow(l.OrgID, at)
	l.Status = LinkExpired
	l.StatusMessage = "The payment link expired before it was paid"
	l.UpdatedAt = now
	b.links.Put(l)
	s.Emit(at, l.OrgID, EventLinkExpired, l.ID, l)
	b.endOpenSessions(s, at, l.ID, SessionExpired, "The payment link expired")
}

// GetSession returns an organization's session by id.
func GetSession(r *ledger.Reader, orgID, id string) (Session, bool) {
	return ledger.ReadOwned(r, sessionKind, orgID, id)
}

// DepositByReference returns an organization's deposit into a checkout
// session by the caller's externalReference.
func DepositByReference(r *ledger.Reader, orgID, ref string) (Deposit, bool) {
	return ledger.ReadFind(r, depositKind, indexReference, ledger.RefKey(orgID, ref))
}
