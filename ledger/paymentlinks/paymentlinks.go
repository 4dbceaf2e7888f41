// Package paymentlinks is the ledger's payment links, payment pages and
// hosted checkout sessions, with the deposits that pay a session. It is a
// feature of the ledger's kernel (ledger/feature.go): its commands are
// applied by ledger.State.Apply in log order like every other, and its
// records are kept in the state store under tags ledger.TagPaymentLink,
// TagPaymentPage, TagCheckoutSession and TagCheckoutDeposit.
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
package paymentlinks

import (
	"strings"

	"payments/ledger"
)

// Command kinds of payment links (40–49 of the money-movement range, see
// ledger/extend.go).
const (
	KindCreateLink    ledger.Kind = 40
	KindUpdateLink    ledger.Kind = 41
	KindCreatePage    ledger.Kind = 42
	KindUpdatePage    ledger.Kind = 43
	KindCreateSession ledger.Kind = 44
	KindDeposit       ledger.Kind = 45
)

// Event subject kinds of payment links.
const (
	SubjectLink    ledger.SubjectKind = 8
	SubjectSession ledger.SubjectKind = 9
	SubjectPage    ledger.SubjectKind = 10
)

// Event types of payment links and checkout sessions. They are ours: the
// contract's list has none for links.
const (
	EventLinkPaid         = "payment_link.paid"
	EventLinkExpired      = "payment_link.expired"
	EventSessionCompleted = "checkout_session.completed"
	EventSessionFailed    = "checkout_session.failed"
	EventSessionExpired   = "checkout_session.expired"
)

// EventTypes lists the event types of this package. They are ours,
// beyond the contract's list, and subscribable like the contract's (also
// through "*"), so a merchant can follow links without polling: init
// appends them to ledger.EventTypes.
var EventTypes = []string{
	EventLinkPaid, EventLinkExpired,
	EventSessionCompleted, EventSessionFailed, EventSessionExpired,
}

func init() { ledger.EventTypes = append(ledger.EventTypes, EventTypes...) }

// Method is a way the payer can pay a link. Values are frozen.
type Method uint8

const (
	MobileMoney  Method = 1
	BankTransfer Method = 2
	Crypto       Method = 3
	methodEnd    Method = 4
)

var methodNames = ledger.EnumNames[Method]{"", "mobile_money", "bank_transfer", "crypto"}

func (m Method) String() string { return methodNames.String(m) }

// ParseMethod returns the method with the given API name.
func ParseMethod(name string) (Method, bool) { return methodNames.Parse(name) }

// MethodSet is a set of checkout methods, one bit per method.
type MethodSet uint8

// Has reports whether m is in the set.
func (s MethodSet) Has(m Method) bool { return s&(1<<m) != 0 }

// With returns the set with m added.
func (s MethodSet) With(m Method) MethodSet { return s | 1<<m }

// Methods lists the set's methods in their fixed order.
func (s MethodSet) Methods() []Method {
	var out []Method
	for m := Method(1); m < methodEnd; m++ {
		if s.Has(m) {
			out = append(out, m)
		}
	}
	return out
}

// methodSetAll is every checkout method.
const methodSetAll MethodSet = 1<<MobileMoney | 1<<BankTransfer | 1<<Crypto

func (s MethodSet) valid() bool { return s != 0 && s&^methodSetAll == 0 }

// LinkStatus is where a link is in its life. Values are frozen.
type LinkStatus uint8

const (
	LinkActive  LinkStatus = 1
	LinkPaid    LinkStatus = 2
	LinkExpired LinkStatus = 3
	LinkClosed  LinkStatus = 4
)

var linkStatusNames = ledger.EnumNames[LinkStatus]{"", "active", "paid", "expired", "closed"}

func (s LinkStatus) String() string { return linkStatusNames.String(s) }

// final: only an active link still changes.
func (s LinkStatus) final() bool { return s != LinkActive }

// ParseLinkStatus returns the status with the given API name.
func ParseLinkStatus(name string) (LinkStatus, bool) { return linkStatusNames.Parse(name) }

// PageStatus is active or closed. Values are frozen.
type PageStatus uint8

const (
	PageActive PageStatus = 1
	PageClosed PageStatus = 2
)

var pageStatusNames = ledger.EnumNames[PageStatus]{"", "active", "closed"}

func (s PageStatus) String() string { return pageStatusNames.String(s) }

// Appearance is what a link or page shows and accepts at checkout;
// JSON values are canonical text ("" when absent). Comparable, so that a
// repeated create can be told from a changed one.
type Appearance struct {
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
func (a Appearance) AllowsAsset(ticker string) bool {
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

// LinkSpec is what the caller asked for when creating a link.
type LinkSpec struct {
	Email      string
	Currency   string
	Amount     ledger.Minor
	Appearance Appearance
}

// Link is a single-use charge for one customer.
type Link struct {
	ID                string
	OrgID             string
	ParentID          string // the payment page that spawned it, or ""
	CustomerReference string
	// Spec is the link as created, for telling a repeated create from a
	// changed one; Current is what updates have made of its appearance.
	Spec    LinkSpec
	Current Appearance

	Status        LinkStatus
	StatusMessage string
	TotalReceived ledger.Minor // gross, in the link currency
	Sessions      int64        // checkout sessions opened on it

	CreatedAt int64
	UpdatedAt int64
	PaidAt    int64
}

// Remaining is the amount still to pay, floored at zero.
func (l Link) Remaining() ledger.Minor {
	return max(0, l.Spec.Amount-l.TotalReceived)
}

// Overpayment is what was received beyond the amount.
func (l Link) Overpayment() ledger.Minor {
	return max(0, l.TotalReceived-l.Spec.Amount)
}

// Page is a reusable checkout that spawns one child link per payer.
type Page struct {
	ID       string
	OrgID    string
	Currency string
	Amount   ledger.Minor // 0: the payer chooses
	Current  Appearance
	Status   PageStatus

	PaymentCount   int64        // child links paid
	TotalCollected ledger.Minor // gross, across paid child links

	CreatedAt int64
	UpdatedAt int64
}

// Limits of payment links.
const (
	SessionsPerLinkMax = 100
)

// CreateLink creates a link, or a page's child link when ParentID is
// set: then the appearance and currency come from the page, and Amount from
// the page unless the page leaves it to the payer.
type CreateLink struct {
	At                int64
	ID                string
	OrgID             string
	ParentID          string
	CustomerReference string
	Spec              LinkSpec
}

// Fields an update sets (UpdateLink.Set, UpdatePage.Set).
const (
	AppearanceExpiresAt    uint16 = 1 << 0
	AppearanceRedirectURL  uint16 = 1 << 1
	AppearanceBranding     uint16 = 1 << 2
	AppearanceMethods      uint16 = 1 << 3
	AppearanceCryptoAssets uint16 = 1 << 4
	AppearanceCustomFields uint16 = 1 << 5
)

// UpdateLink closes a link or changes its expiry, redirect or
// branding. Amount, currency and email never change.
type UpdateLink struct {
	At         int64
	OrgID      string
	ID         string
	Close      bool
	Set        uint16
	Appearance Appearance // the fields Set names
}

// CreatePage creates a page.
type CreatePage struct {
	At         int64
	ID         string
	OrgID      string
	Currency   string
	Amount     ledger.Minor
	Appearance Appearance
}

// UpdatePage closes a page or changes what its checkout accepts and
// shows. Amount and currency never change.
type UpdatePage struct {
	At         int64
	OrgID      string
	ID         string
	Close      bool
	Set        uint16
	Appearance Appearance
}

func (*CreateLink) Kind() ledger.Kind { return KindCreateLink }
func (*UpdateLink) Kind() ledger.Kind { return KindUpdateLink }
func (*CreatePage) Kind() ledger.Kind { return KindCreatePage }
func (*UpdatePage) Kind() ledger.Kind { return KindUpdatePage }

// LinkOf returns the link a command made or changed (a repeated create's
// link), or nil.
func LinkOf(res ledger.Result) *Link { return ledger.ValueOf[Link](res) }

// PageOf returns the page a command made or changed, or nil.
func PageOf(res ledger.Result) *Page { return ledger.ValueOf[Page](res) }

// SessionOf returns the session CreateSession opened, or nil; its
// collection, for mobile money, is in res.Collection.
func SessionOf(res ledger.Result) *Session { return ledger.ValueOf[Session](res) }

// DepositOf returns the deposit a DepositCommand made (or replayed), or
// nil; the collection it made is in res.Collection.
func DepositOf(res ledger.Result) *Deposit { return ledger.ValueOf[Deposit](res) }

// Lookup and filter names of the feature's kinds (layout.go's index names).
const (
	indexReference = ledger.IndexReference // a link's customerReference, a deposit's externalReference
	indexLeg       = ledger.IndexLeg       // a mobile money session's collection
)

// The kinds of payment links. A link stays open while active (money that
// arrives later still changes it, from the state store); a page stays open
// for good; a session while it can be paid; a deposit never changes.
var (
	linkKind = ledger.NewRecordKind(ledger.RecordSpec[Link]{
		Tag: ledger.TagPaymentLink, Name: "payment link",
		ID:     func(l *Link) (string, string) { return l.ID, l.OrgID },
		Fields: (*Link).fields,
		Open:   func(l *Link) bool { return l.Status == LinkActive },
		Lookups: []ledger.Lookup[Link]{
			{Name: indexReference, Key: func(l *Link) string { return ledger.RefKey(l.OrgID, l.CustomerReference) }},
		},
		Filters: []ledger.Filter[Link]{
			ledger.StatusFilter(func(l *Link) (bool, string) { return l.Status.final(), l.Status.String() }),
			{Name: ledger.IndexParent, Value: func(l *Link) string { return l.ParentID }},
		},
	})
	pageKind = ledger.NewRecordKind(ledger.RecordSpec[Page]{
		Tag: ledger.TagPaymentPage, Name: "payment page",
		ID:     func(p *Page) (string, string) { return p.ID, p.OrgID },
		Fields: (*Page).fields,
	})
	sessionKind = ledger.NewRecordKind(ledger.RecordSpec[Session]{
		Tag: ledger.TagCheckoutSession, Name: "checkout session",
		ID:     func(c *Session) (string, string) { return c.ID, c.OrgID },
		Fields: (*Session).fields,
		Open:   func(c *Session) bool { return !c.Status.Terminal() },
		Lookups: []ledger.Lookup[Session]{
			{Name: indexLeg, Key: func(c *Session) string { return c.CollectionID }},
		},
		Filters: []ledger.Filter[Session]{
			{Name: ledger.IndexParent, Value: func(c *Session) string { return c.LinkID }},
		},
	})
	depositKind = ledger.NewRecordKind(ledger.ReceiptSpec(ledger.RecordSpec[Deposit]{
		Tag: ledger.TagCheckoutDeposit, Name: "checkout deposit",
		ID:     func(d *Deposit) (string, string) { return d.ID, d.OrgID },
		Fields: (*Deposit).fields,
	}, func(d *Deposit) (string, string) { return d.OrgID, d.ExternalReference }))
)

// book is the feature's part of every State: its stores, the open
// sessions of each link, and the expirers of links and sessions.
type book struct {
	links    ledger.Store[Link]
	pages    ledger.Store[Page]
	sessions ledger.Store[Session]
	deposits ledger.Store[Deposit]

	openByLink map[string][]string // a link's open sessions, oldest first (rebuilt by Load)

	linkExpiry, sessionExpiry uint8
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{
		pages:      ledger.AddStore(s, pageKind),
		links:      ledger.AddStore(s, linkKind),
		sessions:   ledger.AddStore(s, sessionKind),
		deposits:   ledger.AddStore(s, depositKind),
		openByLink: make(map[string][]string),
	}
	b.sessions.OnLoad(func(c *Session) { b.openByLink[c.LinkID] = append(b.openByLink[c.LinkID], c.ID) })
	b.linkExpiry, b.sessionExpiry = s.SetLinkExpirers(ledger.Expirer{
		Each: func(s *ledger.State, add func(string, int64, string)) {
			b.links.EachInMemory(func(l *Link) {
				if l.Current.ExpiresAt != 0 {
					add(l.OrgID, l.Current.ExpiresAt, l.ID)
				}
			})
		},
		Deadline: func(s *ledger.State, id string) (string, int64, bool) {
			l, ok := b.links.Get(id)
			return l.OrgID, l.Current.ExpiresAt, ok && l.Status == LinkActive && l.Current.ExpiresAt != 0
		},
		Expire: b.expireLink,
	}, ledger.Expirer{
		Each: func(s *ledger.State, add func(string, int64, string)) {
			b.sessions.EachInMemory(func(c *Session) { add(c.OrgID, c.ExpiresAt, c.ID) })
		},
		Deadline: func(s *ledger.State, id string) (string, int64, bool) {
			c, ok := b.sessions.Get(id)
			return c.OrgID, c.ExpiresAt, ok && !c.Status.Terminal()
		},
		Expire: func(s *ledger.State, id string, at int64) {
			c, _ := b.sessions.Get(id)
			b.endSession(s, at, c, SessionExpired, "The checkout session expired before it was paid")
		},
	})
	s.SetCollectionHook(b.collectionSettled)
	return b
})

// trackLinkExpiry adds a link's deadline, if it has one.
func (b *book) trackLinkExpiry(s *ledger.State, l Link) {
	if l.Status == LinkActive && l.Current.ExpiresAt != 0 {
		s.AddDeadline(b.linkExpiry, l.OrgID, l.Current.ExpiresAt, l.ID)
	}
}

// openSession records a new session as one of its link's open ones.
func (b *book) openSession(c Session) {
	b.sessions.Insert(c)
	b.openByLink[c.LinkID] = append(b.openByLink[c.LinkID], c.ID)
}

// closeSession drops an ended session from its link's open ones.
func (b *book) closeSession(c Session) {
	ids := b.openByLink[c.LinkID]
	for i, id := range ids {
		if id == c.ID {
			ids = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(b.openByLink, c.LinkID)
	} else {
		b.openByLink[c.LinkID] = ids
	}
}

func init() {
	ledger.RegisterFieldsCommands(
		ledger.Fresh[CreateLink], ledger.Fresh[UpdateLink], ledger.Fresh[CreatePage],
		ledger.Fresh[UpdatePage])
	ledger.RegisterSubject(SubjectLink, (*Link).fields)
	ledger.RegisterSubject(SubjectPage, (*Page).fields)
}

func (Link) SubjectKind() ledger.SubjectKind { return SubjectLink }
func (Page) SubjectKind() ledger.SubjectKind { return SubjectPage }

// Codecs. Field order is frozen.

func (a *Appearance) fields(f *ledger.Codec) {
	f.Str(&a.Title, &a.Description)
	ledger.FieldU8(f, &a.Methods)
	f.Str(&a.CryptoAssets)
	f.Bool(&a.CryptoAssetsSet)
	f.Str(&a.CustomFields, &a.Branding, &a.RedirectURL, &a.Metadata)
	f.Varint(&a.ExpiresAt)
}

func (s *LinkSpec) fields(f *ledger.Codec) {
	f.Str(&s.Email, &s.Currency)
	ledger.FieldMinor(f, &s.Amount)
	s.Appearance.fields(f)
}

func (c *CreateLink) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.ParentID, &c.CustomerReference)
	c.Spec.fields(f)
}

func (c *CreateLink) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *UpdateLink) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.ID)
	f.Bool(&c.Close)
	f.U16(&c.Set)
	c.Appearance.fields(f)
}

func (c *UpdateLink) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *CreatePage) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Currency)
	ledger.FieldMinor(f, &c.Amount)
	c.Appearance.fields(f)
}

func (c *CreatePage) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// Fields are a link update's: the two commands have one layout.
func (c *UpdatePage) Fields(f *ledger.Codec) { (*UpdateLink)(c).Fields(f) }

func (c *UpdatePage) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (l *Link) fields(f *ledger.Codec) {
	f.Str(&l.ID, &l.OrgID, &l.ParentID, &l.CustomerReference)
	l.Spec.fields(f)
	l.Current.fields(f)
	ledger.FieldU8(f, &l.Status)
	f.Str(&l.StatusMessage)
	ledger.FieldMinor(f, &l.TotalReceived)
	f.Varint(&l.CreatedAt, &l.UpdatedAt, &l.PaidAt, &l.Sessions)
}

func (p *Page) fields(f *ledger.Codec) {
	f.Str(&p.ID, &p.OrgID, &p.Currency)
	ledger.FieldMinor(f, &p.Amount)
	p.Current.fields(f)
	ledger.FieldU8(f, &p.Status)
	f.Varint(&p.PaymentCount)
	ledger.FieldMinor(f, &p.TotalCollected)
	f.Varint(&p.CreatedAt, &p.UpdatedAt)
}

// Rules.

func checkAppearance(a *Appearance) *ledger.Error {
	switch {
	case a.Title == "":
		return ledger.FieldInvalid("title", "is required")
	case !a.Methods.valid():
		return ledger.FieldInvalid("allowedMethods", "must name at least one of mobile_money, bank_transfer, crypto")
	}
	return nil
}

func (c *CreateLink) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if err := checkNew(s, c.ID, "pl_", c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	spec := c.Spec
	if c.ParentID != "" {
		page, err := b.pages.Found(c.OrgID, c.ParentID, "Payment page")
		if err != nil {
			return ledger.Result{Err: err}
		}
		switch {
		case page.Status != PageActive:
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Payment page %s is closed: it takes no new payments", page.ID)}
		case page.Current.ExpiresAt != 0 && now >= page.Current.ExpiresAt:
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Payment page %s has expired: it takes no new payments", page.ID)}
		case page.Amount != 0 && spec.Amount != 0 && spec.Amount != page.Amount:
			return ledger.Result{Err: ledger.FieldInvalid("amount", "must be absent or equal to the page's fixed amount")}
		}
		if page.Amount != 0 {
			spec.Amount = page.Amount
		}
		meta := spec.Appearance.Metadata
		spec.Currency = page.Currency
		spec.Appearance = page.Current
		spec.Appearance.Metadata = meta
	}
	if _, ok := ledger.LookupCurrency(spec.Currency); !ok {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "is not a supported currency")}
	}
	if spec.Amount <= 0 || spec.Amount > ledger.AmountMax {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	if spec.Email == "" {
		return ledger.Result{Err: ledger.FieldInvalid("email", "is required")}
	}
	if err := checkAppearance(&spec.Appearance); err != nil {
		return ledger.Result{Err: err}
	}
	if c.CustomerReference != "" {
		if l, ok := b.links.Find(indexReference, ledger.RefKey(c.OrgID, c.CustomerReference)); ok {
			if l.Spec == spec && l.ParentID == c.ParentID {
				return ledger.Result{Replayed: true, Value: &l}
			}
			return ledger.Result{Err: &ledger.Error{Code: ledger.CodeDuplicate,
				Message:    "Payment link with this customerReference already exists",
				ExistingID: l.ID}}
		}
	}
	if spec.Appearance.ExpiresAt != 0 && spec.Appearance.ExpiresAt <= now {
		return ledger.Result{Err: ledger.FieldInvalid("expiresAt", "must be in the future")}
	}
	if _, ok := b.links.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "payment link %s already exists", c.ID)}
	}
	l := Link{
		ID:                c.ID,
		OrgID:             c.OrgID,
		ParentID:          c.ParentID,
		CustomerReference: c.CustomerReference,
		Spec:              spec,
		Current:           spec.Appearance,
		Status:            LinkActive,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	b.links.Insert(l)
	b.trackLinkExpiry(s, l)
	return ledger.Result{Value: &l}
}

func (c *UpdateLink) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	l, err := b.links.Found(c.OrgID, c.ID, "Payment link")
	if err != nil {
		return ledger.Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if l.Status != LinkActive {
		if c.Close && c.Set == 0 && l.Status == LinkClosed {
			return ledger.Result{Value: &l} // closing a closed link changes nothing
		}
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Payment link %s is %s: only an active link can be updated", l.ID, l.Status)}
	}
	if c.Set&AppearanceExpiresAt != 0 && c.Appearance.ExpiresAt != 0 && c.Appearance.ExpiresAt <= now {
		return ledger.Result{Err: ledger.FieldInvalid("expiresAt", "must be in the future")}
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
		l.Status = LinkClosed
		l.StatusMessage = "Closed by the merchant"
	}
	b.links.Put(l)
	if c.Set&AppearanceExpiresAt != 0 {
		b.trackLinkExpiry(s, l)
	}
	if c.Close {
		b.endOpenSessions(s, c.At, l.ID, SessionFailed, "The payment link was closed")
	}
	return ledger.Result{Value: &l}
}

func (c *CreatePage) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if err := checkNew(s, c.ID, "pp_", c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	if _, ok := ledger.LookupCurrency(c.Currency); !ok {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "is not a supported currency")}
	}
	if c.Amount < 0 || c.Amount > ledger.AmountMax {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	if err := checkAppearance(&c.Appearance); err != nil {
		return ledger.Result{Err: err}
	}
	now := s.OrgNow(c.OrgID, c.At)
	if c.Appearance.ExpiresAt != 0 && c.Appearance.ExpiresAt <= now {
		return ledger.Result{Err: ledger.FieldInvalid("expiresAt", "must be in the future")}
	}
	if _, ok := b.pages.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "payment page %s already exists", c.ID)}
	}
	p := Page{
		ID: c.ID, OrgID: c.OrgID, Currency: c.Currency, Amount: c.Amount, Current: c.Appearance,
		Status: PageActive, CreatedAt: now, UpdatedAt: now,
	}
	b.pages.Insert(p)
	return ledger.Result{Value: &p}
}

func (c *UpdatePage) Apply(s *ledger.State) ledger.Result {
	return ledger.Change(feature.Of(s).pages, c.OrgID, c.ID, "Payment page", func(p *Page) (bool, *ledger.Error) {
		now := s.OrgNow(c.OrgID, c.At)
		if p.Status == PageClosed {
			if c.Close && c.Set == 0 {
				return false, nil
			}
			return false, ledger.Errorf(ledger.CodeBadRequest, "Payment page %s is closed: it can no longer be updated", p.ID)
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
				return false, ledger.FieldInvalid("expiresAt", "must be in the future")
			}
			a.ExpiresAt = c.Appearance.ExpiresAt
		}
		if err := checkAppearance(&a); err != nil {
			return false, err
		}
		p.Current = a
		if c.Close {
			p.Status = PageClosed
		}
		p.UpdatedAt = now
		return true, nil
	})
}

// Reads.

// checkNew checks a new record's id, chosen by the leader, and its
// organization.
func checkNew(s *ledger.State, id, prefix, org string) *ledger.Error {
	if err := ledger.CheckID(id, prefix); err != nil {
		return err
	}
	return s.CheckOrg(org)
}

// GetLink returns an organization's link by id.
func GetLink(r *ledger.Reader, orgID, id string) (Link, bool) {
	return ledger.ReadOwned(r, linkKind, orgID, id)
}

// LinkByID returns a link by id, whatever its organization: for the public hosted checkout.
func LinkByID(r *ledger.Reader, id string) (Link, bool) {
	return ledger.ReadRecord(r, linkKind, id)
}

// LinkSessions returns a link's checkout sessions, newest first.
func LinkSessions(r *ledger.Reader, orgID, linkID string) []Session {
	return ledger.ReadFiltered(r, sessionKind, ledger.IndexParent, orgID, linkID, ledger.CursorStart, SessionsPerLinkMax, nil).Items
}

// LinkFilter selects links in a list; zero fields match everything.
type LinkFilter struct {
	Status            LinkStatus
	ParentID          string
	DirectOnly        bool // links created directly, without a parent
	ChildOnly         bool // links spawned by a payment page
	Email             string
	CustomerReference string
}

// Links lists an organization's links, newest first.
func Links(r *ledger.Reader, orgID string, f LinkFilter, before ledger.Cursor, limit int) ledger.Page[Link] {
	keep := func(l *Link) bool {
		return (f.Status == 0 || l.Status == f.Status) &&
			(f.ParentID == "" || l.ParentID == f.ParentID) &&
			(!f.ChildOnly || l.ParentID != "") &&
			(!f.DirectOnly || l.ParentID == "") &&
			(f.Email == "" || l.Spec.Email == f.Email) &&
			(f.CustomerReference == "" || l.CustomerReference == f.CustomerReference)
	}
	if f.CustomerReference != "" {
		l, ok := ledger.ReadFind(r, linkKind, indexReference, ledger.RefKey(orgID, f.CustomerReference))
		return ledger.OnePage(l, ok && keep(&l), before)
	}
	switch {
	case f.ParentID != "":
		return ledger.ReadFiltered(r, linkKind, ledger.IndexParent, orgID, f.ParentID, before, limit, keep)
	}
	return ledger.ReadByStatus(r, linkKind, orgID, f.Status, LinkStatus.final, before, limit, keep)
}

// GetPage returns an organization's page by id.
func GetPage(r *ledger.Reader, orgID, id string) (Page, bool) {
	return ledger.ReadOwned(r, pageKind, orgID, id)
}

// Pages lists an organization's pages, newest first; status 0 lists
// every page.
func Pages(r *ledger.Reader, orgID string, status PageStatus, before ledger.Cursor, limit int) ledger.Page[Page] {
	return ledger.ReadList(r, pageKind, orgID, before, limit, func(p *Page) bool {
		return status == 0 || p.Status == status
	})
}
