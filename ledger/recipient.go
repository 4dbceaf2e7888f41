package ledger

import (
	"errors"
	"unicode/utf8"
)

// Recipient is a saved payout destination: a method and the account or
// address on it. The destination never changes once saved (a new one is a
// new recipient); the display fields and whether it may be used do. A
// deleted recipient is kept, so that payouts made to it keep their
// reference, but is gone from the API.
type Recipient struct {
	ID    string
	OrgID string
	Spec  RecipientSpec

	Active    bool // may be used for new payouts
	Deleted   bool
	CreatedAt int64
	UpdatedAt int64
}

// RecipientSpec is what a recipient was created with. The caller (package
// http) has checked the method against the catalogue, the account number or
// address against the rail, and resolved the holder's name.
type RecipientSpec struct {
	Method        string // payment method code, e.g. "gh_mtn"
	MethodType    MethodType
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
	RecipientsPerOrgMax     = 100_000
	RecipientBatchMax       = 100
	recipientNameLenMax     = 200 // characters
	recipientLabelLenMax    = 100 // characters
	recipientDestinationMax = 128 // bytes of an account number, address or tag
)

// Command kinds of recipients (range 50–69, see extend.go).
const (
	KindCreateRecipient  Kind = 50
	KindUpdateRecipient  Kind = 51
	KindDeleteRecipient  Kind = 52
	KindCreateRecipients Kind = 53
)

// CreateRecipient saves a recipient.
type CreateRecipient struct {
	At    int64
	ID    string
	OrgID string
	Spec  RecipientSpec
}

// UpdateRecipient changes a recipient's display fields or whether it is
// active; only the fields marked Set change.
type UpdateRecipient struct {
	At             int64
	ID             string
	OrgID          string
	SetAccountName bool
	AccountName    string
	SetLabel       bool
	Label          string
	SetActive      bool
	Active         bool
}

// DeleteRecipient removes a recipient from use and from the API.
type DeleteRecipient struct {
	At    int64
	ID    string
	OrgID string
}

// CreateRecipients saves up to RecipientBatchMax recipients in one command;
// each succeeds or fails on its own (see Result.RecipientBatch).
type CreateRecipients struct {
	At    int64
	OrgID string
	Items []CreateRecipient // each with its own ID; At and OrgID are the batch's
}

// RecipientOutcome is one item of a batch: the recipient or why not.
type RecipientOutcome struct {
	Recipient *Recipient
	Err       *Error
}

func (*CreateRecipient) Kind() Kind  { return KindCreateRecipient }
func (*UpdateRecipient) Kind() Kind  { return KindUpdateRecipient }
func (*DeleteRecipient) Kind() Kind  { return KindDeleteRecipient }
func (*CreateRecipients) Kind() Kind { return KindCreateRecipients }

func (c *CreateRecipient) Apply(s *State) Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return Result{Err: err}
	}
	r, err := s.createRecipient(c.At, c.OrgID, c.ID, &c.Spec)
	if err != nil {
		return Result{Err: err}
	}
	return Result{Recipient: r}
}

func (c *CreateRecipients) Apply(s *State) Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return Result{Err: err}
	}
	if len(c.Items) == 0 || len(c.Items) > RecipientBatchMax {
		return Result{Err: FieldInvalid("recipients", "must hold 1 to 100 items")}
	}
	out := make([]RecipientOutcome, len(c.Items))
	for i := range c.Items {
		r, err := s.createRecipient(c.At, c.OrgID, c.Items[i].ID, &c.Items[i].Spec)
		out[i] = RecipientOutcome{Recipient: r, Err: err}
	}
	return Result{RecipientBatch: out}
}

// createRecipient checks and inserts one recipient.
func (s *State) createRecipient(at int64, org, id string, spec *RecipientSpec) (*Recipient, *Error) {
	if err := CheckID(id, "rcp_"); err != nil {
		return nil, err
	}
	if _, dup := s.recipients.get(id); dup {
		return nil, Errorf(CodeConflict, "recipient %s already exists", id)
	}
	if err := checkRecipientSpec(spec); err != nil {
		return nil, err
	}
	if s.recipients.count(org) >= RecipientsPerOrgMax {
		return nil, Errorf(CodeValidation, "An organization keeps at most %d recipients", RecipientsPerOrgMax)
	}
	r := Recipient{ID: id, OrgID: org, Spec: *spec, Active: true, CreatedAt: s.OrgNow(org, at), UpdatedAt: s.OrgNow(org, at)}
	s.recipients.insert(r)
	return &r, nil
}

// checkRecipientSpec re-checks what the caller validated, so that the log
// cannot hold a malformed recipient.
func checkRecipientSpec(spec *RecipientSpec) *Error {
	if spec.Method == "" || len(spec.Method) > 64 {
		return FieldInvalid("code", "is required")
	}
	if _, ok := LookupCurrency(spec.Currency); !ok {
		return FieldInvalid("code", "moves an unsupported currency")
	}
	// A crypto recipient's name is optional: no chain resolves holder
	// names, and the reference requires only code.
	if err := checkRecipientText("accountName", spec.AccountName, spec.MethodType != MethodCrypto, recipientNameLenMax); err != nil {
		return err
	}
	if err := checkRecipientText("label", spec.Label, false, recipientLabelLenMax); err != nil {
		return err
	}
	switch spec.MethodType {
	case MethodCrypto:
		if spec.Address == "" || spec.AccountNumber != "" {
			return FieldInvalid("address", "is required for a crypto method, and accountNumber is not used")
		}
	case MethodMobileMoney, MethodBankTransfer:
		if spec.AccountNumber == "" || spec.Address != "" || spec.Tag != "" {
			return FieldInvalid("accountNumber", "is required for a "+spec.MethodType.String()+" method, and address and tag are not used")
		}
	default:
		return FieldInvalid("code", "has an unknown method type")
	}
	if len(spec.AccountNumber) > recipientDestinationMax || len(spec.Address) > recipientDestinationMax || len(spec.Tag) > recipientDestinationMax {
		return FieldInvalid("accountNumber", "is too long")
	}
	return nil
}

func checkRecipientText(field, v string, required bool, maxLen int) *Error {
	switch {
	case v == "" && required:
		return FieldInvalid(field, "is required")
	case !utf8.ValidString(v):
		return FieldInvalid(field, "must be valid UTF-8")
	case utf8.RuneCountInString(v) > maxLen:
		return FieldInvalid(field, "is too long")
	}
	return nil
}

func (c *UpdateRecipient) Apply(s *State) Result {
	r, ok := s.recipients.owned(c.OrgID, c.ID)
	if !ok || r.Deleted {
		return Result{Err: Errorf(CodeNotFound, "Recipient not found")}
	}
	if c.SetAccountName {
		if err := checkRecipientText("accountName", c.AccountName, true, recipientNameLenMax); err != nil {
			return Result{Err: err}
		}
		r.Spec.AccountName = c.AccountName
	}
	if c.SetLabel {
		if err := checkRecipientText("label", c.Label, false, recipientLabelLenMax); err != nil {
			return Result{Err: err}
		}
		r.Spec.Label = c.Label
	}
	if c.SetActive {
		r.Active = c.Active
	}
	r.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	s.recipients.put(r)
	return Result{Recipient: &r}
}

func (c *DeleteRecipient) Apply(s *State) Result {
	r, ok := s.recipients.owned(c.OrgID, c.ID)
	if !ok || r.Deleted {
		return Result{Err: Errorf(CodeNotFound, "Recipient not found")}
	}
	r.Deleted, r.Active, r.UpdatedAt = true, false, s.OrgNow(c.OrgID, c.At)
	s.recipients.put(r)
	return Result{Recipient: &r}
}

// checkPayoutRecipient holds a payout that names a recipient to that
// recipient: it must be the organization's, active, and the payout must go
// to its destination.
func (s *State) checkPayoutRecipient(org string, spec *PayoutSpec) *Error {
	if spec.RecipientID == "" {
		return nil
	}
	r, ok := s.recipients.owned(org, spec.RecipientID)
	switch {
	case !ok || r.Deleted:
		return FieldInvalid("to.recipientId", "is not a recipient of this organization")
	case !r.Active:
		return FieldInvalid("to.recipientId", "is an inactive recipient; reactivate it with PUT /v1/recipients/"+r.ID)
	case r.Spec.Method != spec.Method || r.Spec.Currency != spec.Currency || r.Spec.AccountNumber != spec.AccountNumber ||
		r.Spec.Address != spec.Address || r.Spec.Tag != spec.Tag:
		return FieldInvalid("to.recipientId", "names a recipient with a different destination than the payout's")
	}
	return nil
}

// Recipient returns an organization's recipient by id; a deleted one is
// not found.
func (r *Reader) Recipient(orgID, id string) (Recipient, bool) {
	rc, ok := readOwned(r, recipientKind, orgID, id)
	if !ok || rc.Deleted {
		return Recipient{}, false
	}
	return rc, true
}

// RecipientFilter selects recipients in a list.
type RecipientFilter struct {
	Method string // "" for any
	Active *bool  // nil for any
}

// Recipients returns one page of an organization's recipients, newest
// first.
func (r *Reader) Recipients(orgID string, f RecipientFilter, before Cursor, limit int) Page[Recipient] {
	k := recipientKind
	return readPage(r, k, k.listPrefix(orgID), before, limit, func(rc *Recipient) bool {
		return !rc.Deleted && (f.Method == "" || rc.Spec.Method == f.Method) && (f.Active == nil || rc.Active == *f.Active)
	})
}

// Codec.
func (sp *RecipientSpec) encode(e *Encoder) {
	e.str(sp.Method)
	e.methodType(sp.MethodType)
	e.str(sp.Country)
	e.str(sp.Currency)
	e.str(sp.AccountName)
	e.str(sp.Label)
	e.str(sp.AccountNumber)
	e.str(sp.Address)
	e.str(sp.Tag)
}

func decodeRecipientSpec(d *Decoder) RecipientSpec {
	return RecipientSpec{
		Method: d.str(), MethodType: d.methodType(), Country: d.str(), Currency: d.str(), AccountName: d.str(),
		Label: d.str(), AccountNumber: d.str(), Address: d.str(), Tag: d.str(),
	}
}

func (c *CreateRecipient) Encode(e *Encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.OrgID)
	c.Spec.encode(e)
}

func decodeCreateRecipient(d *Decoder) *CreateRecipient {
	return &CreateRecipient{At: d.varint(), ID: d.str(), OrgID: d.str(), Spec: decodeRecipientSpec(d)}
}

func (c *UpdateRecipient) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Bool(&c.SetAccountName)
	f.Str(&c.AccountName)
	f.Bool(&c.SetLabel)
	f.Str(&c.Label)
	f.Bool(&c.SetActive)
	f.Bool(&c.Active)
}

func (c *UpdateRecipient) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *DeleteRecipient) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
}

func (c *DeleteRecipient) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *CreateRecipients) Encode(e *Encoder) {
	e.varint(c.At)
	e.str(c.OrgID)
	e.uvarint(uint64(len(c.Items)))
	for i := range c.Items {
		e.str(c.Items[i].ID)
		c.Items[i].Spec.encode(e)
	}
}

func decodeCreateRecipients(d *Decoder) *CreateRecipients {
	c := &CreateRecipients{At: d.varint(), OrgID: d.str()}
	n := d.count()
	if n > RecipientBatchMax {
		d.fail(errors.New("ledger: recipient batch too large"))
		return c
	}
	for i := 0; i < n && d.err == nil; i++ {
		c.Items = append(c.Items, CreateRecipient{At: c.At, ID: d.str(), OrgID: c.OrgID, Spec: decodeRecipientSpec(d)})
	}
	return c
}

func encodeRecipient(e *Encoder, r *Recipient) {
	e.str(r.ID)
	e.str(r.OrgID)
	r.Spec.encode(e)
	e.bool(r.Active)
	e.bool(r.Deleted)
	e.varint(r.CreatedAt)
	e.varint(r.UpdatedAt)
}

func decodeRecipient(d *Decoder) Recipient {
	return Recipient{
		ID: d.str(), OrgID: d.str(), Spec: decodeRecipientSpec(d), Active: d.bool(), Deleted: d.bool(),
		CreatedAt: d.varint(), UpdatedAt: d.varint(),
	}
}

// recipientKind: recipients stay open for good (they can be edited and
// deleted, and they grow with merchants, not with payments).
var recipientKind = &kind[Recipient]{
	tag: tagRecipient, name: "recipient",
	id:  func(r *Recipient) (string, string) { return r.ID, r.OrgID },
	enc: encodeRecipient, dec: decodeRecipient,
}

func init() {
	RegisterCommand(KindCreateRecipient, func(d *Decoder) Command { return decodeCreateRecipient(d) })
	RegisterFields[UpdateRecipient](KindUpdateRecipient)
	RegisterFields[DeleteRecipient](KindDeleteRecipient)
	RegisterCommand(KindCreateRecipients, func(d *Decoder) Command { return decodeCreateRecipients(d) })
}
