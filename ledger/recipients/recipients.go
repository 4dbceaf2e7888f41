// Package recipients is the ledger's saved payout destinations: a method
// and the account or address on it, which a payout may name instead of
// spelling the destination out (ledger.PayoutSpec.RecipientID). It is a
// feature of the ledger's kernel (ledger/feature.go): its commands are
// applied by ledger.State.Apply in log order like every other, and its
// records are kept in the state store under tag ledger.TagRecipient.
//
// The destination never changes once saved (a new one is a new
// recipient); the display fields and whether it may be used do. A deleted
// recipient is kept, so that payouts made to it keep their reference, but
// is gone from the API.
package recipients

import (
	"unicode/utf8"

	"payments/ledger"
)

// Recipient is a saved payout destination.
type Recipient struct {
	ID    string
	OrgID string
	Spec  Spec

	Active    bool // may be used for new payouts
	Deleted   bool
	CreatedAt int64
	UpdatedAt int64
}

// Spec is what a recipient was created with. The caller (package
// actors/app) has checked the method against the catalogue, the account
// number or address against the rail, and resolved the holder's name.
type Spec struct {
	Method        string // payment method code, e.g. "gh_mtn"
	MethodType    ledger.MethodType
	Country       string // ISO 3166-1 alpha-2; "" for stablecoin networks
	Currency      string
	AccountName   string
	Label         string
	AccountNumber string // fiat destination
	Address       string // crypto destination
	Tag           string
}

// Limits of recipients.
const (
	PerOrgMax      = 100_000
	BatchMax       = 100
	nameLenMax     = 200 // characters
	labelLenMax    = 100 // characters
	destinationMax = 128 // bytes of an account number, address or tag
)

// Command kinds of recipients (range 50–69, see ledger/extend.go).
const (
	KindCreate      ledger.Kind = 50
	KindUpdate      ledger.Kind = 51
	KindDelete      ledger.Kind = 52
	KindCreateBatch ledger.Kind = 53
)

// Create saves a recipient.
type Create struct {
	At    int64
	ID    string
	OrgID string
	Spec  Spec
}

// Update changes one of an organization's recipients.
type Update struct {
	At    int64
	ID    string
	OrgID string
	Change
}

// Change is what an update of a recipient changes: its display fields or
// whether it is active, those whose Set flag is true. Its destination
// never changes.
type Change struct {
	SetAccountName bool
	AccountName    string
	SetLabel       bool
	Label          string
	SetActive      bool
	Active         bool
}

// Delete removes a recipient from use and from the API.
type Delete struct {
	At    int64
	ID    string
	OrgID string
}

// CreateBatch saves up to BatchMax recipients in one command; each
// succeeds or fails on its own (see Batch).
type CreateBatch struct {
	At    int64
	OrgID string
	Items []Create // each with its own ID; At and OrgID are the batch's
}

// Outcome is one item of a batch: the recipient or why not.
type Outcome struct {
	Recipient *Recipient
	Err       *ledger.Error
}

func (*Create) Kind() ledger.Kind      { return KindCreate }
func (*Update) Kind() ledger.Kind      { return KindUpdate }
func (*Delete) Kind() ledger.Kind      { return KindDelete }
func (*CreateBatch) Kind() ledger.Kind { return KindCreateBatch }

// Of returns the recipient a command made or changed, or nil.
func Of(res ledger.Result) *Recipient { return ledger.ValueOf[Recipient](res) }

// Batch returns the outcomes of a CreateBatch, one per item in order.
func Batch(res ledger.Result) []Outcome {
	out, _ := res.Value.([]Outcome)
	return out
}

// book is what the feature keeps in a State: the recipients, every one in
// memory (they grow with merchants, not with payments).
type book struct {
	recipients ledger.Store[Recipient]
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{recipients: ledger.AddStore(s, kind)}
	s.AddPayoutCheck(b.checkPayout)
	return b
})

func (c *Create) Apply(s *ledger.State) ledger.Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	r, err := feature.Of(s).create(s, c.At, c.OrgID, c.ID, &c.Spec)
	if err != nil {
		return ledger.Result{Err: err}
	}
	return ledger.Result{Value: r}
}

func (c *CreateBatch) Apply(s *ledger.State) ledger.Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	if len(c.Items) == 0 || len(c.Items) > BatchMax {
		return ledger.Result{Err: ledger.FieldInvalid("recipients", "must hold 1 to 100 items")}
	}
	b := feature.Of(s)
	out := make([]Outcome, len(c.Items))
	for i := range c.Items {
		r, err := b.create(s, c.At, c.OrgID, c.Items[i].ID, &c.Items[i].Spec)
		out[i] = Outcome{Recipient: r, Err: err}
	}
	return ledger.Result{Value: out}
}

// create checks and inserts one recipient.
func (b *book) create(s *ledger.State, at int64, org, id string, spec *Spec) (*Recipient, *ledger.Error) {
	if err := ledger.CheckID(id, "rcp_"); err != nil {
		return nil, err
	}
	if _, dup := b.recipients.Get(id); dup {
		return nil, ledger.Errorf(ledger.CodeConflict, "recipient %s already exists", id)
	}
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	if b.recipients.Count(org) >= PerOrgMax {
		return nil, ledger.Errorf(ledger.CodeValidation, "An organization keeps at most %d recipients", PerOrgMax)
	}
	r := Recipient{ID: id, OrgID: org, Spec: *spec, Active: true, CreatedAt: s.OrgNow(org, at), UpdatedAt: s.OrgNow(org, at)}
	b.recipients.Insert(r)
	return &r, nil
}

// checkSpec re-checks what the caller validated, so that the log cannot
// hold a malformed recipient.
func checkSpec(spec *Spec) *ledger.Error {
	if spec.Method == "" || len(spec.Method) > 64 {
		return ledger.FieldInvalid("code", "is required")
	}
	if _, ok := ledger.LookupCurrency(spec.Currency); !ok {
		return ledger.FieldInvalid("code", "moves an unsupported currency")
	}
	// A crypto recipient's name is optional: no chain resolves holder
	// names, and the reference requires only code.
	if err := checkText("accountName", spec.AccountName, spec.MethodType != ledger.MethodCrypto, nameLenMax); err != nil {
		return err
	}
	if err := checkText("label", spec.Label, false, labelLenMax); err != nil {
		return err
	}
	switch spec.MethodType {
	case ledger.MethodCrypto:
		if spec.Address == "" || spec.AccountNumber != "" {
			return ledger.FieldInvalid("address", "is required for a crypto method, and accountNumber is not used")
		}
	case ledger.MethodMobileMoney, ledger.MethodBankTransfer:
		if spec.AccountNumber == "" || spec.Address != "" || spec.Tag != "" {
			return ledger.FieldInvalid("accountNumber", "is required for a "+spec.MethodType.String()+" method, and address and tag are not used")
		}
	default:
		return ledger.FieldInvalid("code", "has an unknown method type")
	}
	if len(spec.AccountNumber) > destinationMax || len(spec.Address) > destinationMax || len(spec.Tag) > destinationMax {
		return ledger.FieldInvalid("accountNumber", "is too long")
	}
	return nil
}

func checkText(field, v string, required bool, maxLen int) *ledger.Error {
	switch {
	case v == "" && required:
		return ledger.FieldInvalid(field, "is required")
	case !utf8.ValidString(v):
		return ledger.FieldInvalid(field, "must be valid UTF-8")
	case utf8.RuneCountInString(v) > maxLen:
		return ledger.FieldInvalid(field, "is too long")
	}
	return nil
}

func (c *Update) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	r, ok := b.recipients.Owned(c.OrgID, c.ID)
	if !ok || r.Deleted {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeNotFound, "Recipient not found")}
	}
	if c.SetAccountName {
		if err := checkText("accountName", c.AccountName, true, nameLenMax); err != nil {
			return ledger.Result{Err: err}
		}
		r.Spec.AccountName = c.AccountName
	}
	if c.SetLabel {
		if err := checkText("label", c.Label, false, labelLenMax); err != nil {
			return ledger.Result{Err: err}
		}
		r.Spec.Label = c.Label
	}
	if c.SetActive {
		r.Active = c.Active
	}
	r.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	b.recipients.Put(r)
	return ledger.Result{Value: &r}
}

func (c *Delete) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	r, ok := b.recipients.Owned(c.OrgID, c.ID)
	if !ok || r.Deleted {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeNotFound, "Recipient not found")}
	}
	r.Deleted, r.Active, r.UpdatedAt = true, false, s.OrgNow(c.OrgID, c.At)
	b.recipients.Put(r)
	return ledger.Result{Value: &r}
}

// checkPayout holds a payout that names a recipient to that recipient: it
// must be the organization's, active, and the payout must go to its
// destination.
func (b *book) checkPayout(org string, spec *ledger.PayoutSpec) *ledger.Error {
	if spec.RecipientID == "" {
		return nil
	}
	r, ok := b.recipients.Owned(org, spec.RecipientID)
	switch {
	case !ok || r.Deleted:
		return ledger.FieldInvalid("to.recipientId", "is not a recipient of this organization")
	case !r.Active:
		return ledger.FieldInvalid("to.recipientId", "is an inactive recipient; reactivate it with PUT /v1/recipients/"+r.ID)
	case r.Spec.Method != spec.Method || r.Spec.Currency != spec.Currency || r.Spec.AccountNumber != spec.AccountNumber ||
		r.Spec.Address != spec.Address || r.Spec.Tag != spec.Tag:
		return ledger.FieldInvalid("to.recipientId", "names a recipient with a different destination than the payout's")
	}
	return nil
}

// Get returns an organization's recipient by id, from the committed state;
// a deleted one is not found.
func Get(r *ledger.Reader, org, id string) (Recipient, bool) {
	rc, ok := ledger.ReadOwned(r, kind, org, id)
	if !ok || rc.Deleted {
		return Recipient{}, false
	}
	return rc, true
}

// Filter selects recipients in a list.
type Filter struct {
	Method string // "" for any
	Active *bool  // nil for any
}

// List returns one page of an organization's recipients, newest first.
func List(r *ledger.Reader, org string, f Filter, before ledger.Cursor, limit int) ledger.Page[Recipient] {
	return ledger.ReadList(r, kind, org, before, limit, func(rc *Recipient) bool {
		return !rc.Deleted && (f.Method == "" || rc.Spec.Method == f.Method) && (f.Active == nil || rc.Active == *f.Active)
	})
}

// The codecs: each Fields method names the fields once, in their frozen
// order, and both writes and reads them.

func (sp *Spec) fields(f *ledger.Codec) {
	f.Str(&sp.Method)
	ledger.FieldMethodType(f, &sp.MethodType)
	f.Str(&sp.Country, &sp.Currency, &sp.AccountName, &sp.Label,
		&sp.AccountNumber, &sp.Address, &sp.Tag)
}

func (c *Create) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
	c.Spec.fields(f)
}

func (c *Update) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
	f.Bool(&c.SetAccountName)
	f.Str(&c.AccountName)
	f.Bool(&c.SetLabel)
	f.Str(&c.Label)
	f.Bool(&c.SetActive, &c.Active)
}

func (c *Delete) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
}

// Fields writes each item's ID and Spec only: its At and OrgID are the
// batch's.
func (c *CreateBatch) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	ledger.FieldSlice(f, &c.Items, BatchMax, "recipients", func(f *ledger.Codec, it *Create) {
		f.Str(&it.ID)
		it.Spec.fields(f)
		if f.Decoding() {
			it.At, it.OrgID = c.At, c.OrgID
		}
	})
}

func (c *Create) Encode(e *ledger.Encoder)      { c.Fields(e.Codec()) }
func (c *Update) Encode(e *ledger.Encoder)      { c.Fields(e.Codec()) }
func (c *Delete) Encode(e *ledger.Encoder)      { c.Fields(e.Codec()) }
func (c *CreateBatch) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (r *Recipient) fields(f *ledger.Codec) {
	f.Str(&r.ID, &r.OrgID)
	r.Spec.fields(f)
	f.Bool(&r.Active, &r.Deleted)
	f.Varint(&r.CreatedAt, &r.UpdatedAt)
}

// kind: recipients stay open for good (they can be edited and deleted).
var kind = ledger.NewRecordKind(ledger.RecordSpec[Recipient]{
	Tag: ledger.TagRecipient, Name: "recipient",
	ID:     func(r *Recipient) (string, string) { return r.ID, r.OrgID },
	Fields: (*Recipient).fields,
})

func init() {
	ledger.RegisterFieldsCommands(
		ledger.Fresh[Create], ledger.Fresh[Update], ledger.Fresh[Delete],
		ledger.Fresh[CreateBatch])
}
