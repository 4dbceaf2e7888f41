package ledger

import (
	"math"
	"math/bits"
	"strings"
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
// collection, and its settlement settles the session (checkoutCollectionSettled,
// an event hook, in the same Apply). Bank-transfer and stablecoin sessions
// are paid by deposits (CheckoutDeposit: on the sandbox, the checkout-deposit
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

// CheckoutSessionStatus is where a session is. Values are frozen.
type CheckoutSessionStatus uint8

const (
	SessionProcessing       CheckoutSessionStatus = 1 // mobile money charge sent
	SessionAwaitingTransfer CheckoutSessionStatus = 2 // bank transfer expected
	SessionAwaitingPayment  CheckoutSessionStatus = 3 // stablecoin deposit expected
	SessionComplete         CheckoutSessionStatus = 4
	SessionFailed           CheckoutSessionStatus = 5
	SessionExpired          CheckoutSessionStatus = 6
)

var sessionStatusNames = [...]string{"", "processing", "awaiting_transfer", "awaiting_payment", "complete", "failed", "expired"}

func (s CheckoutSessionStatus) String() string {
	if s != 0 && int(s) < len(sessionStatusNames) {
		return sessionStatusNames[s]
	}
	return "unknown"
}

// Terminal reports whether the session has ended.
func (s CheckoutSessionStatus) Terminal() bool { return s >= SessionComplete }

// Session lifetimes, by method, in milliseconds.
const (
	CheckoutLifetimeMobileMoney  = 5 * 60 * 1000
	CheckoutLifetimeBankTransfer = 30 * 60 * 1000
	CheckoutLifetimeCrypto       = 90 * 60 * 1000
)

// CheckoutLifetime returns how long a session of method m stays open.
func CheckoutLifetime(m CheckoutMethod) int64 {
	switch m {
	case CheckoutMobileMoney:
		return CheckoutLifetimeMobileMoney
	case CheckoutBankTransfer:
		return CheckoutLifetimeBankTransfer
	default:
		return CheckoutLifetimeCrypto
	}
}

// CheckoutSession is one attempt to pay a link.
type CheckoutSession struct {
	ID     string
	OrgID  string
	LinkID string
	Method CheckoutMethod
	// MethodCode is the payer's wallet (mobile money) or the stablecoin
	// network (crypto); empty for bank transfer.
	MethodCode  string
	Chain       string
	PayerNumber string // mobile money: the payer's phone number

	Status        CheckoutSessionStatus
	StatusMessage string

	OriginCurrency string
	OriginAmount   Minor // what the payer is asked to send
	DestCurrency   string
	DestAmount     Minor  // what the link had left to pay when the session opened
	Rate           string // origin → destination; "1" in one currency

	// Where the payer sends funds: the pooled bank account and its bank,
	// or the stablecoin deposit address.
	DepositAccount string
	DepositBank    string

	CollectionID   string // mobile money: the collection charging the payer
	OriginReceived Minor
	Received       Minor // credited, in the link currency

	ExpiresAt int64
	CreatedAt int64
	UpdatedAt int64
	EndedAt   int64
}

func (CheckoutSession) SubjectKind() SubjectKind { return SubjectCheckoutSession }

// CheckoutDeposit is a payment into a bank-transfer or stablecoin session,
// idempotent by the caller's reference.
type CheckoutDeposit struct {
	ID                string // vad_…
	OrgID             string
	SessionID         string
	LinkID            string
	CollectionID      string
	ExternalReference string
	Requested         Minor // as asked; 0 for "what remains"
	Amount            Minor // in the session's origin currency
	Currency          string
	Credited          Minor // in the link currency
	At                int64
}

// CreateCheckoutSession opens a session on a link. The caller prices it:
// DestAmount must equal what the link has left to pay.
type CreateCheckoutSession struct {
	At             int64
	ID             string
	OrgID          string
	LinkID         string
	Method         CheckoutMethod
	MethodCode     string
	Chain          string
	PayerNumber    string
	OriginCurrency string
	OriginAmount   Minor
	DestAmount     Minor
	Rate           string
	DepositAccount string
	DepositBank    string
	// Mobile money: the collection to create, and its fee.
	CollectionID string
	MethodType   MethodType
	Fee          Minor
}

// CheckoutDeposit pays a bank-transfer or stablecoin session. Amount is in
// the session's origin currency; 0 pays what remains.
type CheckoutDepositCommand struct {
	At                int64
	OrgID             string
	SessionID         string
	Amount            Minor
	ExternalReference string
	DepositID         string
	CollectionID      string
}

func (*CreateCheckoutSession) Kind() Kind  { return KindCreateCheckoutSession }
func (*CheckoutDepositCommand) Kind() Kind { return KindCheckoutDeposit }

func init() {
	registerFields[CreateCheckoutSession](KindCreateCheckoutSession)
	registerFields[CheckoutDepositCommand](KindCheckoutDeposit)
	registerFieldsSubject[CheckoutSession](SubjectCheckoutSession)
}

func (c *CreateCheckoutSession) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.LinkID)
	FieldU8(f, &c.Method)
	f.Str(&c.MethodCode)
	f.Str(&c.Chain)
	f.Str(&c.PayerNumber)
	f.Str(&c.OriginCurrency)
	f.Minor(&c.OriginAmount)
	f.Minor(&c.DestAmount)
	f.Str(&c.Rate)
	f.Str(&c.DepositAccount)
	f.Str(&c.DepositBank)
	f.Str(&c.CollectionID)
	f.MethodType(&c.MethodType)
	f.Minor(&c.Fee)
}

func (c *CreateCheckoutSession) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *CheckoutDepositCommand) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.SessionID)
	f.Minor(&c.Amount)
	f.Str(&c.ExternalReference)
	f.Str(&c.DepositID)
	f.Str(&c.CollectionID)
}

func (c *CheckoutDepositCommand) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *CheckoutSession) fields(f *Codec) {
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.LinkID)
	FieldU8(f, &c.Method)
	f.Str(&c.MethodCode)
	f.Str(&c.Chain)
	f.Str(&c.PayerNumber)
	FieldU8(f, &c.Status)
	f.Str(&c.StatusMessage)
	f.Str(&c.OriginCurrency)
	f.Minor(&c.OriginAmount)
	f.Str(&c.DestCurrency)
	f.Minor(&c.DestAmount)
	f.Str(&c.Rate)
	f.Str(&c.DepositAccount)
	f.Str(&c.DepositBank)
	f.Str(&c.CollectionID)
	f.Minor(&c.OriginReceived)
	f.Minor(&c.Received)
	f.Varint(&c.ExpiresAt)
	f.Varint(&c.CreatedAt)
	f.Varint(&c.UpdatedAt)
	f.Varint(&c.EndedAt)
}

func (c *CheckoutDeposit) fields(f *Codec) {
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.SessionID)
	f.Str(&c.LinkID)
	f.Str(&c.CollectionID)
	f.Str(&c.ExternalReference)
	f.Minor(&c.Requested)
	f.Minor(&c.Amount)
	f.Str(&c.Currency)
	f.Minor(&c.Credited)
	f.Varint(&c.At)
}

func (c *CreateCheckoutSession) Apply(s *State) Result {
	if err := CheckID(c.ID, "cs_"); err != nil {
		return Result{Err: err}
	}
	l, ok := s.pl.links.owned(c.OrgID, c.LinkID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Payment link not found")}
	}
	now := s.OrgNow(c.OrgID, c.At)
	switch {
	case l.Status != PaymentLinkActive:
		return Result{Err: Errorf(CodeBadRequest, "Payment link %s is %s: it takes no new checkout sessions", l.ID, l.Status)}
	case l.Current.ExpiresAt != 0 && now >= l.Current.ExpiresAt:
		return Result{Err: Errorf(CodeBadRequest, "Payment link %s has expired: it takes no new checkout sessions", l.ID)}
	case c.Method == 0 || c.Method >= checkoutMethodEnd:
		return Result{Err: FieldInvalid("method", "must be one of mobile_money, bank_transfer, crypto")}
	case !l.Current.Methods.Has(c.Method):
		return Result{Err: FieldInvalid("method", c.Method.String()+" is not allowed on this payment link")}
	case c.Method == CheckoutCrypto && !l.Current.AllowsAsset(c.OriginCurrency):
		return Result{Err: FieldInvalid("code", c.OriginCurrency+" is not an accepted asset on this payment link")}
	case c.DestAmount != l.Remaining():
		return Result{Err: Errorf(CodeConflict, "Payment link %s changed while the session was priced; retry", l.ID)}
	case c.OriginAmount <= 0 || c.OriginAmount > AmountMax:
		return Result{Err: FieldInvalid("amount", "is out of range")}
	case l.Sessions >= CheckoutSessionsPerLinkMax:
		return Result{Err: Errorf(CodeBadRequest, "Payment link %s has had %d checkout sessions, the most one link may have", l.ID, CheckoutSessionsPerLinkMax)}
	}
	if _, ok := LookupCurrency(c.OriginCurrency); !ok {
		return Result{Err: FieldInvalid("currency", "is not a supported currency")}
	}
	if c.Method != CheckoutCrypto && (c.OriginCurrency != l.Spec.Currency || c.OriginAmount != c.DestAmount) {
		return Result{Err: FieldInvalid("method", "must be paid in the link's currency")}
	}
	if c.Method == CheckoutMobileMoney {
		if err := CheckID(c.CollectionID, "col_"); err != nil {
			return Result{Err: err}
		}
		if _, ok := s.collections.get(c.CollectionID); ok {
			return Result{Err: Errorf(CodeConflict, "collection %s already exists", c.CollectionID)}
		}
		if c.Fee < 0 || c.Fee > c.DestAmount {
			return Result{Err: FieldInvalid("amount", "fee is out of range")}
		}
		if c.PayerNumber == "" || c.MethodCode == "" {
			return Result{Err: FieldInvalid("accountNumber", "is required for mobile money")}
		}
	}
	if _, ok := s.pl.sessions.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "checkout session %s already exists", c.ID)}
	}
	for _, id := range s.pl.openByLink[l.ID] {
		if o, _ := s.pl.sessions.get(id); o.Status == SessionProcessing {
			return Result{Err: Errorf(CodeBadRequest,
				"A mobile money charge is in progress on this payment link (session %s); wait for the payer to approve or decline it", o.ID)}
		}
	}
	s.endOpenSessions(c.At, l.ID, SessionFailed, "Replaced by a new checkout session: the payer switched method")

	sess := CheckoutSession{
		ID: c.ID, OrgID: c.OrgID, LinkID: l.ID, Method: c.Method, MethodCode: c.MethodCode, Chain: c.Chain,
		PayerNumber: c.PayerNumber, OriginCurrency: c.OriginCurrency, OriginAmount: c.OriginAmount,
		DestCurrency: l.Spec.Currency, DestAmount: c.DestAmount, Rate: c.Rate,
		DepositAccount: c.DepositAccount, DepositBank: c.DepositBank,
		ExpiresAt: now + CheckoutLifetime(c.Method), CreatedAt: now, UpdatedAt: now,
	}
	if sess.Rate == "" {
		sess.Rate = "1"
	}
	var res Result
	switch c.Method {
	case CheckoutMobileMoney:
		sess.Status = SessionProcessing
		sess.CollectionID = c.CollectionID
		col := Collection{
			ID: c.CollectionID, OrgID: c.OrgID, Type: "mobile_money",
			Spec: CollectionSpec{Currency: l.Spec.Currency, Amount: c.DestAmount, Method: c.MethodCode,
				PayerNumber: c.PayerNumber, Narration: "Payment link " + l.ID},
			MethodType: c.MethodType, Fee: c.Fee, ExternalReference: sess.ID,
			Status: CollectionPending, CreatedAt: now, UpdatedAt: now,
		}
		if a, ok := s.merchantAccount(c.OrgID, col.Spec.Currency, c.At, false); ok {
			col.AccountNumber = a.Number
		}
		s.insertCollection(col)
		s.emit(c.At, col.OrgID, EventCollectionPending, col.ID, col)
		res.Collection = &col
	case CheckoutBankTransfer:
		sess.Status = SessionAwaitingTransfer
	case CheckoutCrypto:
		sess.Status = SessionAwaitingPayment
	}
	s.pl.openSession(sess)
	s.addDeadline(s.pl.sessionExpiry, sess.OrgID, sess.ExpiresAt, sess.ID)
	l.Sessions++
	s.pl.links.put(l)
	res.CheckoutSession = &sess
	return res
}

func (c *CheckoutDepositCommand) Apply(s *State) Result {
	if c.ExternalReference == "" {
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	if d, ok := s.pl.deposits.byReference(c.OrgID, c.ExternalReference); ok {
		if d.SessionID == c.SessionID && d.Requested == c.Amount {
			return Result{Replayed: true, CheckoutDeposit: &d}
		}
		return Result{Err: &Error{Code: CodeConflict,
			Message: "externalReference was already used for a different checkout deposit", ExistingID: d.ID}}
	}
	sess, ok := s.pl.sessions.owned(c.OrgID, c.SessionID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Checkout session not found")}
	}
	now := s.OrgNow(c.OrgID, c.At)
	switch {
	case sess.Method == CheckoutMobileMoney:
		return Result{Err: Errorf(CodeBadRequest,
			"Only bank-transfer and stablecoin checkout sessions accept simulated deposits; a mobile money session is paid through its collection")}
	case sess.Status.Terminal():
		return Result{Err: Errorf(CodeBadRequest, "Checkout session %s is %s: it accepts no more deposits", sess.ID, sess.Status)}
	case now >= sess.ExpiresAt:
		return Result{Err: Errorf(CodeBadRequest, "Checkout session %s has expired: it accepts no more deposits", sess.ID)}
	case c.Amount < 0 || c.Amount > AmountMax:
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if err := CheckID(c.DepositID, "vad_"); err != nil {
		return Result{Err: err}
	}
	if err := CheckID(c.CollectionID, "col_"); err != nil {
		return Result{Err: err}
	}
	if _, dup := s.collections.get(c.CollectionID); dup {
		return Result{Err: Errorf(CodeConflict, "collection %s already exists", c.CollectionID)}
	}
	if _, dup := s.pl.deposits.get(c.DepositID); dup {
		return Result{Err: Errorf(CodeConflict, "deposit %s already exists", c.DepositID)}
	}
	amount := c.Amount
	if amount == 0 {
		amount = sess.OriginAmount - sess.OriginReceived
		if amount <= 0 {
			return Result{Err: Errorf(CodeBadRequest, "Checkout session %s has no remaining balance; pass an amount to overpay", sess.ID)}
		}
	}
	credit, ok := sess.creditFor(amount)
	if !ok || credit <= 0 {
		return Result{Err: FieldInvalid("amount", "is too small to credit anything in "+sess.DestCurrency)}
	}
	colType, methodType, code := "virtual_account", MethodBankTransfer, "bank_transfer"
	if sess.Method == CheckoutCrypto {
		colType, methodType, code = "crypto", MethodCrypto, sess.MethodCode
	}
	cur := sess.DestCurrency
	account, _ := s.merchantAccount(c.OrgID, cur, c.At, true)
	col := Collection{
		ID: c.CollectionID, OrgID: c.OrgID, Type: colType,
		Spec:       CollectionSpec{Currency: cur, Amount: credit, Method: code, Narration: "Payment link " + sess.LinkID},
		MethodType: methodType, ExternalReference: c.DepositID, AccountNumber: account.Number,
		Status: CollectionCompleted, CreatedAt: now, UpdatedAt: now, CompletedAt: now,
	}
	postings := []posting{
		{s.systemAccount(PurposeCollectionsSource, cur, c.At), EntryCollectionSource, -credit},
		{account.Number, EntryCollectionCredit, credit},
	}
	if _, err := s.book(c.At, col.ID, col.ExternalReference, postings); err != nil {
		return Result{Err: err}
	}
	s.insertCollection(col)
	s.emit(c.At, col.OrgID, EventCollectionCompleted, col.ID, col)
	s.emitCredited(c.At, account.Number)

	d := CheckoutDeposit{
		ID: c.DepositID, OrgID: c.OrgID, SessionID: sess.ID, LinkID: sess.LinkID, CollectionID: col.ID,
		ExternalReference: c.ExternalReference, Requested: c.Amount, Amount: amount,
		Currency: sess.OriginCurrency, Credited: credit, At: now,
	}
	s.pl.deposits.insert(d)
	s.checkoutPaid(c.At, sess, amount, credit)
	return Result{CheckoutDeposit: &d, Collection: &col}
}

// creditFor returns what paying amount more (in the origin currency)
// credits in the link currency: the share of DestAmount that the payments
// so far cover, so that paying OriginAmount in any instalments credits
// exactly DestAmount.
func (c CheckoutSession) creditFor(amount Minor) (Minor, bool) {
	if c.OriginCurrency == c.DestCurrency {
		return amount, true
	}
	before, ok1 := checkoutShare(c.OriginReceived, c.DestAmount, c.OriginAmount)
	after, ok2 := checkoutShare(c.OriginReceived+amount, c.DestAmount, c.OriginAmount)
	if !ok1 || !ok2 || after-before > AmountMax {
		return 0, false
	}
	return after - before, true
}

// checkoutShare returns a×b÷c rounded down, for non-negative a, b and positive c,
// and false if the result does not fit.
func checkoutShare(a, b, c Minor) (Minor, bool) {
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
	return Minor(q), true
}

// checkoutPaid records a payment of origin (in the session's currency),
// credited as credit in the link currency, on the session and its link.
func (s *State) checkoutPaid(at int64, sess CheckoutSession, origin, credit Minor) {
	now := s.OrgNow(sess.OrgID, at)
	l, _ := s.pl.links.get(sess.LinkID)
	cur, _ := LookupCurrency(l.Spec.Currency)
	wasActive := l.Status == PaymentLinkActive
	wasPaid := l.Status == PaymentLinkPaid
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
		l.Status = PaymentLinkPaid
		l.PaidAt = now
		l.StatusMessage = "Paid through checkout session " + sess.ID
		if !sessionWasOpen {
			sess.StatusMessage = "Paid after the session had ended (" + sess.Status.String() + ")"
		} else {
			sess.StatusMessage = ""
		}
		sess.Status, sess.EndedAt = SessionComplete, now
		completeNow = true
	case sessionWasOpen && sess.Method == CheckoutMobileMoney:
		// A charge that completes ends its session, even if something
		// else paid part of the link meanwhile.
		sess.Status, sess.EndedAt = SessionComplete, now
		completeNow = true
	case sessionWasOpen:
		sess.StatusMessage = "Partial payment received; " + FormatMinor(l.Remaining(), cur) + " " + cur.Code + " remaining"
	default:
		sess.StatusMessage = "A payment of " + FormatMinor(credit, cur) + " " + cur.Code +
			" arrived after the session had ended; it is credited and counted on the link"
	}
	if !wasActive && !paidNow {
		l.StatusMessage = "Received " + FormatMinor(credit, cur) + " " + cur.Code + " after the link was " + l.Status.String()
	}
	if over := l.Overpayment(); over > 0 {
		l.StatusMessage = "Overpaid by " + FormatMinor(over, cur) + " " + cur.Code
	}
	if l.ParentID != "" {
		if p, ok := s.pl.pages.get(l.ParentID); ok {
			switch {
			case paidNow:
				p.PaymentCount++
				p.TotalCollected += l.TotalReceived
			case wasPaid:
				p.TotalCollected += credit
			}
			p.UpdatedAt = now
			s.pl.pages.put(p)
		}
	}
	s.pl.links.put(l)
	s.pl.sessions.put(sess)
	if sessionWasOpen && sess.Status.Terminal() {
		s.pl.closeSession(sess)
	}
	if completeNow {
		s.emit(at, sess.OrgID, EventCheckoutSessionCompleted, sess.ID, sess)
	}
	if paidNow {
		s.emit(at, l.OrgID, EventPaymentLinkPaid, l.ID, l)
		s.endOpenSessions(at, l.ID, SessionFailed, "The payment link was paid through another session")
	}
}

// endOpenSessions ends every open session of a link with status (failed or
// expired), emitting their events.
func (s *State) endOpenSessions(at int64, linkID string, status CheckoutSessionStatus, message string) {
	for _, id := range append([]string(nil), s.pl.openByLink[linkID]...) {
		c, _ := s.pl.sessions.get(id)
		s.endSession(at, c, status, message)
	}
}

func (s *State) endSession(at int64, c CheckoutSession, status CheckoutSessionStatus, message string) {
	now := s.OrgNow(c.OrgID, at)
	c.Status, c.StatusMessage, c.EndedAt, c.UpdatedAt = status, message, now, now
	s.pl.sessions.put(c)
	s.pl.closeSession(c)
	typ := EventCheckoutSessionFailed
	if status == SessionExpired {
		typ = EventCheckoutSessionExpired
	}
	s.emit(at, c.OrgID, typ, c.ID, c)
}

// checkoutCollectionSettled settles a mobile money session when its
// collection ends: an event hook, so it happens in the Apply that settles
// the collection.
func checkoutCollectionSettled(s *State, ev Event) {
	if ev.Type != EventCollectionCompleted && ev.Type != EventCollectionFailed {
		return
	}
	col, _ := s.collections.get(ev.ResourceID)
	if !strings.HasPrefix(col.ExternalReference, "cs_") {
		return // a session's collection carries the session's id as its reference
	}
	sess, ok := s.pl.sessions.find(indexLeg, ev.ResourceID)
	if !ok {
		return
	}
	if ev.Type == EventCollectionCompleted {
		s.checkoutPaid(ev.At, sess, col.Spec.Amount, col.Spec.Amount)
		return
	}
	if !sess.Status.Terminal() {
		msg := col.StatusMessage
		if msg == "" {
			msg = "The mobile money charge failed"
		}
		s.endSession(ev.At, sess, SessionFailed, msg)
	}
}

// expireLink expires an active link whose deadline has passed, and its
// open sessions with it.
func expireLink(s *State, id string, at int64) {
	l, _ := s.pl.links.get(id)
	now := s.OrgNow(l.OrgID, at)
	l.Status = PaymentLinkExpired
	l.StatusMessage = "The payment link expired before it was paid"
	l.UpdatedAt = now
	s.pl.links.put(l)
	s.emit(at, l.OrgID, EventPaymentLinkExpired, l.ID, l)
	s.endOpenSessions(at, l.ID, SessionExpired, "The payment link expired")
}

// CheckoutSession returns an organization's session by id.
func (r *Reader) CheckoutSession(orgID, id string) (CheckoutSession, bool) {
	return readOwned(r, checkoutSessionKind, orgID, id)
}

// CheckoutDepositByReference returns an organization's deposit into a
// checkout session by the caller's externalReference.
func (r *Reader) CheckoutDepositByReference(orgID, ref string) (CheckoutDeposit, bool) {
	return readByReference(r, checkoutDepositKind, orgID, ref)
}
