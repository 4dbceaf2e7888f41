package admin

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/disputes"
)

// Disputes: opened by the service against a completed collection (on the
// sandbox, by a simulation), answered by the merchant, resolved by the
// service. Every change is one ledger command; the hold on the balance and
// the events move with it.

func init() {
	core.RegisterRoutes(core.Resource("/v1/disputes", ledger.ScopeDisputesRead, ledger.ScopeDisputesWrite, core.Handlers{
		List: listDisputes, Get: getDispute,
	})...)
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/disputes/{id}/respond", Scope: ledger.ScopeDisputesWrite, H: respondToDispute},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/disputes/{id}/messages", Scope: ledger.ScopeDisputesWrite, H: addDisputeMessage},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/dispute-open", Scope: ledger.ScopeSimulationsWrite, H: simulateDisputeOpen, Sim: &core.SimulationDoc{
			Operation:   "open_dispute",
			Description: "Opens a dispute against a completed collection of the caller and holds its amount (default: the whole collection) on the balance; the same collection again replays it.",
		}},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/dispute-resolve", Scope: ledger.ScopeSimulationsWrite, H: simulateDisputeResolve, Sim: &core.SimulationDoc{
			Operation:   "resolve_dispute",
			Description: "Resolves an open or under-review dispute: won releases the hold (status declined), lost debits the amount (status accepted).",
			Outcomes:    []string{"won", "lost"},
		}},
	)
}

const listDisputesKind core.ListKind = 'D'

type disputeJSON struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organizationId"`
	CollectionID   string `json:"collectionId"`
	core.MoneyJSON
	Category      string                `json:"category"`
	Status        string                `json:"status"`
	StatusMessage *string               `json:"statusMessage"`
	Evidence      any                   `json:"evidence"`
	ResolvedAt    *string               `json:"resolvedAt"`
	CreatedAt     string                `json:"createdAt"`
	UpdatedAt     string                `json:"updatedAt"`
	Messages      *[]disputeMessageJSON `json:"messages,omitempty"`
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

func renderDispute(d *disputes.Dispute) disputeJSON {
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
		MoneyJSON: core.MoneyOf(d.Amount, d.Currency), Category: d.Category,
		Status: d.Status.String(), StatusMessage: core.Optional(d.StatusMessage), Evidence: evidence,
		ResolvedAt: core.OptionalTimestamp(d.ResolvedAt), CreatedAt: core.Timestamp(d.CreatedAt), UpdatedAt: core.Timestamp(d.UpdatedAt),
	}
}

// threadRenderer renders messages with fresh signed URLs for attachments.
type threadRenderer struct {
	sign  urlSigner
	files func(id string) (disputes.File, bool)
}

func threads(c *core.Call, st *ledger.Reader) threadRenderer {
	return threadRenderer{sign: signer(c, st), files: func(id string) (disputes.File, bool) { return disputes.GetFile(st, c.Org, id) }}
}

func (t threadRenderer) message(m *disputes.Message) disputeMessageJSON {
	out := disputeMessageJSON{ID: m.ID, AuthorType: m.AuthorType, Body: m.Body,
		Attachments: make([]attachmentJSON, 0, len(m.Attachments)), CreatedAt: core.Timestamp(m.CreatedAt)}
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

func (t threadRenderer) withThread(d *disputes.Dispute) disputeJSON {
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
func renderWithThread(c *core.Call, d *disputes.Dispute) *disputeBody {
	var body disputeBody
	body.Dispute = threads(c, c.Server.Config.Actors.Reader()).withThread(d)
	return &body
}

// listDisputes: GET /v1/disputes, newest first, without threads.
func listDisputes(c *core.Call) {
	core.List(c, listDisputesKind, core.StatusFilter(disputes.ParseStatus, "must be one of open, under_review, accepted, declined"),
		disputes.List, renderDispute)
}

// getDispute: GET /v1/disputes/{id}, with its thread oldest first.
func getDispute(c *core.Call) {
	core.Get(c, "id", "Dispute", func(st *ledger.Reader, org, id string) (disputeJSON, bool) {
		d, ok := disputes.Get(st, org, id)
		if !ok {
			return disputeJSON{}, false
		}
		return threads(c, st).withThread(&d), true
	}, func(d *disputeJSON) *disputeBody { return &disputeBody{*d} })
}

type respondRequestBody struct {
	Action  *string  `json:"action"`
	Reason  *string  `json:"reason"`
	FileIDs []string `json:"fileIds"`
}

// Limits of dispute text, in characters (the ledger bounds bytes).
const disputeTextLenMax = 2000

// respondToDispute: POST /v1/disputes/{id}/respond.
func respondToDispute(c *core.Call) {
	core.Update(c, "id", disputeResponse, c.Server.Config.App.RespondToDispute, func(res *ledger.Result) any { return renderWithThread(c, disputes.Of(*res)) })
}

// disputeResponse checks a dispute response's shape, reporting every
// problem at once.
func disputeResponse(id string, req *respondRequestBody) (app.DisputeResponse, *ledger.Error) {
	var p core.Problems
	action := p.Text("action", req.Action, true, 16)
	if action != "" && action != disputes.ActionAccept && action != disputes.ActionContest {
		p.Add("action", "must be accept or contest")
	}
	reason := p.Text("reason", req.Reason, false, disputeTextLenMax)
	if len(req.FileIDs) > disputes.AttachmentsMax {
		p.Add("fileIds", "must have at most 10 file ids")
	}
	for i, fileID := range req.FileIDs {
		if !strings.HasPrefix(fileID, "file_") {
			p.Add("fileIds."+strconv.Itoa(i), "must be a file id (file_…)")
		}
	}
	return app.DisputeResponse{DisputeID: id, Action: action, Reason: reason, FileIDs: req.FileIDs}, p.Err()
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
func addDisputeMessage(c *core.Call) {
	in, ok := core.ParamInput(c, "id", disputeMessage)
	if !ok {
		return
	}
	c.Created(c.Server.Config.App.AddDisputeMessage(c.Caller(), in), func(res *ledger.Result) any {
		var body disputeMessageBody
		body.Message = threads(c, c.Server.Config.Actors.Reader()).message(disputes.MessageOf(*res))
		return &body
	})
}

// disputeMessage checks a dispute message's shape, reporting every problem
// at once.
func disputeMessage(id string, req *messageRequestBody) (app.DisputeMessage, *ledger.Error) {
	var p core.Problems
	text := p.Text("body", req.Body, true, disputeTextLenMax)
	if len(req.Attachments) > disputes.AttachmentsMax {
		p.Add("attachments", "must have at most 10 files")
		req.Attachments = nil
	}
	atts := make([]disputes.Attachment, 0, len(req.Attachments))
	for i, a := range req.Attachments {
		field := "attachments[" + strconv.Itoa(i) + "]"
		// The reference's {name, url} links a document; {fileId, name?}
		// attaches one of the organization's files, and so does the
		// reference's {fileId, name, url}, an attachment as messages show
		// it: its url is the file's download link (or empty), made afresh
		// at every read, so it is checked for size and not kept.
		if a.FileID == nil && a.URL != nil {
			name := p.Text(field+".name", a.Name, true, core.FileNameLenMax)
			link := p.Text(field+".url", a.URL, true, attachmentURLLenMax)
			if u, err := url.Parse(link); link != "" && (err != nil || u.Scheme != "https" || u.Host == "") {
				p.Add(field+".url", "must be an https URL")
			}
			atts = append(atts, disputes.LinkedAttachment(name, link))
			continue
		}
		p.Text(field+".url", a.URL, false, attachmentURLLenMax)
		fileID := p.Text(field+".fileId", a.FileID, true, 64)
		if fileID != "" && !strings.HasPrefix(fileID, "file_") {
			p.Add(field+".fileId", "must be a file id (file_…)")
		}
		name := p.Text(field+".name", a.Name, false, core.FileNameLenMax)
		atts = append(atts, disputes.Attachment{FileID: fileID, Name: name})
	}
	return app.DisputeMessage{DisputeID: id, Body: text, Attachments: atts}, p.Err()
}

type disputeOpenRequestBody struct {
	CollectionID *string     `json:"collectionId"`
	Amount       core.Amount `json:"amount"`
	Category     *string     `json:"category"`
	Reason       *string     `json:"reason"`
}

type disputeSimulationJSON struct {
	Type     string      `json:"type"`
	Outcome  string      `json:"outcome,omitempty"`
	Replayed bool        `json:"replayed"`
	Dispute  disputeJSON `json:"dispute"`
}

// simulateDisputeOpen: POST /v1/simulations/dispute-open.
func simulateDisputeOpen(c *core.Call) {
	in, ok := core.SimulationInput(c, disputeOpenInput)
	if !ok {
		return
	}
	r := c.Server.Config.App.OpenDispute(c.Caller(), in)
	c.Created(r, core.Simulated(func(res *ledger.Result) disputeSimulationJSON {
		return disputeSimulationJSON{Type: "open_dispute", Replayed: res.Replayed, Dispute: renderWithThread(c, disputes.Of(*res)).Dispute}
	}))
}

// disputeOpenInput checks a dispute-open simulation's shape, reporting
// every problem at once.
func disputeOpenInput(req *disputeOpenRequestBody) (app.DisputeOpening, *ledger.Error) {
	var p core.Problems
	in := app.DisputeOpening{CollectionID: p.Text("collectionId", req.CollectionID, true, 64)}
	in.Category = p.Text("category", req.Category, false, 16)
	if in.Category == "" {
		in.Category = "fraud"
	} else if in.Category != "fraud" && in.Category != "chargeback" && in.Category != "other" {
		p.Add("category", "must be one of fraud, chargeback, other")
	}
	in.Reason = p.Text("reason", req.Reason, false, disputeTextLenMax)
	if req.Amount.Set {
		in.Amount = &req.Amount.Text
	}
	return in, p.Err()
}

type disputeResolveRequestBody struct {
	DisputeID *string `json:"disputeId"`
	Outcome   *string `json:"outcome"`
	Message   *string `json:"message"`
}

// simulateDisputeResolve: POST /v1/simulations/dispute-resolve.
func simulateDisputeResolve(c *core.Call) {
	in, ok := core.SimulationInput(c, disputeResolveInput)
	if !ok {
		return
	}
	r := c.Server.Config.App.ResolveDispute(c.Caller(), in.id, in.outcome == "won", in.message)
	c.Reply(r, fasthttp.StatusOK, core.Simulated(func(res *ledger.Result) disputeSimulationJSON {
		return disputeSimulationJSON{Type: "resolve_dispute", Outcome: in.outcome, Dispute: renderWithThread(c, disputes.Of(*res)).Dispute}
	}))
}

// disputeResolution is what resolves a dispute: its id, won or lost, and
// the closing message.
type disputeResolution struct{ id, outcome, message string }

// disputeResolveInput checks a dispute-resolve simulation's shape,
// reporting every problem at once.
func disputeResolveInput(req *disputeResolveRequestBody) (in disputeResolution, e *ledger.Error) {
	var p core.Problems
	in.id = p.Text("disputeId", req.DisputeID, true, 64)
	in.outcome = p.Text("outcome", req.Outcome, true, 8)
	if in.outcome != "" && in.outcome != "won" && in.outcome != "lost" {
		p.Add("outcome", "must be won or lost")
	}
	in.message = p.Text("message", req.Message, false, disputeTextLenMax)
	return in, p.Err()
}
