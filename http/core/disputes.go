package core

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

// Disputes: opened by the service against a completed collection (on the
// sandbox, by a simulation), answered by the merchant, resolved by the
// service. Every change is one ledger command; the hold on the balance and
// the events move with it.

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodGet, "/v1/disputes", ledger.ScopeDisputesRead, (*call).listDisputes, nil},
		endpoint{fasthttp.MethodGet, "/v1/disputes/{id}", ledger.ScopeDisputesRead, (*call).getDispute, nil},
		endpoint{fasthttp.MethodPost, "/v1/disputes/{id}/respond", ledger.ScopeDisputesWrite, (*call).respondToDispute, nil},
		endpoint{fasthttp.MethodPost, "/v1/disputes/{id}/messages", ledger.ScopeDisputesWrite, (*call).addDisputeMessage, nil},
		endpoint{fasthttp.MethodPost, "/v1/simulations/dispute-open", ledger.ScopeSimulationsWrite, (*call).simulateDisputeOpen, &simulationDoc{
			operation:   "open_dispute",
			description: "Opens a dispute against a completed collection of the caller and holds its amount (default: the whole collection) on the balance; the same collection again replays it.",
		}},
		endpoint{fasthttp.MethodPost, "/v1/simulations/dispute-resolve", ledger.ScopeSimulationsWrite, (*call).simulateDisputeResolve, &simulationDoc{
			operation:   "resolve_dispute",
			description: "Resolves an open or under-review dispute: won releases the hold (status declined), lost debits the amount (status accepted).",
			outcomes:    []string{"won", "lost"},
		}},
	)
}

const listDisputes listKind = 'D'

type disputeJSON struct {
	ID             string                `json:"id"`
	OrganizationID string                `json:"organizationId"`
	CollectionID   string                `json:"collectionId"`
	Amount         string                `json:"amount"`
	Currency       string                `json:"currency"`
	Category       string                `json:"category"`
	Status         string                `json:"status"`
	StatusMessage  *string               `json:"statusMessage"`
	Evidence       any                   `json:"evidence"`
	ResolvedAt     *string               `json:"resolvedAt"`
	CreatedAt      string                `json:"createdAt"`
	UpdatedAt      string                `json:"updatedAt"`
	Messages       *[]disputeMessageJSON `json:"messages,omitempty"`
}

type evidenceJSON struct {
	Action  string   `json:"action"`
	Reason  string   `json:"reason"`
	FileIDs []string `json:"fileIds"`
}

type disputeMessageJSON struct {
	ID          string           `json:"id"`
	AuthorType  string           `json:"authorType"`
	Body        string           `json:"body"`
	Attachments []attachmentJSON `json:"attachments"`
	CreatedAt   string           `json:"createdAt"`
}

type attachmentJSON struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	FileID string `json:"fileId,omitempty"` // absent on a linked document
}

type disputeBody struct {
	Dispute disputeJSON `json:"dispute"`
}

type disputeMessageBody struct {
	Message disputeMessageJSON `json:"message"`
}

func renderDispute(d *ledger.Dispute) disputeJSON {
	var evidence any = struct{}{}
	if d.Evidence.Action != "" {
		ids := d.Evidence.FileIDs
		if ids == nil {
			ids = []string{}
		}
		evidence = evidenceJSON{Action: d.Evidence.Action, Reason: d.Evidence.Reason, FileIDs: ids}
	}
	return disputeJSON{
		ID: d.ID, OrganizationID: d.OrgID, CollectionID: d.CollectionID,
		Amount: money(d.Amount, d.Currency), Currency: d.Currency, Category: d.Category,
		Status: d.Status.String(), StatusMessage: optional(d.StatusMessage), Evidence: evidence,
		ResolvedAt: optionalTimestamp(d.ResolvedAt), CreatedAt: timestamp(d.CreatedAt), UpdatedAt: timestamp(d.UpdatedAt),
	}
}

// threadRenderer renders messages with fresh signed URLs for attachments.
type threadRenderer struct {
	sign  urlSigner
	files func(id string) (ledger.File, bool)
}

func (c *call) threadRenderer(st *ledger.Reader) threadRenderer {
	return threadRenderer{sign: c.signer(st), files: func(id string) (ledger.File, bool) { return st.File(c.org, id) }}
}

func (t threadRenderer) message(m *ledger.DisputeMessage) disputeMessageJSON {
	out := disputeMessageJSON{ID: m.ID, AuthorType: m.AuthorType, Body: m.Body,
		Attachments: make([]attachmentJSON, 0, len(m.Attachments)), CreatedAt: timestamp(m.CreatedAt)}
	for _, a := range m.Attachments {
		if link, ok := a.URL(); ok {
			out.Attachments = append(out.Attachments, attachmentJSON{Name: a.Name, URL: link})
			continue
		}
		att := attachmentJSON{Name: a.Name, FileID: a.FileID}
		if f, ok := t.files(a.FileID); ok {
			att.URL = t.sign.url(&f)
		}
		out.Attachments = append(out.Attachments, att)
	}
	return out
}

func (t threadRenderer) withThread(d *ledger.Dispute) disputeJSON {
	out := renderDispute(d)
	msgs := make([]disputeMessageJSON, 0, len(d.Messages))
	for i := range d.Messages {
		msgs = append(msgs, t.message(&d.Messages[i]))
	}
	out.Messages = &msgs
	return out
}

// renderWithThread renders a dispute from a command's result, its thread
// included, under the read lock (for the files of its attachments).
func (c *call) renderWithThread(d *ledger.Dispute) *disputeBody {
	var body disputeBody
	body.Dispute = c.threadRenderer(c.s.cfg.Actors.Reader()).withThread(d)
	return &body
}

// listDisputes: GET /v1/disputes, newest first, without threads.
func (c *call) listDisputes() {
	limit, before, e := pageParams(c.ctx, listDisputes, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var status ledger.DisputeStatus
	if v, ok := query(c.ctx, "status"); ok {
		if status, ok = ledger.ParseDisputeStatus(v); !ok {
			c.fail(ledger.FieldInvalid("status", "must be one of open, under_review, accepted, declined"))
			return
		}
	}
	var page ledger.Page[ledger.Dispute]
	page = c.s.cfg.Actors.Reader().Disputes(c.org, status, before, limit)
	c.ok(fasthttp.StatusOK, newList(listDisputes, page, renderDispute))
}

// getDispute: GET /v1/disputes/{id}, with its thread oldest first.
func (c *call) getDispute() {
	if d, ok := lookup(c, "id", "Dispute", func(st *ledger.Reader, id string) (disputeJSON, bool) {
		d, ok := st.Dispute(c.org, id)
		if !ok {
			return disputeJSON{}, false
		}
		return c.threadRenderer(st).withThread(&d), true
	}); ok {
		c.ok(fasthttp.StatusOK, &disputeBody{d})
	}
}

type respondRequestBody struct {
	Action  *string  `json:"action"`
	Reason  *string  `json:"reason"`
	FileIDs []string `json:"fileIds"`
}

// Limits of dispute text, in characters (the ledger bounds bytes).
const disputeTextLenMax = 2000

// respondToDispute: POST /v1/disputes/{id}/respond.
func (c *call) respondToDispute() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	var req respondRequestBody
	if !c.decode(&req) {
		return
	}
	var p problems
	action := p.text("action", req.Action, true, 16)
	if action != "" && action != ledger.DisputeActionAccept && action != ledger.DisputeActionContest {
		p.add("action", "must be accept or contest")
	}
	reason := p.text("reason", req.Reason, false, disputeTextLenMax)
	if len(req.FileIDs) > ledger.DisputeAttachmentsMax {
		p.add("fileIds", "must have at most 10 file ids")
	}
	for i, id := range req.FileIDs {
		if !strings.HasPrefix(id, "file_") {
			p.add("fileIds."+strconv.Itoa(i), "must be a file id (file_…)")
		}
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.RespondToDispute(c.caller(), app.DisputeResponse{DisputeID: id, Action: action, Reason: reason, FileIDs: req.FileIDs})
	c.reply(r, fasthttp.StatusOK, func(res *ledger.Result) any { return c.renderWithThread(res.Dispute) })
}

// attachmentURLLenMax bounds a linked document's URL, in characters.
const attachmentURLLenMax = 2048

type messageRequestBody struct {
	Body        *string `json:"body"`
	Attachments []struct {
		FileID *string `json:"fileId"`
		Name   *string `json:"name"`
		URL    *string `json:"url"`
	} `json:"attachments"`
}

// addDisputeMessage: POST /v1/disputes/{id}/messages.
func (c *call) addDisputeMessage() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	var req messageRequestBody
	if !c.decode(&req) {
		return
	}
	var p problems
	text := p.text("body", req.Body, true, disputeTextLenMax)
	if len(req.Attachments) > ledger.DisputeAttachmentsMax {
		p.add("attachments", "must have at most 10 files")
		req.Attachments = nil
	}
	atts := make([]ledger.Attachment, 0, len(req.Attachments))
	for i, a := range req.Attachments {
		field := "attachments[" + strconv.Itoa(i) + "]"
		// The reference's {name, url} links a document; {fileId, name?}
		// attaches one of the organization's files, and so does the
		// reference's {fileId, name, url}, an attachment as messages show
		// it: its url is the file's download link (or empty), made afresh
		// at every read, so it is checked for size and not kept.
		if a.FileID == nil && a.URL != nil {
			name := p.text(field+".name", a.Name, true, fileNameLenMax)
			link := p.text(field+".url", a.URL, true, attachmentURLLenMax)
			if u, err := url.Parse(link); link != "" && (err != nil || u.Scheme != "https" || u.Host == "") {
				p.add(field+".url", "must be an https URL")
			}
			atts = append(atts, ledger.LinkedAttachment(name, link))
			continue
		}
		p.text(field+".url", a.URL, false, attachmentURLLenMax)
		fileID := p.text(field+".fileId", a.FileID, true, 64)
		if fileID != "" && !strings.HasPrefix(fileID, "file_") {
			p.add(field+".fileId", "must be a file id (file_…)")
		}
		name := p.text(field+".name", a.Name, false, fileNameLenMax)
		atts = append(atts, ledger.Attachment{FileID: fileID, Name: name})
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.AddDisputeMessage(c.caller(), app.DisputeMessage{DisputeID: id, Body: text, Attachments: atts})
	c.created(r, func(res *ledger.Result) any {
		var body disputeMessageBody
		body.Message = c.threadRenderer(c.s.cfg.Actors.Reader()).message(res.DisputeMessage)
		return &body
	})
}

type disputeOpenRequestBody struct {
	CollectionID *string `json:"collectionId"`
	Amount       amount  `json:"amount"`
	Category     *string `json:"category"`
	Reason       *string `json:"reason"`
}

type disputeSimulationBody struct {
	Simulation disputeSimulationJSON `json:"simulation"`
}

type disputeSimulationJSON struct {
	Type     string      `json:"type"`
	Outcome  string      `json:"outcome,omitempty"`
	Replayed bool        `json:"replayed"`
	Dispute  disputeJSON `json:"dispute"`
}

// simulateDisputeOpen: POST /v1/simulations/dispute-open.
func (c *call) simulateDisputeOpen() {
	if !c.sandboxOnly() {
		return
	}
	var req disputeOpenRequestBody
	if !c.decode(&req) {
		return
	}
	var p problems
	colID := p.text("collectionId", req.CollectionID, true, 64)
	category := p.text("category", req.Category, false, 16)
	if category == "" {
		category = "fraud"
	} else if category != "fraud" && category != "chargeback" && category != "other" {
		p.add("category", "must be one of fraud, chargeback, other")
	}
	reason := p.text("reason", req.Reason, false, disputeTextLenMax)
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	in := app.DisputeOpening{CollectionID: colID, Category: category, Reason: reason}
	if req.Amount.set {
		in.Amount = &req.Amount.text
	}
	r := c.s.cfg.App.OpenDispute(c.caller(), in)
	c.created(r, func(res *ledger.Result) any {
		return &disputeSimulationBody{disputeSimulationJSON{Type: "open_dispute", Replayed: res.Replayed,
			Dispute: c.renderWithThread(res.Dispute).Dispute}}
	})
}

type disputeResolveRequestBody struct {
	DisputeID *string `json:"disputeId"`
	Outcome   *string `json:"outcome"`
	Message   *string `json:"message"`
}

// simulateDisputeResolve: POST /v1/simulations/dispute-resolve.
func (c *call) simulateDisputeResolve() {
	if !c.sandboxOnly() {
		return
	}
	var req disputeResolveRequestBody
	if !c.decode(&req) {
		return
	}
	var p problems
	id := p.text("disputeId", req.DisputeID, true, 64)
	outcome := p.text("outcome", req.Outcome, true, 8)
	if outcome != "" && outcome != "won" && outcome != "lost" {
		p.add("outcome", "must be won or lost")
	}
	message := p.text("message", req.Message, false, disputeTextLenMax)
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.ResolveDispute(c.caller(), id, outcome == "won", message)
	c.reply(r, fasthttp.StatusOK, func(res *ledger.Result) any {
		return &disputeSimulationBody{disputeSimulationJSON{Type: "resolve_dispute", Outcome: outcome,
			Dispute: c.renderWithThread(res.Dispute).Dispute}}
	})
}
