package core

import (
	"fmt"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
	"payments/rails"
)

// Recipients: saved payout destinations, ledger records changed through
// Raft (ledger.CreateRecipient and friends). A fiat recipient's holder name
// is resolved on its rail before it is saved; a crypto recipient's address
// is checked against its chain's format.

func init() {
	registerRoutes(
		endpoint{method: fasthttp.MethodPost, path: "/v1/recipients", scope: ledger.ScopeRecipientsWrite, h: (*call).createRecipient},
		endpoint{method: fasthttp.MethodPost, path: "/v1/recipients/bulk", scope: ledger.ScopeRecipientsWrite, h: (*call).createRecipients},
		endpoint{method: fasthttp.MethodGet, path: "/v1/recipients", scope: ledger.ScopeRecipientsRead, h: (*call).listRecipients},
		endpoint{method: fasthttp.MethodGet, path: "/v1/recipients/{id}", scope: ledger.ScopeRecipientsRead, h: (*call).getRecipient},
		endpoint{method: fasthttp.MethodPut, path: "/v1/recipients/{id}", scope: ledger.ScopeRecipientsWrite, h: (*call).updateRecipient},
		endpoint{method: fasthttp.MethodDelete, path: "/v1/recipients/{id}", scope: ledger.ScopeRecipientsWrite, h: (*call).deleteRecipient},
	)
}

const listRecipients listKind = 'r'

// Field length limits of recipients, in characters.
const (
	recipientNameLenMax  = 200
	recipientLabelLenMax = 100
)

type recipientRequestBody struct {
	Code          *string `json:"code"`
	AccountName   *string `json:"accountName"`
	Label         *string `json:"label"`
	AccountNumber *string `json:"accountNumber"`
	Address       *string `json:"address"`
	Tag           *string `json:"tag"`
}

type recipientsBulkRequestBody struct {
	Recipients *[]recipientRequestBody `json:"recipients"`
}

type recipientUpdateBody struct {
	AccountName *string `json:"accountName"`
	Label       *string `json:"label"`
	IsActive    *bool   `json:"isActive"`
}

type recipientJSON struct {
	ID            string  `json:"id"`
	AccountName   string  `json:"accountName"`
	Label         *string `json:"label"`
	Code          string  `json:"code"`
	Type          string  `json:"type"`
	AccountNumber *string `json:"accountNumber,omitempty"`
	Address       *string `json:"address,omitempty"`
	Tag           *string `json:"tag,omitempty"`
	Country       *string `json:"country,omitempty"` // a crypto recipient has none: omitted, not null (NOTES)
	Currency      string  `json:"currency"`
	IsActive      bool    `json:"isActive"`
	CreatedAt     string  `json:"createdAt"`
	UpdatedAt     string  `json:"updatedAt"`
}

type recipientBody struct {
	Recipient recipientJSON `json:"recipient"`
}

type recipientsBulkBody struct {
	Summary recipientsBulkSummary `json:"summary"`
	Created []recipientJSON       `json:"created"`
	Failed  []recipientFailedJSON `json:"failed"`
}

type recipientsBulkSummary struct {
	Total   int `json:"total"`
	Created int `json:"created"`
	Failed  int `json:"failed"`
}

// recipientFailedJSON is an item that was not saved: its index in the
// request and the error it alone would have got.
type recipientFailedJSON struct {
	Index int `json:"index"`
	itemErrorJSON
}

func renderRecipient(r *ledger.Recipient) recipientJSON {
	out := recipientJSON{
		ID: r.ID, AccountName: r.Spec.AccountName, Label: optional(r.Spec.Label), Code: r.Spec.Method,
		Type: r.Spec.MethodType.APIName(), Country: optional(r.Spec.Country), Currency: r.Spec.Currency, IsActive: r.Active,
		CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt),
	}
	if r.Spec.MethodType == ledger.MethodCrypto {
		out.Address, out.Tag = &r.Spec.Address, optional(r.Spec.Tag)
	} else {
		out.AccountNumber = &r.Spec.AccountNumber
	}
	return out
}

// recipientSpec validates one recipient request against the catalogue and
// the rail, resolving the holder's name where the rail can. prefix goes
// before field names ("recipients.3.").
func (s *Server) recipientSpec(req *recipientRequestBody, prefix string) (ledger.RecipientSpec, *ledger.Error) {
	var p problems
	var spec ledger.RecipientSpec
	code := p.text(prefix+"code", req.Code, true, 64)
	spec.AccountName = p.text(prefix+"accountName", req.AccountName, false, recipientNameLenMax)
	spec.Label = p.text(prefix+"label", req.Label, false, recipientLabelLenMax)
	if e := p.err(); e != nil {
		return spec, e
	}
	m, ok := s.cfg.Catalogue.Method(code)
	switch {
	case !ok:
		return spec, ledger.FieldInvalid(prefix+"code", fmt.Sprintf("%q is not a known payment method; see GET /v1/capabilities", truncate(code, 64)))
	case !m.Payouts:
		return spec, ledger.FieldInvalid(prefix+"code", m.Code+" does not support payouts, so it cannot be a recipient's method")
	}
	spec.Method, spec.MethodType, spec.Country, spec.Currency = m.Code, m.Type, m.Country, m.Currency

	if m.Type == ledger.MethodCrypto {
		spec.Address = p.text(prefix+"address", req.Address, true, 256)
		spec.Tag = p.text(prefix+"tag", req.Tag, false, 64)
		if req.AccountNumber != nil {
			p.add(prefix+"accountNumber", "is not used by a crypto method; send address")
		}
		if spec.Address != "" {
			if err := rails.ValidateAddress(m.Chain, spec.Address); err != nil {
				p.add(prefix+"address", app.AddressReason(err))
			}
		}
		if spec.Tag != "" {
			if _, ok := m.Field("tag"); !ok {
				p.add(prefix+"tag", "is not used on "+rails.ChainName(m.Chain))
			} else if err := rails.ValidateTag(m.Chain, spec.Tag); err != nil {
				p.add(prefix+"tag", "must be at most 28 bytes (a Stellar text memo)")
			}
		}
		// No chain resolves holder names: accountName is the caller's, and
		// optional (the reference requires only code).
		return spec, p.err()
	}

	spec.AccountNumber = p.text(prefix+"accountNumber", req.AccountNumber, true, 64)
	if req.Address != nil {
		p.add(prefix+"address", "is not used by a "+m.Type.APIName()+" method; send accountNumber")
	}
	if req.Tag != nil {
		p.add(prefix+"tag", "is only for crypto methods")
	}
	if e := p.err(); e != nil {
		return spec, e
	}
	var msg string
	if spec.AccountNumber, msg = s.checkAccountNumber(&m, spec.AccountNumber); msg != "" {
		return spec, ledger.FieldInvalid(prefix+"accountNumber", msg)
	}
	res, e := s.resolveName(&m, spec.AccountNumber)
	switch {
	case e != nil && s.cfg.NoProvider:
		// No rail can be asked: the caller's name stands, and is needed.
		if spec.AccountName == "" {
			return spec, ledger.FieldInvalid(prefix+"accountName", "is required: this deployment has no provider to resolve account holder names")
		}
		return spec, nil
	case e != nil:
		return spec, e
	case res.Outcome == rails.OutcomeTimeout:
		return spec, &ledger.Error{Code: ledger.CodeUnavailable, Message: res.Message + "; nothing was saved"}
	case res.Outcome != rails.OutcomeValid:
		return spec, ledger.FieldInvalid(prefix+"accountNumber", "was refused by the rail ("+string(res.Outcome)+"): "+res.Message)
	}
	spec.AccountName = res.AccountName // the rail's name is the validated one
	return spec, nil
}

// createRecipient: POST /v1/recipients.
func (c *call) createRecipient() {
	var req recipientRequestBody
	if !c.decode(&req) {
		return
	}
	spec, e := c.s.recipientSpec(&req, "")
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateRecipient(c.caller(), spec)
	c.created(r, func(res *ledger.Result) any { return &recipientBody{renderRecipient(res.Recipient)} })
}

// createRecipients: POST /v1/recipients/bulk. Items that pass validation
// are saved together in one command; each failure is reported by index.
func (c *call) createRecipients() {
	var req recipientsBulkRequestBody
	if !c.decode(&req) {
		return
	}
	if req.Recipients == nil {
		c.fail(ledger.FieldInvalid("recipients", "is required"))
		return
	}
	items := *req.Recipients
	if len(items) == 0 || len(items) > ledger.RecipientBatchMax {
		c.fail(ledger.FieldInvalid("recipients", fmt.Sprintf("must hold 1 to %d items", ledger.RecipientBatchMax)))
		return
	}
	out := recipientsBulkBody{
		Summary: recipientsBulkSummary{Total: len(items)},
		Created: []recipientJSON{}, Failed: []recipientFailedJSON{},
	}
	var specs []ledger.RecipientSpec
	var indexes []int // request index of each saved spec
	for i := range items {
		spec, e := c.s.recipientSpec(&items[i], fmt.Sprintf("recipients.%d.", i))
		if e != nil {
			out.Failed = append(out.Failed, recipientFailedJSON{Index: i, itemErrorJSON: *renderItemError(e)})
			continue
		}
		specs = append(specs, spec)
		indexes = append(indexes, i)
	}
	if len(specs) > 0 {
		r := c.s.cfg.App.CreateRecipients(c.caller(), specs)
		if e := replyError(r); e != nil {
			c.fail(e)
			return
		}
		for j, o := range r.Result.RecipientBatch {
			if o.Err != nil {
				out.Failed = append(out.Failed, recipientFailedJSON{Index: indexes[j], itemErrorJSON: *renderItemError(o.Err)})
				continue
			}
			out.Created = append(out.Created, renderRecipient(o.Recipient))
		}
	}
	sortFailed(out.Failed)
	out.Summary.Created, out.Summary.Failed = len(out.Created), len(out.Failed)
	c.ok(fasthttp.StatusCreated, &out)
}

func sortFailed(f []recipientFailedJSON) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].Index < f[j-1].Index; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// listRecipients: GET /v1/recipients.
func (c *call) listRecipients() {
	limit, before, e := pageParams(c.ctx, listRecipients, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.RecipientFilter
	if v, ok := query(c.ctx, "code"); ok {
		f.Method = v
	}
	if v, ok := query(c.ctx, "isActive"); ok {
		switch v {
		case "true", "false":
			active := v == "true"
			f.Active = &active
		default:
			c.fail(ledger.FieldInvalid("isActive", "must be true or false"))
			return
		}
	}
	var page ledger.Page[ledger.Recipient]
	page = c.s.cfg.Actors.Reader().Recipients(c.org, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(listRecipients, page, renderRecipient))
}

// getRecipient: GET /v1/recipients/{id}.
func (c *call) getRecipient() {
	r, ok := c.recipient()
	if !ok {
		return
	}
	c.ok(fasthttp.StatusOK, &recipientBody{renderRecipient(&r)})
}

// recipient reads the {id} path parameter and the caller's recipient it
// names, answering 404 when there is none.
func (c *call) recipient() (ledger.Recipient, bool) {
	return lookup(c, "id", "Recipient", func(st *ledger.Reader, id string) (ledger.Recipient, bool) { return st.Recipient(c.org, id) })
}

// updateRecipient: PUT /v1/recipients/{id}. The display fields and whether
// the recipient may be used change; its destination does not (save a new
// recipient for a new destination).
func (c *call) updateRecipient() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	var req recipientUpdateBody
	if !c.decode(&req) {
		return
	}
	var p problems
	in := app.RecipientChange{ID: id}
	if req.AccountName != nil {
		in.SetAccountName = true
		in.AccountName = p.text("accountName", req.AccountName, true, recipientNameLenMax)
	}
	if req.Label != nil {
		in.SetLabel = true
		in.Label = p.text("label", req.Label, true, recipientLabelLenMax)
	}
	if req.IsActive != nil {
		in.SetActive, in.Active = true, *req.IsActive
	}
	if !in.SetAccountName && !in.SetLabel && !in.SetActive {
		p.add("body", "must set at least one of accountName, label, isActive")
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	c.answer(c.s.cfg.App.UpdateRecipient(c.caller(), in), func(res *ledger.Result) {
		c.ok(fasthttp.StatusOK, &recipientBody{renderRecipient(res.Recipient)})
	})
}

// deleteRecipient: DELETE /v1/recipients/{id}. Payouts already made keep
// the reference; the recipient cannot be used or seen again.
func (c *call) deleteRecipient() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	c.answer(c.s.cfg.App.DeleteRecipient(c.caller(), id), func(*ledger.Result) {
		c.ctx.Response.ResetBody()
		c.ctx.SetStatusCode(fasthttp.StatusNoContent)
	})
}
