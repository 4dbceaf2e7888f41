// Package disputes is the ledger's disputes and the files merchants upload
// (the evidence a dispute's messages attach among them). It is a feature
// of the ledger's kernel (ledger/feature.go): its commands are applied by
// ledger.State.Apply in log order like every other, and its records are
// kept in the state store under tags ledger.TagDispute, ledger.TagFile and
// ledger.TagFileSigningKey.
//
// A dispute is a payer's claim against a completed collection. While it is
// open its amount is held on the merchant's balance (ledger.State.Hold);
// when the merchant loses, the amount is booked back to the collections
// source (ledger.State.Book), and either way the hold is released. Check
// finds every account's hold equal to its unresolved disputes
// (ledger.AddHoldCount).
//
// The ledger keeps each uploaded file's metadata, never its bytes, and the
// one key that signs download URLs (files.go).
package disputes

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"payments/ledger"
)

// Status is where a dispute is in its life:
//
//	open ──merchant accepts──────────────────────────▶ accepted (amount debited)
//	  │ └─service rules (won / lost)─────────────────▶ declined / accepted
//	  └──merchant contests──▶ under_review ──service rules (won / lost)──▶ declined / accepted
//
// While a dispute is open or under review its amount is held on the
// merchant's balance: still in Total, not in Available. Accepted (the
// merchant conceded or lost) debits the amount back to the payer's side,
// the collections source; declined (the merchant won) releases the hold.
type Status uint8

// Dispute statuses. Values are frozen.
const (
	StatusOpen        Status = 1
	StatusUnderReview Status = 2
	StatusAccepted    Status = 3
	StatusDeclined    Status = 4
)

var statusNames = ledger.EnumNames[Status]{"", "open", "under_review", "accepted", "declined"}

func (s Status) String() string { return statusNames.String(s) }

// Final reports whether the dispute is resolved.
func (s Status) Final() bool { return s == StatusAccepted || s == StatusDeclined }

// ParseStatus returns the status with the given API name.
func ParseStatus(name string) (Status, bool) { return statusNames.Parse(name) }

// Categories are the categories a dispute may have.
var Categories = []string{"fraud", "chargeback", "other"}

// Actions a merchant may respond with.
const (
	ActionAccept  = "accept"
	ActionContest = "contest"
)

// Authors of dispute messages.
const (
	AuthorMerchant = "merchant"
	AuthorAdmin    = "admin" // the service
)

// Limits of a dispute, re-checked by Apply.
const (
	MessagesMax    = 100  // messages in one thread
	AttachmentsMax = 10   // files on one message or response
	TextLenMax     = 5000 // bytes of a message body or reason
)

// Attachment is a file on a dispute message: one of the organization's
// files, or a document the author links by URL (the reference's
// {name, url}). The record format is frozen, so a linked document keeps its
// URL in FileID behind attachmentURLPrefix; read it with URL.
type Attachment struct {
	FileID string
	Name   string // the file's name, or the one the author gave
}

// attachmentURLPrefix marks an Attachment that links a document by URL.
const attachmentURLPrefix = "url:"

// LinkedAttachment is an attachment that links the document at url.
func LinkedAttachment(name, url string) Attachment {
	return Attachment{FileID: attachmentURLPrefix + url, Name: name}
}

// URL is the linked document's address; ok is false for a file.
func (a Attachment) URL() (url string, ok bool) {
	return strings.CutPrefix(a.FileID, attachmentURLPrefix)
}

// Message is one message of a dispute's thread.
type Message struct {
	ID          string
	AuthorType  string
	Body        string
	Attachments []Attachment
	CreatedAt   int64
}

// Evidence is the merchant's response: empty until they respond.
type Evidence struct {
	Action  string
	Reason  string
	FileIDs []string
}

// Dispute is a payer's claim against a completed collection.
type Dispute struct {
	ID            string
	OrgID         string
	CollectionID  string
	AccountNumber string // the balance the amount is held on
	Amount        ledger.Minor
	Currency      string
	Category      string
	Status        Status
	StatusMessage string
	Evidence      Evidence
	// Messages is the thread, oldest first. A new message makes a new
	// slice: records are never mutated in place.
	Messages []Message

	ResolvedAt int64
	CreatedAt  int64
	UpdatedAt  int64
}

// Open opens a dispute against a completed collection and holds its
// amount on the balance the collection credited. A collection has at most
// one dispute: the same request again is a replay, a different one a
// conflict.
type Open struct {
	At           int64
	ID           string
	OrgID        string
	CollectionID string
	Amount       ledger.Minor
	Category     string
	Reason       string // posted as the service's first message, if set
	MessageID    string
}

// Respond is the merchant's answer to an open dispute: accept (concede;
// the held amount is debited) or contest (under review, with evidence; the
// reason is posted as a message).
type Respond struct {
	At        int64
	ID        string
	OrgID     string
	Action    string
	Reason    string
	FileIDs   []string
	MessageID string
}

// AddMessage posts to a dispute's thread.
type AddMessage struct {
	At          int64
	DisputeID   string
	OrgID       string
	MessageID   string
	AuthorType  string
	Body        string
	Attachments []Attachment
}

// Resolve ends a dispute by the service's ruling: won releases the hold,
// lost debits the amount.
type Resolve struct {
	At      int64
	ID      string
	OrgID   string
	Won     bool
	Message string
}

// Command kinds of disputes (range 50–69, see ledger/extend.go). Frozen.
const (
	KindOpen       ledger.Kind = 57
	KindRespond    ledger.Kind = 58
	KindAddMessage ledger.Kind = 59
	KindResolve    ledger.Kind = 60
)

func (*Open) Kind() ledger.Kind       { return KindOpen }
func (*Respond) Kind() ledger.Kind    { return KindRespond }
func (*AddMessage) Kind() ledger.Kind { return KindAddMessage }
func (*Resolve) Kind() ledger.Kind    { return KindResolve }

// SubjectDispute tags dispute events' subjects (ledger/event.go allots
// the kinds). Frozen.
const SubjectDispute ledger.SubjectKind = 22

func (Dispute) SubjectKind() ledger.SubjectKind { return SubjectDispute }

// Entry types of disputes: the merchant's debit when a dispute is lost, and
// the collections source taking the amount back. Frozen.
const (
	EntryDebit    ledger.EntryType = 50
	EntryReversal ledger.EntryType = 51
)

// Of returns the dispute a command opened or changed, or nil.
func Of(res ledger.Result) *Dispute {
	return ledger.ValueIn(res, func(p *posted) *Dispute { return p.dispute })
}

// MessageOf returns the message an AddMessage posted, or nil.
func MessageOf(res ledger.Result) *Message {
	return ledger.ValueIn(res, func(p *posted) *Message { return p.message })
}

// posted is the outcome of an AddMessage: the dispute and its new message.
type posted struct {
	dispute *Dispute
	message *Message
}

func init() {
	ledger.RegisterEntryType(EntryDebit, "dispute_debit", "dispute")
	ledger.RegisterEntryType(EntryReversal, "dispute_reversal", "dispute")
	ledger.RegisterFieldsCommands(
		ledger.Fresh[Open], ledger.Fresh[Respond], ledger.Fresh[AddMessage],
		ledger.Fresh[Resolve])
	ledger.RegisterSubject(SubjectDispute, (*Dispute).fields)
	ledger.AddHoldCount(func(r *ledger.Reader, hold func(string, ledger.Minor)) {
		ledger.EachRecord(r, disputeKind, func(d *Dispute) {
			if !d.Status.Final() {
				hold(d.AccountNumber, d.Amount)
			}
		})
	})
}

func (c *Open) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.CollectionID)
	ledger.FieldMinor(f, &c.Amount)
	f.Str(&c.Category, &c.Reason, &c.MessageID)
}

func (c *Open) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *Respond) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Action, &c.Reason)
	f.Strs(&c.FileIDs)
	f.Str(&c.MessageID)
}

func (c *Respond) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *AddMessage) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.DisputeID, &c.OrgID, &c.MessageID, &c.AuthorType, &c.Body)
	attachments(f, &c.Attachments)
}

func (c *AddMessage) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *Resolve) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
	f.Bool(&c.Won)
	f.Str(&c.Message)
}

func (c *Resolve) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// attachments reads or writes a list of attachments: its length, then each
// file id and name. The length is bounded only by the bytes (Apply checks
// AttachmentsMax).
func attachments(f *ledger.Codec, p *[]Attachment) {
	ledger.FieldSlice(f, p, math.MaxInt, "attachments", func(f *ledger.Codec, a *Attachment) {
		f.Str(&a.FileID, &a.Name)
	})
}

// fields is a dispute's codec, as a record and as an event's subject.
func (v *Dispute) fields(f *ledger.Codec) {
	f.Str(&v.ID, &v.OrgID, &v.CollectionID, &v.AccountNumber)
	ledger.FieldMinor(f, &v.Amount)
	f.Str(&v.Currency, &v.Category)
	ledger.FieldU8(f, &v.Status)
	f.Str(&v.StatusMessage, &v.Evidence.Action, &v.Evidence.Reason)
	f.Strs(&v.Evidence.FileIDs)
	ledger.FieldSlice(f, &v.Messages, math.MaxInt, "messages", func(f *ledger.Codec, m *Message) {
		f.Str(&m.ID, &m.AuthorType, &m.Body)
		attachments(f, &m.Attachments)
		f.Varint(&m.CreatedAt)
	})
	f.Varint(&v.ResolvedAt, &v.CreatedAt, &v.UpdatedAt)
}

// disputeKind: a dispute stays open until it is resolved. A collection has
// at most one, found by the collection's id.
var disputeKind = ledger.NewRecordKind(ledger.RecordSpec[Dispute]{
	Tag: ledger.TagDispute, Name: "dispute",
	ID:     func(v *Dispute) (string, string) { return v.ID, v.OrgID },
	Fields: (*Dispute).fields,
	Open:   func(v *Dispute) bool { return !v.Status.Final() },
	Lookups: []ledger.Lookup[Dispute]{
		{Name: ledger.IndexParent, Key: func(v *Dispute) string { return v.CollectionID }},
	},
	Filters: []ledger.Filter[Dispute]{
		// Only final statuses are indexed; open ones are in the open set.
		ledger.StatusFilter(func(v *Dispute) (bool, string) { return v.Status.Final(), v.Status.String() }),
	},
})

// part is what the feature keeps in a State: its disputes, files and the
// signing key.
type part struct {
	files    ledger.Store[File]
	keys     ledger.Store[ledger.DeploymentKey]
	disputes ledger.Store[Dispute]
}

var feature = ledger.AddFeature(func(s *ledger.State) *part {
	return &part{
		files:    ledger.AddStore(s, fileKind),
		keys:     ledger.AddStore(s, signingKeyKind),
		disputes: ledger.AddStore(s, disputeKind),
	}
})

// withMessage returns the dispute with m appended to a fresh copy of its
// thread, so a snapshot reading the old record never sees the new message.
func (v Dispute) withMessage(m Message) Dispute {
	msgs := make([]Message, len(v.Messages), len(v.Messages)+1)
	copy(msgs, v.Messages)
	v.Messages = append(msgs, m)
	return v
}

func (c *Open) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "dsp_"); err != nil {
		return ledger.Result{Err: err}
	}
	if c.Reason != "" {
		if err := ledger.CheckID(c.MessageID, "dsm_"); err != nil {
			return ledger.Result{Err: err}
		}
	}
	col, ok := s.Collection(c.CollectionID)
	if !ok || col.OrgID != c.OrgID {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeNotFound, "Collection not found")}
	}
	if !slices.Contains(Categories, c.Category) {
		return ledger.Result{Err: ledger.FieldInvalid("category", "must be one of fraud, chargeback, other")}
	}
	if len(c.Reason) > TextLenMax {
		return ledger.Result{Err: ledger.FieldInvalid("reason", fmt.Sprintf("must be at most %d bytes", TextLenMax))}
	}
	p := feature.Of(s)
	if d, ok := p.disputes.Find(ledger.IndexParent, c.CollectionID); ok {
		if d.Amount == c.Amount && d.Category == c.Category {
			return ledger.Result{Replayed: true, Value: &d}
		}
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "Collection %s already has dispute %s with a different amount or category", col.ID, d.ID)}
	}
	if col.Status != ledger.CollectionCompleted {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Only completed collections can be disputed; %s is %s", col.ID, col.Status)}
	}
	if c.Amount <= 0 || c.Amount > col.Spec.Amount {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "must be more than zero and at most the collection's amount")}
	}
	if _, dup := p.disputes.Get(c.ID); dup {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "dispute %s already exists", c.ID)}
	}
	// The hold must leave the available balance non-negative: the money
	// may already have left in payouts.
	a, ok := s.Account(col.AccountNumber)
	if !ok {
		panic("disputes: completed collection without its account " + col.AccountNumber)
	}
	if a.Available() < c.Amount {
		e := ledger.InsufficientFunds(a.Available(), c.Amount, a.Currency)
		e.Message = "Insufficient funds: the available balance cannot hold the disputed amount"
		return ledger.Result{Err: e}
	}
	s.Hold(a.Number, c.Amount)
	now := s.OrgNow(c.OrgID, c.At)
	d := Dispute{
		ID: c.ID, OrgID: c.OrgID, CollectionID: col.ID, AccountNumber: a.Number,
		Amount: c.Amount, Currency: col.Spec.Currency, Category: c.Category,
		Status: StatusOpen, CreatedAt: now, UpdatedAt: now,
	}
	if c.Reason != "" {
		d = d.withMessage(Message{ID: c.MessageID, AuthorType: AuthorAdmin, Body: c.Reason, CreatedAt: now})
	}
	p.disputes.Insert(d)
	s.Emit(c.At, d.OrgID, ledger.EventDisputeCreated, d.ID, d)
	return ledger.Result{Value: &d}
}

// attachments checks file ids: each an evidence file of the organization,
// at most AttachmentsMax, none twice. Names default to the file's.
func (p *part) attachments(orgID, field string, in []Attachment) ([]Attachment, *ledger.Error) {
	if len(in) > AttachmentsMax {
		return nil, ledger.FieldInvalid(field, fmt.Sprintf("must have at most %d files", AttachmentsMax))
	}
	out := make([]Attachment, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, a := range in {
		name := fmt.Sprintf("%s[%d]", field, i)
		if _, linked := a.URL(); linked {
			// Checked by the caller (an https URL and a name); here only
			// that it is not given twice.
			if a.Name == "" || seen[a.FileID] {
				return nil, ledger.FieldInvalid(name, "needs a name and must not be attached twice")
			}
			seen[a.FileID] = true
			out = append(out, a)
			continue
		}
		f, ok := p.files.Owned(orgID, a.FileID)
		switch {
		case !ok:
			return nil, ledger.FieldInvalid(name, "is not a file of this organization")
		case f.Purpose != PurposeDisputeEvidence:
			return nil, ledger.FieldInvalid(name, "is a "+f.Purpose+" file; attach files uploaded with purpose dispute.evidence")
		case seen[a.FileID]:
			return nil, ledger.FieldInvalid(name, "is attached twice")
		}
		seen[a.FileID] = true
		if a.Name == "" {
			a.Name = f.Filename
		}
		out = append(out, a)
	}
	return out, nil
}

// dispute returns the feature's part in s and org's dispute with id, or
// the not_found refusal.
func dispute(s *ledger.State, org, id string) (*part, Dispute, *ledger.Error) {
	p := feature.Of(s)
	d, err := p.disputes.Found(org, id, "Dispute")
	return p, d, err
}

func (c *Respond) Apply(s *ledger.State) ledger.Result {
	p, d, err := dispute(s, c.OrgID, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if c.Action != ActionAccept && c.Action != ActionContest {
		return ledger.Result{Err: ledger.FieldInvalid("action", "must be accept or contest")}
	}
	if len(c.Reason) > TextLenMax {
		return ledger.Result{Err: ledger.FieldInvalid("reason", fmt.Sprintf("must be at most %d bytes", TextLenMax))}
	}
	in := make([]Attachment, len(c.FileIDs))
	for i, id := range c.FileIDs {
		in[i] = Attachment{FileID: id}
	}
	atts, err := p.attachments(c.OrgID, "fileIds", in)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if d.Status != StatusOpen {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Can only respond to open disputes; this one is %s", d.Status)}
	}
	if c.Reason != "" || len(atts) > 0 {
		if err := ledger.CheckID(c.MessageID, "dsm_"); err != nil {
			return ledger.Result{Err: err}
		}
		if len(d.Messages) >= MessagesMax {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "The dispute's thread is full (%d messages)", MessagesMax)}
		}
	}
	d.Evidence = Evidence{Action: c.Action, Reason: c.Reason, FileIDs: append([]string(nil), c.FileIDs...)}
	if c.Reason != "" || len(atts) > 0 {
		d = d.withMessage(Message{ID: c.MessageID, AuthorType: AuthorMerchant, Body: c.Reason, Attachments: atts, CreatedAt: s.OrgNow(d.OrgID, c.At)})
	}
	d.UpdatedAt = s.OrgNow(d.OrgID, c.At)
	if c.Action == ActionAccept {
		if err := settle(s, &d, c.At, false, "Accepted by the merchant"); err != nil {
			return ledger.Result{Err: err}
		}
		p.disputes.Put(d)
		s.Emit(c.At, d.OrgID, ledger.EventDisputeClosed, d.ID, d)
		return ledger.Result{Value: &d}
	}
	d.Status = StatusUnderReview
	p.disputes.Put(d)
	s.Emit(c.At, d.OrgID, ledger.EventDisputeUpdated, d.ID, d)
	return ledger.Result{Value: &d}
}

// settle ends a dispute: the hold is released and, when the merchant lost,
// the amount goes back to the collections source.
func settle(s *ledger.State, d *Dispute, at int64, won bool, message string) *ledger.Error {
	a, ok := s.Account(d.AccountNumber)
	if !ok || a.Held < d.Amount {
		panic(fmt.Sprintf("disputes: dispute %s holds %d on %s, which holds %d", d.ID, d.Amount, d.AccountNumber, a.Held))
	}
	if !won {
		postings := []ledger.Posting{
			{Account: a.Number, Type: EntryDebit, Amount: -d.Amount},
			{Account: s.SystemAccount(ledger.PurposeCollectionsSource, d.Currency, at), Type: EntryReversal, Amount: d.Amount},
		}
		if _, err := s.Book(at, d.ID, d.CollectionID, postings); err != nil {
			return err
		}
	}
	s.Hold(d.AccountNumber, -d.Amount)
	if won {
		d.Status = StatusDeclined
	} else {
		d.Status = StatusAccepted
	}
	d.StatusMessage = message
	d.ResolvedAt = s.OrgNow(d.OrgID, at)
	d.UpdatedAt = d.ResolvedAt
	return nil
}

func (c *AddMessage) Apply(s *ledger.State) ledger.Result {
	p, d, err := dispute(s, c.OrgID, c.DisputeID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if err := ledger.CheckID(c.MessageID, "dsm_"); err != nil {
		return ledger.Result{Err: err}
	}
	if c.AuthorType != AuthorMerchant && c.AuthorType != AuthorAdmin {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "author type %q is not merchant or admin", c.AuthorType)}
	}
	if c.Body == "" || len(c.Body) > TextLenMax {
		return ledger.Result{Err: ledger.FieldInvalid("body", fmt.Sprintf("must be 1 to %d bytes", TextLenMax))}
	}
	atts, err := p.attachments(c.OrgID, "attachments", c.Attachments)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if d.Status.Final() {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Cannot add messages to a resolved dispute (%s)", d.Status)}
	}
	if len(d.Messages) >= MessagesMax {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "The dispute's thread is full (%d messages)", MessagesMax)}
	}
	m := Message{ID: c.MessageID, AuthorType: c.AuthorType, Body: c.Body, Attachments: atts, CreatedAt: s.OrgNow(d.OrgID, c.At)}
	d = d.withMessage(m)
	d.UpdatedAt = m.CreatedAt
	p.disputes.Put(d)
	s.Emit(c.At, d.OrgID, ledger.EventDisputeUpdated, d.ID, d)
	return ledger.Result{Value: &posted{dispute: &d, message: &m}}
}

func (c *Resolve) Apply(s *ledger.State) ledger.Result {
	p, d, err := dispute(s, c.OrgID, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if len(c.Message) > TextLenMax {
		return ledger.Result{Err: ledger.FieldInvalid("message", fmt.Sprintf("must be at most %d bytes", TextLenMax))}
	}
	if d.Status.Final() {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "The dispute is already resolved (%s)", d.Status)}
	}
	msg := c.Message
	if msg == "" {
		msg = "Resolved in the merchant's favour; the hold is released"
		if !c.Won {
			msg = "Resolved in the payer's favour; the amount is debited"
		}
	}
	if err := settle(s, &d, c.At, c.Won, msg); err != nil {
		return ledger.Result{Err: err}
	}
	p.disputes.Put(d)
	s.Emit(c.At, d.OrgID, ledger.EventDisputeClosed, d.ID, d)
	return ledger.Result{Value: &d}
}

// Get returns an organization's dispute by id.
func Get(r *ledger.Reader, orgID, id string) (Dispute, bool) {
	return ledger.ReadOwned(r, disputeKind, orgID, id)
}

// List lists an organization's disputes newest first, of one status when
// status is set.
func List(r *ledger.Reader, orgID string, status Status, before ledger.Cursor, limit int) ledger.Page[Dispute] {
	keep := func(d *Dispute) bool { return status == 0 || d.Status == status }
	return ledger.ReadByStatus(r, disputeKind, orgID, status, Status.Final, before, limit, keep)
}
