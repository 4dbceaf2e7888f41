package admin

import (
	"payments/http/core"
	"payments/http/money"

	"fmt"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/recipients"
	"payments/rails"
)

// Recipients: saved payout destinations, ledger records changed through
// Raft (recipients.Create and friends). A fiat recipient's holder name
// is resolved on its rail before it is saved; a crypto recipient's address
// is checked against its chain's format.

func init() {
	core.RegisterRoutes(core.Resource("/v1/recipients", ledger.ScopeRecipientsRead, ledger.ScopeRecipientsWrite, core.Handlers{
		Create:  createRecipient,
		List:    core.Lister(listRecipientsKind, recipientFilter, recipients.List, renderRecipient),
		Get:     core.ByID("Recipient", recipients.Get, recipientGetBody),
		Replace: updateRecipient,
		Delete:  deleteRecipient,
	})...)
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/recipients/bulk", Scope: ledger.ScopeRecipientsWrite, H: createRecipients},
	)
}

const listRecipientsKind core.ListKind = 'r'

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
	money.ItemErrorJSON
}

func renderRecipient(r *recipients.Recipient) recipientJSON {
	out := recipientJSON{
		ID: r.ID, AccountName: r.Spec.AccountName, Label: core.Optional(r.Spec.Label), Code: r.Spec.Method,
		Type: r.Spec.MethodType.APIName(), Country: core.Optional(r.Spec.Country), Currency: r.Spec.Currency, IsActive: r.Active,
		CreatedAt: core.Timestamp(r.CreatedAt), UpdatedAt: core.Timestamp(r.UpdatedAt),
	}
	if r.Spec.MethodType == ledger.MethodCrypto {
		out.Address, out.Tag = &r.Spec.Address, core.Optional(r.Spec.Tag)
	} else {
		out.AccountNumber = &r.Spec.AccountNumber
	}
	return out
}

// recipientSpec validates one recipient request against the catalogue and
// the rail, resolving the holder's name where the rail can. prefix goes
// before field names ("recipients.3.").
func recipientSpec(s *core.Server, req *recipientRequestBody, prefix string) (recipients.Spec, *ledger.Error) {
	var p core.Problems
	var spec recipients.Spec
	code := p.Text(prefix+"code", req.Code, true, 64)
	spec.AccountName = p.Text(prefix+"accountName", req.AccountName, false, recipientNameLenMax)
	spec.Label = p.Text(prefix+"label", req.Label, false, recipientLabelLenMax)
	if e := p.Err(); e != nil {
		return spec, e
	}
	m, ok := s.Config.Catalogue.Method(code)
	switch {
	case !ok:
		return spec, ledger.FieldInvalid(prefix+"code", fmt.Sprintf("%q is not a known payment method; see GET /v1/capabilities", core.Truncate(code, 64)))
	case !m.Payouts:
		return spec, ledger.FieldInvalid(prefix+"code", m.Code+" does not support payouts, so it cannot be a recipient's method")
	}
	spec.Method, spec.MethodType, spec.Country, spec.Currency = m.Code, m.Type, m.Country, m.Currency

	if m.Type == ledger.MethodCrypto {
		spec.Address = p.Text(prefix+"address", req.Address, true, 256)
		spec.Tag = p.Text(prefix+"tag", req.Tag, false, 64)
		if req.AccountNumber != nil {
			p.Add(prefix+"accountNumber", "is not used by a crypto method; send address")
		}
		if spec.Address != "" {
			if err := rails.ValidateAddress(m.Chain, spec.Address); err != nil {
				p.Add(prefix+"address", app.AddressReason(err))
			}
		}
		if spec.Tag != "" {
			if _, ok := m.Field("tag"); !ok {
				p.Add(prefix+"tag", "is not used on "+rails.ChainName(m.Chain))
			} else if err := rails.ValidateTag(m.Chain, spec.Tag); err != nil {
				p.Add(prefix+"tag", "must be at most 28 bytes (a Stellar text memo)")
			}
		}
		// No chain resolves holder names: accountName is the caller's, and
		// optional (the reference requires only code).
		return spec, p.Err()
	}

	spec.AccountNumber = p.Text(prefix+"accountNumber", req.AccountNumber, true, 64)
	if req.Address != nil {
		p.Add(prefix+"address", "is not used by a "+m.Type.APIName()+" method; send accountNumber")
	}
	if req.Tag != nil {
		p.Add(prefix+"tag", "is only for crypto methods")
	}
	if e := p.Err(); e != nil {
		return spec, e
	}
	var msg string
	if spec.AccountNumber, msg = money.CheckAccountNumber(s, &m, spec.AccountNumber); msg != "" {
		return spec, ledger.FieldInvalid(prefix+"accountNumber", msg)
	}
	res, e := money.ResolveName(s, &m, spec.AccountNumber)
	switch {
	case e != nil && s.Config.NoProvider:
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
func createRecipient(c *core.Call) {
	spec := func(req *recipientRequestBody) (recipients.Spec, *ledger.Error) {
		return recipientSpec(c.Server, req, "")
	}
	core.Create(c, spec, c.Server.Config.App.CreateRecipient, recipientResult)
}

// createRecipients: POST /v1/recipients/bulk. Items that pass validation
// are saved together in one command; each failure is reported by index.
func createRecipients(c *core.Call) {
	var req recipientsBulkRequestBody
	if !c.Decode(&req) {
		return
	}
	items, ok := core.BulkItems(c, "recipients", req.Recipients, recipients.BatchMax)
	if !ok {
		return
	}
	out := recipientsBulkBody{
		Summary: recipientsBulkSummary{Total: len(items)},
		Created: []recipientJSON{}, Failed: []recipientFailedJSON{},
	}
	var specs []recipients.Spec
	var indexes []int // request index of each saved spec
	for i := range items {
		spec, e := recipientSpec(c.Server, &items[i], fmt.Sprintf("recipients.%d.", i))
		if e != nil {
			out.Failed = append(out.Failed, recipientFailedJSON{Index: i, ItemErrorJSON: *money.RenderItemError(e)})
			continue
		}
		specs = append(specs, spec)
		indexes = append(indexes, i)
	}
	if len(specs) > 0 {
		r := c.Server.Config.App.CreateRecipients(c.Caller(), specs)
		if e := core.ReplyError(r); e != nil {
			c.Fail(e)
			return
		}
		for j, o := range recipients.Batch(r.Result) {
			if o.Err != nil {
				out.Failed = append(out.Failed, recipientFailedJSON{Index: indexes[j], ItemErrorJSON: *money.RenderItemError(o.Err)})
				continue
			}
			out.Created = append(out.Created, renderRecipient(o.Recipient))
		}
	}
	sortFailed(out.Failed)
	out.Summary.Created, out.Summary.Failed = len(out.Created), len(out.Failed)
	c.OK(fasthttp.StatusCreated, &out)
}

func sortFailed(f []recipientFailedJSON) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].Index < f[j-1].Index; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// recipientFilter reads GET /v1/recipients' filters: code and isActive.
func recipientFilter(c *core.Call) (recipients.Filter, *ledger.Error) {
	var f recipients.Filter
	f.Method, _ = core.Query(c.Ctx, "code")
	if v, ok := core.Query(c.Ctx, "isActive"); ok {
		if v != "true" && v != "false" {
			return f, ledger.FieldInvalid("isActive", "must be true or false")
		}
		active := v == "true"
		f.Active = &active
	}
	return f, nil
}

// recipientGetBody and recipientResult are the bodies of a single
// recipient's GET and of its create or change.
var recipientGetBody, recipientResult = core.Bodies("recipient", recipients.Of, renderRecipient)

// updateRecipient: PUT /v1/recipients/{id}. The display fields and whether
// the recipient may be used change; its destination does not (save a new
// recipient for a new destination).
func updateRecipient(c *core.Call) {
	core.Update(c, "id", recipientChange, c.Server.Config.App.UpdateRecipient, recipientResult)
}

// recipientChange checks a recipient update's shape, reporting every
// problem at once.
func recipientChange(id string, req *recipientUpdateBody) (app.RecipientChange, *ledger.Error) {
	var p core.Problems
	in := app.RecipientChange{ID: id}
	if req.AccountName != nil {
		in.SetAccountName = true
		in.AccountName = p.Text("accountName", req.AccountName, true, recipientNameLenMax)
	}
	if req.Label != nil {
		in.SetLabel = true
		in.Label = p.Text("label", req.Label, true, recipientLabelLenMax)
	}
	if req.IsActive != nil {
		in.SetActive, in.Active = true, *req.IsActive
	}
	if !in.SetAccountName && !in.SetLabel && !in.SetActive {
		p.Add("body", "must set at least one of accountName, label, isActive")
	}
	return in, p.Err()
}

// deleteRecipient: DELETE /v1/recipients/{id}. Payouts already made keep
// the reference; the recipient cannot be used or seen again.
func deleteRecipient(c *core.Call) {
	core.Delete(c, "id", c.Server.Config.App.DeleteRecipient)
}
