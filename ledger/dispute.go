package ledger

import (
	"fmt"
	"strings"
)

// DisputeStatus is where a dispute is in its life:
//
//	open ──merchant accepts──────────────────────────▶ accepted (amount debited)
//	  │ └─service rules (won / lost)─────────────────▶ declined / accepted
//	  └──merchant contests──▶ under_review ──service rules (won / lost)──▶ declined / accepted
//
// While a dispute is open or under review its amount is held on the
// merchant's balance: still in Total, not in Available. Accepted (the
// merchant conceded or lost) debits the amount back to the payer's side,
// the collections source; declined (the merchant won) releases the hold.
type DisputeStatus uint8

// Dispute statuses. Values are frozen.
const (
	DisputeOpen        DisputeStatus = 1
	DisputeUnderReview DisputeStatus = 2
	DisputeAccepted    DisputeStatus = 3
	DisputeDeclined    DisputeStatus = 4
)

var disputeStatusNames = [...]string{"", "open", "under_review", "accepted", "declined"}

func (s DisputeStatus) String() string {
	if int(s) < len(disputeStatusNames) {
		return disputeStatusNames[s]
	}
	return "unknown"
}

// Final reports whether the dispute is resolved.
func (s DisputeStatus) Final() bool { return s == DisputeAccepted || s == DisputeDeclined }

// ParseDisputeStatus returns the status with the given API name.
func ParseDisputeStatus(name string) (DisputeStatus, bool) {
	for i := 1; i < len(disputeStatusNames); i++ {
		if disputeStatusNames[i] == name {
			return DisputeStatus(i), true
		}
	}
	return 0, false
}

// DisputeCategories are the categories a dispute may have.
var DisputeCategories = []string{"fraud", "chargeback", "other"}

// Dispute actions a merchant may respond with.
const (
	DisputeActionAccept  = "accept"
	DisputeActionContest = "contest"
)

// Authors of dispute messages.
const (
	AuthorMerchant = "merchant"
	AuthorAdmin    = "admin" // the service
)

// Limits of a dispute, re-checked by Apply.
const (
	DisputeMessagesMax    = 100  // messages in one thread
	DisputeAttachmentsMax = 10   // files on one message or response
	DisputeTextLenMax     = 5000 // bytes of a message body or reason
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

// DisputeMessage is one message of a dispute's thread.
type DisputeMessage struct {
	ID          string
	AuthorType  string
	Body        string
	Attachments []Attachment
	CreatedAt   int64
}

// DisputeEvidence is the merchant's response: empty until they respond.
type DisputeEvidence struct {
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
	Amount        Minor
	Currency      string
	Category      string
	Status        DisputeStatus
	StatusMessage string
	Evidence      DisputeEvidence
	// Messages is the thread, oldest first. A new message makes a new
	// slice: records are never mutated in place (see table).
	Messages []DisputeMessage

	ResolvedAt int64
	CreatedAt  int64
	UpdatedAt  int64
}

// OpenDispute opens a dispute against a completed collection and holds its
// amount on the balance the collection credited. A collection has at most
// one dispute: the same request again is a replay, a different one a
// conflict.
type OpenDispute struct {
	At           int64
	ID           string
	OrgID        string
	CollectionID string
	Amount       Minor
	Category     string
	Reason       string // posted as the service's first message, if set
	MessageID    string
}

// RespondToDispute is the merchant's answer to an open dispute: accept
// (concede; the held amount is debited) or contest (under review, with
// evidence; the reason is posted as a message).
type RespondToDispute struct {
	At        int64
	ID        string
	OrgID     string
	Action    string
	Reason    string
	FileIDs   []string
	MessageID string
}

// AddDisputeMessage posts to a dispute's thread.
type AddDisputeMessage struct {
	At          int64
	DisputeID   string
	OrgID       string
	MessageID   string
	AuthorType  string
	Body        string
	Attachments []Attachment
}

// ResolveDispute ends a dispute by the service's ruling: won releases the
// hold, lost debits the amount.
type ResolveDispute struct {
	At      int64
	ID      string
	OrgID   string
	Won     bool
	Message string
}

// Command kinds of disputes. Frozen.
const (
	KindOpenDispute       Kind = 57
	KindRespondToDispute  Kind = 58
	KindAddDisputeMessage Kind = 59
	KindResolveDispute    Kind = 60
)

func (*OpenDispute) Kind() Kind       { return KindOpenDispute }
func (*RespondToDispute) Kind() Kind  { return KindRespondToDispute }
func (*AddDisputeMessage) Kind() Kind { return KindAddDisputeMessage }
func (*ResolveDispute) Kind() Kind    { return KindResolveDispute }

// SubjectDispute tags dispute events' subjects. Frozen.
const SubjectDispute SubjectKind = 22

func (Dispute) SubjectKind() SubjectKind { return SubjectDispute }

// Entry types of disputes: the merchant's debit when a dispute is lost, and
// the collections source taking the amount back. Frozen.
const (
	EntryDisputeDebit    EntryType = 50
	EntryDisputeReversal EntryType = 51
)

func init() {
	registerEntryType(EntryDisputeDebit, "dispute_debit", "dispute")
	registerEntryType(EntryDisputeReversal, "dispute_reversal", "dispute")
	registerFields[OpenDispute](KindOpenDispute)
	registerFields[RespondToDispute](KindRespondToDispute)
	RegisterCommand(KindAddDisputeMessage, func(d *Decoder) Command {
		return &AddDisputeMessage{At: d.varint(), DisputeID: d.str(), OrgID: d.str(), MessageID: d.str(),
			AuthorType: d.str(), Body: d.str(), Attachments: decodeAttachments(d)}
	})
	registerFields[ResolveDispute](KindResolveDispute)
	registerSubject(SubjectDispute,
		func(e *Encoder, s Subject) { v := s.(Dispute); encodeDispute(e, &v) },
		func(d *Decoder) Subject { return decodeDispute(d) })
}

func (c *OpenDispute) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.CollectionID)
	f.Minor(&c.Amount)
	f.Str(&c.Category)
	f.Str(&c.Reason)
	f.Str(&c.MessageID)
}

func (c *OpenDispute) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *RespondToDispute) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Action)
	f.Str(&c.Reason)
	f.Strs(&c.FileIDs)
	f.Str(&c.MessageID)
}

func (c *RespondToDispute) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *AddDisputeMessage) Encode(e *Encoder) {
	e.varint(c.At)
	e.str(c.DisputeID)
	e.str(c.OrgID)
	e.str(c.MessageID)
	e.str(c.AuthorType)
	e.str(c.Body)
	encodeAttachments(e, c.Attachments)
}

func (c *ResolveDispute) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Bool(&c.Won)
	f.Str(&c.Message)
}

func (c *ResolveDispute) Encode(e *Encoder) { c.fields(e.Codec()) }

func encodeAttachments(e *Encoder, as []Attachment) {
	e.uvarint(uint64(len(as)))
	for _, a := range as {
		e.str(a.FileID)
		e.str(a.Name)
	}
}

func decodeAttachments(d *Decoder) []Attachment {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]Attachment, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, Attachment{FileID: d.str(), Name: d.str()})
	}
	return out
}

func encodeDispute(e *Encoder, v *Dispute) {
	e.str(v.ID)
	e.str(v.OrgID)
	e.str(v.CollectionID)
	e.str(v.AccountNumber)
	e.minor(v.Amount)
	e.str(v.Currency)
	e.str(v.Category)
	e.u8(uint8(v.Status))
	e.str(v.StatusMessage)
	e.str(v.Evidence.Action)
	e.str(v.Evidence.Reason)
	e.strs(v.Evidence.FileIDs)
	e.uvarint(uint64(len(v.Messages)))
	for _, m := range v.Messages {
		e.str(m.ID)
		e.str(m.AuthorType)
		e.str(m.Body)
		encodeAttachments(e, m.Attachments)
		e.varint(m.CreatedAt)
	}
	e.varint(v.ResolvedAt)
	e.varint(v.CreatedAt)
	e.varint(v.UpdatedAt)
}

func decodeDispute(d *Decoder) Dispute {
	v := Dispute{ID: d.str(), OrgID: d.str(), CollectionID: d.str(), AccountNumber: d.str(), Amount: d.minor(),
		Currency: d.str(), Category: d.str(), Status: DisputeStatus(d.u8()), StatusMessage: d.str()}
	v.Evidence = DisputeEvidence{Action: d.str(), Reason: d.str(), FileIDs: d.strs()}
	if n := d.count(); n > 0 {
		v.Messages = make([]DisputeMessage, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			v.Messages = append(v.Messages, DisputeMessage{ID: d.str(), AuthorType: d.str(), Body: d.str(),
				Attachments: decodeAttachments(d), CreatedAt: d.varint()})
		}
	}
	v.ResolvedAt, v.CreatedAt, v.UpdatedAt = d.varint(), d.varint(), d.varint()
	return v
}

// disputeKind: a dispute stays open until it is resolved. A collection has
// at most one, found by the collection's id.
var disputeKind = &kind[Dispute]{
	tag: tagDispute, name: "dispute",
	id:  func(v *Dispute) (string, string) { return v.ID, v.OrgID },
	enc: encodeDispute, dec: decodeDispute,
	open: func(v *Dispute) bool { return !v.Status.Final() },
	lookups: []lookup[Dispute]{
		{name: indexParent, key: func(v *Dispute) string { return v.CollectionID }},
	},
	filters: []filter[Dispute]{
		{indexStatus, func(v *Dispute) string { return terminalName(v.Status.Final(), v.Status.String()) }},
	},
}

// withMessage returns the dispute with m appended to a fresh copy of its
// thread, so a snapshot reading the old record never sees the new message.
func (v Dispute) withMessage(m DisputeMessage) Dispute {
	msgs := make([]DisputeMessage, len(v.Messages), len(v.Messages)+1)
	copy(msgs, v.Messages)
	v.Messages = append(msgs, m)
	return v
}

func validCategory(c string) bool {
	for _, k := range DisputeCategories {
		if k == c {
			return true
		}
	}
	return false
}

func (c *OpenDispute) Apply(s *State) Result {
	if err := CheckID(c.ID, "dsp_"); err != nil {
		return Result{Err: err}
	}
	if c.Reason != "" {
		if err := CheckID(c.MessageID, "dsm_"); err != nil {
			return Result{Err: err}
		}
	}
	col, ok := s.collections.get(c.CollectionID)
	if !ok || col.OrgID != c.OrgID {
		return Result{Err: Errorf(CodeNotFound, "Collection not found")}
	}
	if !validCategory(c.Category) {
		return Result{Err: FieldInvalid("category", "must be one of fraud, chargeback, other")}
	}
	if len(c.Reason) > DisputeTextLenMax {
		return Result{Err: FieldInvalid("reason", fmt.Sprintf("must be at most %d bytes", DisputeTextLenMax))}
	}
	if d, ok := s.disputes.find(indexParent, c.CollectionID); ok {
		if d.Amount == c.Amount && d.Category == c.Category {
			return Result{Replayed: true, Dispute: &d}
		}
		return Result{Err: Errorf(CodeConflict, "Collection %s already has dispute %s with a different amount or category", col.ID, d.ID)}
	}
	if col.Status != CollectionCompleted {
		return Result{Err: Errorf(CodeBadRequest, "Only completed collections can be disputed; %s is %s", col.ID, col.Status)}
	}
	if c.Amount <= 0 || c.Amount > col.Spec.Amount {
		return Result{Err: FieldInvalid("amount", "must be more than zero and at most the collection's amount")}
	}
	if _, dup := s.disputes.get(c.ID); dup {
		return Result{Err: Errorf(CodeConflict, "dispute %s already exists", c.ID)}
	}
	// The hold must leave the available balance non-negative: the money
	// may already have left in payouts.
	a, ok := s.accounts.get(col.AccountNumber)
	if !ok {
		panic("ledger: completed collection without its account " + col.AccountNumber)
	}
	if a.Available() < c.Amount {
		e := InsufficientFunds(a.Available(), c.Amount, a.Currency)
		e.Message = "Insufficient funds: the available balance cannot hold the disputed amount"
		return Result{Err: e}
	}
	a.Held += c.Amount
	s.accounts.put(a)
	now := s.OrgNow(c.OrgID, c.At)
	d := Dispute{
		ID: c.ID, OrgID: c.OrgID, CollectionID: col.ID, AccountNumber: a.Number,
		Amount: c.Amount, Currency: col.Spec.Currency, Category: c.Category,
		Status: DisputeOpen, CreatedAt: now, UpdatedAt: now,
	}
	if c.Reason != "" {
		d = d.withMessage(DisputeMessage{ID: c.MessageID, AuthorType: AuthorAdmin, Body: c.Reason, CreatedAt: now})
	}
	s.disputes.insert(d)
	s.emit(c.At, d.OrgID, EventDisputeCreated, d.ID, d)
	return Result{Dispute: &d}
}

// attachments checks file ids: each an evidence file of the organization,
// at most DisputeAttachmentsMax, none twice. Names default to the file's.
func (s *State) attachments(orgID, field string, in []Attachment) ([]Attachment, *Error) {
	if len(in) > DisputeAttachmentsMax {
		return nil, FieldInvalid(field, fmt.Sprintf("must have at most %d files", DisputeAttachmentsMax))
	}
	out := make([]Attachment, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, a := range in {
		name := fmt.Sprintf("%s[%d]", field, i)
		if _, linked := a.URL(); linked {
			// Checked by the caller (an https URL and a name); here only
			// that it is not given twice.
			if a.Name == "" || seen[a.FileID] {
				return nil, FieldInvalid(name, "needs a name and must not be attached twice")
			}
			seen[a.FileID] = true
			out = append(out, a)
			continue
		}
		f, ok := s.files.owned(orgID, a.FileID)
		switch {
		case !ok:
			return nil, FieldInvalid(name, "is not a file of this organization")
		case f.Purpose != PurposeDisputeEvidence:
			return nil, FieldInvalid(name, "is a "+f.Purpose+" file; attach files uploaded with purpose dispute.evidence")
		case seen[a.FileID]:
			return nil, FieldInvalid(name, "is attached twice")
		}
		seen[a.FileID] = true
		if a.Name == "" {
			a.Name = f.Filename
		}
		out = append(out, a)
	}
	return out, nil
}

func (c *RespondToDispute) Apply(s *State) Result {
	d, ok := s.disputes.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Dispute not found")}
	}
	if c.Action != DisputeActionAccept && c.Action != DisputeActionContest {
		return Result{Err: FieldInvalid("action", "must be accept or contest")}
	}
	if len(c.Reason) > DisputeTextLenMax {
		return Result{Err: FieldInvalid("reason", fmt.Sprintf("must be at most %d bytes", DisputeTextLenMax))}
	}
	in := make([]Attachment, len(c.FileIDs))
	for i, id := range c.FileIDs {
		in[i] = Attachment{FileID: id}
	}
	atts, err := s.attachments(c.OrgID, "fileIds", in)
	if err != nil {
		return Result{Err: err}
	}
	if d.Status != DisputeOpen {
		return Result{Err: Errorf(CodeBadRequest, "Can only respond to open disputes; this one is %s", d.Status)}
	}
	if c.Reason != "" || len(atts) > 0 {
		if err := CheckID(c.MessageID, "dsm_"); err != nil {
			return Result{Err: err}
		}
		if len(d.Messages) >= DisputeMessagesMax {
			return Result{Err: Errorf(CodeBadRequest, "The dispute's thread is full (%d messages)", DisputeMessagesMax)}
		}
	}
	d.Evidence = DisputeEvidence{Action: c.Action, Reason: c.Reason, FileIDs: append([]string(nil), c.FileIDs...)}
	if c.Reason != "" || len(atts) > 0 {
		d = d.withMessage(DisputeMessage{ID: c.MessageID, AuthorType: AuthorMerchant, Body: c.Reason, Attachments: atts, CreatedAt: s.OrgNow(d.OrgID, c.At)})
	}
	d.UpdatedAt = s.OrgNow(d.OrgID, c.At)
	if c.Action == DisputeActionAccept {
		if err := s.settleDispute(&d, c.At, false, "Accepted by the merchant"); err != nil {
			return Result{Err: err}
		}
		s.disputes.put(d)
		s.emit(c.At, d.OrgID, EventDisputeClosed, d.ID, d)
		return Result{Dispute: &d}
	}
	d.Status = DisputeUnderReview
	s.disputes.put(d)
	s.emit(c.At, d.OrgID, EventDisputeUpdated, d.ID, d)
	return Result{Dispute: &d}
}

// settleDispute ends a dispute: the hold is released and, when the merchant
// lost, the amount goes back to the collections source.
func (s *State) settleDispute(d *Dispute, at int64, won bool, message string) *Error {
	a, ok := s.accounts.get(d.AccountNumber)
	if !ok || a.Held < d.Amount {
		panic(fmt.Sprintf("ledger: dispute %s holds %d on %s, which holds %d", d.ID, d.Amount, d.AccountNumber, a.Held))
	}
	if !won {
		postings := []posting{
			{a.Number, EntryDisputeDebit, -d.Amount},
			{s.systemAccount(PurposeCollectionsSource, d.Currency, at), EntryDisputeReversal, d.Amount},
		}
		if _, err := s.book(at, d.ID, d.CollectionID, postings); err != nil {
			return err
		}
		a, _ = s.accounts.get(d.AccountNumber)
	}
	a.Held -= d.Amount
	s.accounts.put(a)
	if won {
		d.Status = DisputeDeclined
	} else {
		d.Status = DisputeAccepted
	}
	d.StatusMessage = message
	d.ResolvedAt = s.OrgNow(d.OrgID, at)
	d.UpdatedAt = d.ResolvedAt
	return nil
}

func (c *AddDisputeMessage) Apply(s *State) Result {
	d, ok := s.disputes.owned(c.OrgID, c.DisputeID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Dispute not found")}
	}
	if err := CheckID(c.MessageID, "dsm_"); err != nil {
		return Result{Err: err}
	}
	if c.AuthorType != AuthorMerchant && c.AuthorType != AuthorAdmin {
		return Result{Err: Errorf(CodeValidation, "author type %q is not merchant or admin", c.AuthorType)}
	}
	if c.Body == "" || len(c.Body) > DisputeTextLenMax {
		return Result{Err: FieldInvalid("body", fmt.Sprintf("must be 1 to %d bytes", DisputeTextLenMax))}
	}
	atts, err := s.attachments(c.OrgID, "attachments", c.Attachments)
	if err != nil {
		return Result{Err: err}
	}
	if d.Status.Final() {
		return Result{Err: Errorf(CodeBadRequest, "Cannot add messages to a resolved dispute (%s)", d.Status)}
	}
	if len(d.Messages) >= DisputeMessagesMax {
		return Result{Err: Errorf(CodeBadRequest, "The dispute's thread is full (%d messages)", DisputeMessagesMax)}
	}
	m := DisputeMessage{ID: c.MessageID, AuthorType: c.AuthorType, Body: c.Body, Attachments: atts, CreatedAt: s.OrgNow(d.OrgID, c.At)}
	d = d.withMessage(m)
	d.UpdatedAt = m.CreatedAt
	s.disputes.put(d)
	s.emit(c.At, d.OrgID, EventDisputeUpdated, d.ID, d)
	return Result{Dispute: &d, DisputeMessage: &m}
}

func (c *ResolveDispute) Apply(s *State) Result {
	d, ok := s.disputes.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Dispute not found")}
	}
	if len(c.Message) > DisputeTextLenMax {
		return Result{Err: FieldInvalid("message", fmt.Sprintf("must be at most %d bytes", DisputeTextLenMax))}
	}
	if d.Status.Final() {
		return Result{Err: Errorf(CodeBadRequest, "The dispute is already resolved (%s)", d.Status)}
	}
	msg := c.Message
	if msg == "" {
		msg = "Resolved in the merchant's favour; the hold is released"
		if !c.Won {
			msg = "Resolved in the payer's favour; the amount is debited"
		}
	}
	if err := s.settleDispute(&d, c.At, c.Won, msg); err != nil {
		return Result{Err: err}
	}
	s.disputes.put(d)
	s.emit(c.At, d.OrgID, EventDisputeClosed, d.ID, d)
	return Result{Dispute: &d}
}

// Dispute returns an organization's dispute by id.
func (r *Reader) Dispute(orgID, id string) (Dispute, bool) {
	return readOwned(r, disputeKind, orgID, id)
}

// Disputes lists an organization's disputes newest first, of one status
// when status is set.
func (r *Reader) Disputes(orgID string, status DisputeStatus, before Cursor, limit int) Page[Dispute] {
	k := disputeKind
	prefix := k.listPrefix(orgID)
	switch {
	case status.Final():
		prefix = k.filterPrefix(indexStatus, orgID, status.String())
	case status != 0:
		prefix = k.openPrefix(orgID)
	}
	return readPage(r, k, prefix, before, limit, func(d *Dispute) bool { return status == 0 || d.Status == status })
}
