package ledger

import (
	"strings"
)

// Payment links, payment pages and checkout sessions.
//
// A payment link is a single-use charge of a fixed amount for one customer:
//
//	active ──a payment covers the amount──▶ paid
//	   ├─────expiresAt passes─────────────▶ expired
//	   └─────PATCH status closed──────────▶ closed
//
// A payment page is a reusable checkout: every payer who starts one gets a
// child link under the page (parentType payment_page), so each payment is
// tracked on its own link. A page is active or closed; past its expiresAt it
// stays active but refuses new child links.
//
// A checkout session is one attempt to pay a link with one method (see
// checkout.go). Money reaches the merchant's balance only through a
// collection, so collection.* and account.credited fire as for any other
// inflow.
//
// Times on these records are on the organization's clock (OrgNow), so the
// sandbox clock expires them.

// Command kinds of payment links (40–49 of the money-movement range).
const (
	KindCreatePaymentLink     Kind = 40
	KindUpdatePaymentLink     Kind = 41
	KindCreatePaymentPage     Kind = 42
	KindUpdatePaymentPage     Kind = 43
	KindCreateCheckoutSession Kind = 44
	KindCheckoutDeposit       Kind = 45
)

// Event subject kinds of payment links.
const (
	SubjectPaymentLink     SubjectKind = 8
	SubjectCheckoutSession SubjectKind = 9
	SubjectPaymentPage     SubjectKind = 10
)

// Event types of payment links and checkout sessions. They are ours: the
// contract's list has none for links.
const (
	EventPaymentLinkPaid          = "payment_link.paid"
	EventPaymentLinkExpired       = "payment_link.expired"
	EventCheckoutSessionCompleted = "checkout_session.completed"
	EventCheckoutSessionFailed    = "checkout_session.failed"
	EventCheckoutSessionExpired   = "checkout_session.expired"
)

// CheckoutEventTypes lists the event types of this file. They are ours,
// beyond the contract's list, and subscribable like the contract's (also
// through "*"), so a merchant can follow links without polling.
var CheckoutEventTypes = []string{
	EventPaymentLinkPaid, EventPaymentLinkExpired,
	EventCheckoutSessionCompleted, EventCheckoutSessionFailed, EventCheckoutSessionExpired,
}

func init() { EventTypes = append(EventTypes, CheckoutEventTypes...) }

// CheckoutMethod is a way the payer can pay a link. Values are frozen.
type CheckoutMethod uint8

const (
	CheckoutMobileMoney  CheckoutMethod = 1
	CheckoutBankTransfer CheckoutMethod = 2
	CheckoutCrypto       CheckoutMethod = 3
	checkoutMethodEnd    CheckoutMethod = 4
)

var checkoutMethodNames = [...]string{"", "mobile_money", "bank_transfer", "crypto"}

func (m CheckoutMethod) String() string {
	if m == 0 || m >= checkoutMethodEnd {
		return "unknown"
	}
	return checkoutMethodNames[m]
}

// ParseCheckoutMethod returns the method with the given API name.
func ParseCheckoutMethod(name string) (CheckoutMethod, bool) {
	for m := CheckoutMethod(1); m < checkoutMethodEnd; m++ {
		if checkoutMethodNames[m] == name {
			return m, true
		}
	}
	return 0, false
}

// MethodSet is a set of checkout methods, one bit per method.
type MethodSet uint8

// Has reports whether m is in the set.
func (s MethodSet) Has(m CheckoutMethod) bool { return s&(1<<m) != 0 }

// With returns the set with m added.
func (s MethodSet) With(m CheckoutMethod) MethodSet { return s | 1<<m }

// Methods lists the set's methods in their fixed order.
func (s MethodSet) Methods() []CheckoutMethod {
	var out []CheckoutMethod
	for m := CheckoutMethod(1); m < checkoutMethodEnd; m++ {
		if s.Has(m) {
			out = append(out, m)
		}
	}
	return out
}

// methodSetAll is every checkout method.
const methodSetAll MethodSet = 1<<CheckoutMobileMoney | 1<<CheckoutBankTransfer | 1<<CheckoutCrypto

func (s MethodSet) valid() bool { return s != 0 && s&^methodSetAll == 0 }

// PaymentLinkStatus is where a link is in its life. Values are frozen.
type PaymentLinkStatus uint8

const (
	PaymentLinkActive  PaymentLinkStatus = 1
	PaymentLinkPaid    PaymentLinkStatus = 2
	PaymentLinkExpired PaymentLinkStatus = 3
	PaymentLinkClosed  PaymentLinkStatus = 4
)

var paymentLinkStatusNames = [...]string{"", "active", "paid", "expired", "closed"}

func (s PaymentLinkStatus) String() string {
	if int(s) < len(paymentLinkStatusNames) && s != 0 {
		return paymentLinkStatusNames[s]
	}
	return "unknown"
}

// ParsePaymentLinkStatus returns the status with the given API name.
func ParsePaymentLinkStatus(name string) (PaymentLinkStatus, bool) {
	for i := 1; i < len(paymentLinkStatusNames); i++ {
		if paymentLinkStatusNames[i] == name {
			return PaymentLinkStatus(i), true
		}
	}
	return 0, false
}

// PaymentPageStatus is active or closed. Values are frozen.
type PaymentPageStatus uint8

const (
	PaymentPageActive PaymentPageStatus = 1
	PaymentPageClosed PaymentPageStatus = 2
)

func (s PaymentPageStatus) String() string {
	switch s {
	case PaymentPageActive:
		return "active"
	case PaymentPageClosed:
		return "closed"
	}
	return "unknown"
}

// CheckoutAppearance is what a link or page shows and accepts at checkout;
// JSON values are canonical text ("" when absent). Comparable, so that a
// repeated create can be told from a changed one.
type CheckoutAppearance struct {
	Title           string
	Description     string
	Methods         MethodSet
	CryptoAssets    string // comma-separated tickers, in the caller's order
	CryptoAssetsSet bool   // false: any supported asset
	CustomFields    string // canonical JSON array, or ""
	Branding        string // canonical JSON object, or ""
	RedirectURL     string
	Metadata        string // canonical JSON object, or ""
	ExpiresAt       int64  // org clock, unix ms; 0 never
}

// AllowsAsset reports whether a stablecoin ticker may pay.
func (a CheckoutAppearance) AllowsAsset(ticker string) bool {
	if !a.CryptoAssetsSet {
		return true
	}
	for _, t := range strings.Split(a.CryptoAssets, ",") {
		if t == ticker {
			return true
		}
	}
	return false
}

// PaymentLinkSpec is what the caller asked for when creating a link.
type PaymentLinkSpec struct {
	Email      string
	Currency   string
	Amount     Minor
	Appearance CheckoutAppearance
}

// PaymentLink is a single-use charge for one customer.
type PaymentLink struct {
	ID                string
	OrgID             string
	ParentID          string // the payment page that spawned it, or ""
	CustomerReference string
	// Spec is the link as created, for telling a repeated create from a
	// changed one; Current is what updates have made of its appearance.
	Spec    PaymentLinkSpec
	Current CheckoutAppearance

	Status        PaymentLinkStatus
	StatusMessage string
	TotalReceived Minor // gross, in the link currency
	Sessions      int64 // checkout sessions opened on it

	CreatedAt int64
	UpdatedAt int64
	PaidAt    int64
}

// Remaining is the amount still to pay, floored at zero.
func (l PaymentLink) Remaining() Minor {
	return max(0, l.Spec.Amount-l.TotalReceived)
}

// Overpayment is what was received beyond the amount.
func (l PaymentLink) Overpayment() Minor {
	return max(0, l.TotalReceived-l.Spec.Amount)
}

// PaymentPage is a reusable checkout that spawns one child link per payer.
type PaymentPage struct {
	ID       string
	OrgID    string
	Currency string
	Amount   Minor // 0: the payer chooses
	Current  CheckoutAppearance
	Status   PaymentPageStatus

	PaymentCount   int64 // child links paid
	TotalCollected Minor // gross, across paid child links

	CreatedAt int64
	UpdatedAt int64
}

// Limits of payment links.
const (
	CheckoutSessionsPerLinkMax = 100
)

// CreatePaymentLink creates a link, or a page's child link when ParentID is
// set: then the appearance and currency come from the page, and Amount from
// the page unless the page leaves it to the payer.
type CreatePaymentLink struct {
	At                int64
	ID                string
	OrgID             string
	ParentID          string
	CustomerReference string
	Spec              PaymentLinkSpec
}

// Fields an update sets (UpdatePaymentLink.Set, UpdatePaymentPage.Set).
const (
	AppearanceExpiresAt    uint16 = 1 << 0
	AppearanceRedirectURL  uint16 = 1 << 1
	AppearanceBranding     uint16 = 1 << 2
	AppearanceMethods      uint16 = 1 << 3
	AppearanceCryptoAssets uint16 = 1 << 4
	AppearanceCustomFields uint16 = 1 << 5
)

// UpdatePaymentLink closes a link or changes its expiry, redirect or
// branding. Amount, currency and email never change.
type UpdatePaymentLink struct {
	At         int64
	OrgID      string
	ID         string
	Close      bool
	Set        uint16
	Appearance CheckoutAppearance // the fields Set names
}

// CreatePaymentPage creates a page.
type CreatePaymentPage struct {
	At         int64
	ID         string
	OrgID      string
	Currency   string
	Amount     Minor
	Appearance CheckoutAppearance
}

// UpdatePaymentPage closes a page or changes what its checkout accepts and
// shows. Amount and currency never change.
type UpdatePaymentPage struct {
	At         int64
	OrgID      string
	ID         string
	Close      bool
	Set        uint16
	Appearance CheckoutAppearance
}

func (*CreatePaymentLink) Kind() Kind { return KindCreatePaymentLink }
func (*UpdatePaymentLink) Kind() Kind { return KindUpdatePaymentLink }
func (*CreatePaymentPage) Kind() Kind { return KindCreatePaymentPage }
func (*UpdatePaymentPage) Kind() Kind { return KindUpdatePaymentPage }

// The kinds of payment links. A link stays open while active (money that
// arrives later still changes it, from the state store); a page stays open
// for good; a session while it can be paid; a deposit never changes.
var paymentLinkKind = &kind[PaymentLink]{
	tag: tagPaymentLink, name: "payment link",
	id:  func(l *PaymentLink) (string, string) { return l.ID, l.OrgID },
	enc: encodeByFields[PaymentLink], dec: decodeByFields[PaymentLink],
	open: func(l *PaymentLink) bool { return l.Status == PaymentLinkActive },
	lookups: []lookup[PaymentLink]{
		{name: indexReference, ref: func(l *PaymentLink) (string, string) { return l.OrgID, l.CustomerReference }},
	},
	filters: []filter[PaymentLink]{
		{indexStatus, func(l *PaymentLink) string { return terminalName(l.Status != PaymentLinkActive, l.Status.String()) }},
		{indexParent, func(l *PaymentLink) string { return l.ParentID }},
	},
}

var paymentPageKind = &kind[PaymentPage]{
	tag: tagPaymentPage, name: "payment page",
	id:  func(p *PaymentPage) (string, string) { return p.ID, p.OrgID },
	enc: encodeByFields[PaymentPage], dec: decodeByFields[PaymentPage],
}

var checkoutSessionKind = &kind[CheckoutSession]{
	tag: tagCheckoutSession, name: "checkout session",
	id:  func(c *CheckoutSession) (string, string) { return c.ID, c.OrgID },
	enc: encodeByFields[CheckoutSession], dec: decodeByFields[CheckoutSession],
	open: func(c *CheckoutSession) bool { return !c.Status.Terminal() },
	lookups: []lookup[CheckoutSession]{
		{name: indexLeg, key: func(c *CheckoutSession) string { return c.CollectionID }},
	},
	filters: []filter[CheckoutSession]{
		{indexParent, func(c *CheckoutSession) string { return c.LinkID }},
	},
}

var checkoutDepositKind = &kind[CheckoutDeposit]{
	tag: tagCheckoutDeposit, name: "checkout deposit",
	id:  func(d *CheckoutDeposit) (string, string) { return d.ID, d.OrgID },
	enc: encodeByFields[CheckoutDeposit], dec: decodeByFields[CheckoutDeposit],
	open: func(*CheckoutDeposit) bool { return false },
	lookups: []lookup[CheckoutDeposit]{
		{name: indexReference, ref: func(d *CheckoutDeposit) (string, string) { return d.OrgID, d.ExternalReference }},
	},
}

// linkState is the feature's part of State: its stores, the open sessions
// of each link, and the expirers of links and sessions.
type linkState struct {
	links    *store[PaymentLink]
	pages    *store[PaymentPage]
	sessions *store[CheckoutSession]
	deposits *store[CheckoutDeposit]

	openByLink map[string][]string // a link's open sessions, oldest first (rebuilt by Load)

	linkExpiry, sessionExpiry uint8
}

func (s *State) initPaymentLinks() {
	ls := &linkState{
		pages:      addStore(s, paymentPageKind),
		links:      addStore(s, paymentLinkKind),
		sessions:   addStore(s, checkoutSessionKind),
		deposits:   addStore(s, checkoutDepositKind),
		openByLink: make(map[string][]string),
	}
	ls.sessions.index = func(c *CheckoutSession) { ls.openByLink[c.LinkID] = append(ls.openByLink[c.LinkID], c.ID) }
	ls.linkExpiry = s.registerExpirer(expirer{
		each: func(s *State, add func(string, int64, string)) {
			for id, r := range s.pl.links.rows {
				if r.v.Current.ExpiresAt != 0 {
					add(r.v.OrgID, r.v.Current.ExpiresAt, id)
				}
			}
		},
		deadline: func(s *State, id string) (string, int64, bool) {
			l, ok := s.pl.links.get(id)
			return l.OrgID, l.Current.ExpiresAt, ok && l.Status == PaymentLinkActive && l.Current.ExpiresAt != 0
		},
		expire: expireLink,
	})
	ls.sessionExpiry = s.registerExpirer(expirer{
		each: func(s *State, add func(string, int64, string)) {
			for id, r := range s.pl.sessions.rows {
				add(r.v.OrgID, r.v.ExpiresAt, id)
			}
		},
		deadline: func(s *State, id string) (string, int64, bool) {
			c, ok := s.pl.sessions.get(id)
			return c.OrgID, c.ExpiresAt, ok && !c.Status.Terminal()
		},
		expire: func(s *State, id string, at int64) {
			c, _ := s.pl.sessions.get(id)
			s.endSession(at, c, SessionExpired, "The checkout session expired before it was paid")
		},
	})
	s.pl = ls
	s.eventHooks = append(s.eventHooks, checkoutCollectionSettled)
}

// trackExpiry adds a link's deadline, if it has one.
func (s *State) trackLinkExpiry(l PaymentLink) {
	if l.Status == PaymentLinkActive && l.Current.ExpiresAt != 0 {
		s.addDeadline(s.pl.linkExpiry, l.OrgID, l.Current.ExpiresAt, l.ID)
	}
}

// openSession records a new session as one of its link's open ones.
func (ls *linkState) openSession(c CheckoutSession) {
	ls.sessions.insert(c)
	ls.openByLink[c.LinkID] = append(ls.openByLink[c.LinkID], c.ID)
}

// closeSession drops an ended session from its link's open ones.
func (ls *linkState) closeSession(c CheckoutSession) {
	ids := ls.openByLink[c.LinkID]
	for i, id := range ids {
		if id == c.ID {
			ids = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(ls.openByLink, c.LinkID)
	} else {
		ls.openByLink[c.LinkID] = ids
	}
}

func init() {
	registerFields[CreatePaymentLink](KindCreatePaymentLink)
	registerFields[UpdatePaymentLink](KindUpdatePaymentLink)
	registerFields[CreatePaymentPage](KindCreatePaymentPage)
	registerFields[UpdatePaymentPage](KindUpdatePaymentPage)
	registerFieldsSubject[PaymentLink](SubjectPaymentLink)
	registerFieldsSubject[PaymentPage](SubjectPaymentPage)
}

func (PaymentLink) SubjectKind() SubjectKind { return SubjectPaymentLink }
func (PaymentPage) SubjectKind() SubjectKind { return SubjectPaymentPage }

// Codecs. Field order is frozen.

func (a *CheckoutAppearance) fields(f *Codec) {
	f.Str(&a.Title)
	f.Str(&a.Description)
	FieldU8(f, &a.Methods)
	f.Str(&a.CryptoAssets)
	f.Bool(&a.CryptoAssetsSet)
	f.Str(&a.CustomFields)
	f.Str(&a.Branding)
	f.Str(&a.RedirectURL)
	f.Str(&a.Metadata)
	f.Varint(&a.ExpiresAt)
}

func (s *PaymentLinkSpec) fields(f *Codec) {
	f.Str(&s.Email)
	f.Str(&s.Currency)
	f.Minor(&s.Amount)
	s.Appearance.fields(f)
}

func (c *CreatePaymentLink) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.ParentID)
	f.Str(&c.CustomerReference)
	c.Spec.fields(f)
}

func (c *CreatePaymentLink) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *UpdatePaymentLink) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.ID)
	f.Bool(&c.Close)
	f.U16(&c.Set)
	c.Appearance.fields(f)
}

func (c *UpdatePaymentLink) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *CreatePaymentPage) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Currency)
	f.Minor(&c.Amount)
	c.Appearance.fields(f)
}

func (c *CreatePaymentPage) Encode(e *Encoder) { c.fields(e.Codec()) }

// fields are a link update's: the two commands have one layout.
func (c *UpdatePaymentPage) fields(f *Codec) { (*UpdatePaymentLink)(c).fields(f) }

func (c *UpdatePaymentPage) Encode(e *Encoder) { c.fields(e.Codec()) }

func (l *PaymentLink) fields(f *Codec) {
	f.Str(&l.ID)
	f.Str(&l.OrgID)
	f.Str(&l.ParentID)
	f.Str(&l.CustomerReference)
	l.Spec.fields(f)
	l.Current.fields(f)
	FieldU8(f, &l.Status)
	f.Str(&l.StatusMessage)
	f.Minor(&l.TotalReceived)
	f.Varint(&l.CreatedAt)
	f.Varint(&l.UpdatedAt)
	f.Varint(&l.PaidAt)
	f.Varint(&l.Sessions)
}

func (p *PaymentPage) fields(f *Codec) {
	f.Str(&p.ID)
	f.Str(&p.OrgID)
	f.Str(&p.Currency)
	f.Minor(&p.Amount)
	p.Current.fields(f)
	FieldU8(f, &p.Status)
	f.Varint(&p.PaymentCount)
	f.Minor(&p.TotalCollected)
	f.Varint(&p.CreatedAt)
	f.Varint(&p.UpdatedAt)
}

// Rules.

func checkAppearance(a *CheckoutAppearance) *Error {
	switch {
	case a.Title == "":
		return FieldInvalid("title", "is required")
	case !a.Methods.valid():
		return FieldInvalid("allowedMethods", "must name at least one of mobile_money, bank_transfer, crypto")
	}
	return nil
}

func (c *CreatePaymentLink) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "pl_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	spec := c.Spec
	if c.ParentID != "" {
		page, ok := s.pl.pages.owned(c.OrgID, c.ParentID)
		if !ok {
			return Result{Err: Errorf(CodeNotFound, "Payment page not found")}
		}
		switch {
		case page.Status != PaymentPageActive:
			return Result{Err: Errorf(CodeBadRequest, "Payment page %s is closed: it takes no new payments", page.ID)}
		case page.Current.ExpiresAt != 0 && now >= page.Current.ExpiresAt:
			return Result{Err: Errorf(CodeBadRequest, "Payment page %s has expired: it takes no new payments", page.ID)}
		case page.Amount != 0 && spec.Amount != 0 && spec.Amount != page.Amount:
			return Result{Err: FieldInvalid("amount", "must be absent or equal to the page's fixed amount")}
		}
		if page.Amount != 0 {
			spec.Amount = page.Amount
		}
		meta := spec.Appearance.Metadata
		spec.Currency = page.Currency
		spec.Appearance = page.Current
		spec.Appearance.Metadata = meta
	}
	if _, ok := LookupCurrency(spec.Currency); !ok {
		return Result{Err: FieldInvalid("currency", "is not a supported currency")}
	}
	if spec.Amount <= 0 || spec.Amount > AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if spec.Email == "" {
		return Result{Err: FieldInvalid("email", "is required")}
	}
	if err := checkAppearance(&spec.Appearance); err != nil {
		return Result{Err: err}
	}
	if c.CustomerReference != "" {
		if l, ok := s.pl.links.byReference(c.OrgID, c.CustomerReference); ok {
			if l.Spec == spec && l.ParentID == c.ParentID {
				return Result{Replayed: true, PaymentLink: &l}
			}
			return Result{Err: &Error{Code: CodeDuplicate,
				Message:    "Payment link with this customerReference already exists",
				ExistingID: l.ID}}
		}
	}
	if spec.Appearance.ExpiresAt != 0 && spec.Appearance.ExpiresAt <= now {
		return Result{Err: FieldInvalid("expiresAt", "must be in the future")}
	}
	if _, ok := s.pl.links.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "payment link %s already exists", c.ID)}
	}
	l := PaymentLink{
		ID:                c.ID,
		OrgID:             c.OrgID,
		ParentID:          c.ParentID,
		CustomerReference: c.CustomerReference,
		Spec:              spec,
		Current:           spec.Appearance,
		Status:            PaymentLinkActive,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	s.pl.links.insert(l)
	s.trackLinkExpiry(l)
	return Result{PaymentLink: &l}
}

func (c *UpdatePaymentLink) Apply(s *State) Result {
	l, ok := s.pl.links.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Payment link not found")}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if l.Status != PaymentLinkActive {
		if c.Close && c.Set == 0 && l.Status == PaymentLinkClosed {
			return Result{PaymentLink: &l} // closing a closed link changes nothing
		}
		return Result{Err: Errorf(CodeBadRequest, "Payment link %s is %s: only an active link can be updated", l.ID, l.Status)}
	}
	if c.Set&AppearanceExpiresAt != 0 && c.Appearance.ExpiresAt != 0 && c.Appearance.ExpiresAt <= now {
		return Result{Err: FieldInvalid("expiresAt", "must be in the future")}
	}
	if c.Set&AppearanceExpiresAt != 0 {
		l.Current.ExpiresAt = c.Appearance.ExpiresAt
	}
	if c.Set&AppearanceRedirectURL != 0 {
		l.Current.RedirectURL = c.Appearance.RedirectURL
	}
	if c.Set&AppearanceBranding != 0 {
		l.Current.Branding = c.Appearance.Branding
	}
	l.UpdatedAt = now
	if c.Close {
		l.Status = PaymentLinkClosed
		l.StatusMessage = "Closed by the merchant"
	}
	s.pl.links.put(l)
	if c.Set&AppearanceExpiresAt != 0 {
		s.trackLinkExpiry(l)
	}
	if c.Close {
		s.endOpenSessions(c.At, l.ID, SessionFailed, "The payment link was closed")
	}
	return Result{PaymentLink: &l}
}

func (c *CreatePaymentPage) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "pp_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	if _, ok := LookupCurrency(c.Currency); !ok {
		return Result{Err: FieldInvalid("currency", "is not a supported currency")}
	}
	if c.Amount < 0 || c.Amount > AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if err := checkAppearance(&c.Appearance); err != nil {
		return Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if c.Appearance.ExpiresAt != 0 && c.Appearance.ExpiresAt <= now {
		return Result{Err: FieldInvalid("expiresAt", "must be in the future")}
	}
	if _, ok := s.pl.pages.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "payment page %s already exists", c.ID)}
	}
	p := PaymentPage{
		ID: c.ID, OrgID: c.OrgID, Currency: c.Currency, Amount: c.Amount, Current: c.Appearance,
		Status: PaymentPageActive, CreatedAt: now, UpdatedAt: now,
	}
	s.pl.pages.insert(p)
	return Result{PaymentPage: &p}
}

func (c *UpdatePaymentPage) Apply(s *State) Result {
	p, ok := s.pl.pages.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Payment page not found")}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if p.Status == PaymentPageClosed {
		if c.Close && c.Set == 0 {
			return Result{PaymentPage: &p}
		}
		return Result{Err: Errorf(CodeBadRequest, "Payment page %s is closed: it can no longer be updated", p.ID)}
	}
	a := p.Current
	if c.Set&AppearanceMethods != 0 {
		a.Methods = c.Appearance.Methods
	}
	if c.Set&AppearanceCryptoAssets != 0 {
		a.CryptoAssets, a.CryptoAssetsSet = c.Appearance.CryptoAssets, c.Appearance.CryptoAssetsSet
	}
	if c.Set&AppearanceCustomFields != 0 {
		a.CustomFields = c.Appearance.CustomFields
	}
	if c.Set&AppearanceRedirectURL != 0 {
		a.RedirectURL = c.Appearance.RedirectURL
	}
	if c.Set&AppearanceBranding != 0 {
		a.Branding = c.Appearance.Branding
	}
	if c.Set&AppearanceExpiresAt != 0 {
		if c.Appearance.ExpiresAt != 0 && c.Appearance.ExpiresAt <= now {
			return Result{Err: FieldInvalid("expiresAt", "must be in the future")}
		}
		a.ExpiresAt = c.Appearance.ExpiresAt
	}
	if err := checkAppearance(&a); err != nil {
		return Result{Err: err}
	}
	p.Current = a
	if c.Close {
		p.Status = PaymentPageClosed
	}
	p.UpdatedAt = now
	s.pl.pages.put(p)
	return Result{PaymentPage: &p}
}

// Reads.

// PaymentLink returns an organization's link by id.
func (r *Reader) PaymentLink(orgID, id string) (PaymentLink, bool) {
	return readOwned(r, paymentLinkKind, orgID, id)
}

// PaymentLinkByID returns a link by id, whatever its organization: for the public hosted checkout.
func (r *Reader) PaymentLinkByID(id string) (PaymentLink, bool) {
	return readRecord(r, paymentLinkKind, id)
}

// PaymentLinkSessions returns a link's checkout sessions, newest first.
func (r *Reader) PaymentLinkSessions(orgID, linkID string) []CheckoutSession {
	k := checkoutSessionKind
	return readPage(r, k, k.filterPrefix(indexParent, orgID, linkID), CursorStart, CheckoutSessionsPerLinkMax, nil).Items
}

// PaymentLinkFilter selects links in a list; zero fields match everything.
type PaymentLinkFilter struct {
	Status            PaymentLinkStatus
	ParentID          string
	DirectOnly        bool // links created directly, without a parent
	ChildOnly         bool // links spawned by a payment page
	Email             string
	CustomerReference string
}

// PaymentLinks lists an organization's links, newest first.
func (r *Reader) PaymentLinks(orgID string, f PaymentLinkFilter, before Cursor, limit int) Page[PaymentLink] {
	k := paymentLinkKind
	keep := func(l *PaymentLink) bool {
		return (f.Status == 0 || l.Status == f.Status) &&
			(f.ParentID == "" || l.ParentID == f.ParentID) &&
			(!f.ChildOnly || l.ParentID != "") &&
			(!f.DirectOnly || l.ParentID == "") &&
			(f.Email == "" || l.Spec.Email == f.Email) &&
			(f.CustomerReference == "" || l.CustomerReference == f.CustomerReference)
	}
	if f.CustomerReference != "" {
		var p Page[PaymentLink]
		if l, ok := readByReference(r, k, orgID, f.CustomerReference); ok && keep(&l) && before == CursorStart {
			p.Items = append(p.Items, l)
		}
		return p
	}
	prefix := k.listPrefix(orgID)
	switch {
	case f.ParentID != "":
		prefix = k.filterPrefix(indexParent, orgID, f.ParentID)
	case f.Status == PaymentLinkActive:
		prefix = k.openPrefix(orgID)
	case f.Status != 0:
		prefix = k.filterPrefix(indexStatus, orgID, f.Status.String())
	}
	return readPage(r, k, prefix, before, limit, keep)
}

// PaymentPage returns an organization's page by id.
func (r *Reader) PaymentPage(orgID, id string) (PaymentPage, bool) {
	return readOwned(r, paymentPageKind, orgID, id)
}

// PaymentPages lists an organization's pages, newest first; status 0 lists
// every page.
func (r *Reader) PaymentPages(orgID string, status PaymentPageStatus, before Cursor, limit int) Page[PaymentPage] {
	return readPage(r, paymentPageKind, paymentPageKind.listPrefix(orgID), before, limit, func(p *PaymentPage) bool {
		return status == 0 || p.Status == status
	})
}
