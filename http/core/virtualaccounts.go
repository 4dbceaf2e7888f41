package core

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

// Virtual accounts: POST, GET (list), GET one and PATCH (pause or
// reactivate). Creating and changing need collections:write, reading
// collections:read: a virtual account exists to collect.

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/virtual-accounts", ledger.ScopeCollectionsWrite, (*call).createVirtualAccount, nil},
		endpoint{fasthttp.MethodGet, "/v1/virtual-accounts", ledger.ScopeCollectionsRead, (*call).listVirtualAccounts, nil},
		endpoint{fasthttp.MethodGet, "/v1/virtual-accounts/{id}", ledger.ScopeCollectionsRead, (*call).getVirtualAccount, nil},
		endpoint{fasthttp.MethodPatch, "/v1/virtual-accounts/{id}", ledger.ScopeCollectionsWrite, (*call).updateVirtualAccount, nil},
	)
}

// Cursor kinds of this feature's lists (see pagination.go).
const (
	listVirtualAccountsKind listKind = 'V'
	listCryptoAddressesKind listKind = 'A'
	listDepositCollections  listKind = 'D' // collections filtered by virtual account or address
)

type virtualAccountJSON struct {
	ID                string         `json:"id"`
	Status            string         `json:"status"`
	Currency          string         `json:"currency"`
	Bank              string         `json:"bank"`
	AccountNumber     string         `json:"accountNumber"`
	AccountName       string         `json:"accountName"`
	ExternalReference *string        `json:"externalReference"`
	Metadata          jsontext.Value `json:"metadata"`
	CreatedAt         string         `json:"createdAt"`
	UpdatedAt         string         `json:"updatedAt"`
}

type virtualAccountBody struct {
	VirtualAccount virtualAccountJSON `json:"virtualAccount"`
}

func renderVirtualAccount(v *ledger.VirtualAccount) virtualAccountJSON {
	return virtualAccountJSON{
		ID:                v.ID,
		Status:            v.Status.String(),
		Currency:          v.Currency,
		Bank:              v.Bank,
		AccountNumber:     v.AccountNumber,
		AccountName:       v.AccountName,
		ExternalReference: optional(v.ExternalReference),
		Metadata:          objectOrEmpty(v.Metadata),
		CreatedAt:         timestamp(v.CreatedAt),
		UpdatedAt:         timestamp(v.UpdatedAt),
	}
}

type createVirtualAccountBody struct {
	Currency          *string    `json:"currency"`
	ExternalReference *string    `json:"externalReference"`
	Metadata          jsonObject `json:"metadata"`
}

// createVirtualAccount: POST /v1/virtual-accounts. With an
// externalReference it is idempotent per currency: the same reference and
// currency again answer the existing account with 200.
func (c *call) createVirtualAccount() {
	var req createVirtualAccountBody
	if !c.decode(&req) {
		return
	}
	var p problems
	cur, curOK := p.currency("currency", req.Currency, true)
	if curOK {
		if _, ok := c.s.cfg.Catalogue.VirtualAccountBank(cur.Code); !ok {
			p.add("currency", "has no virtual accounts; they are issued in "+strings.Join(c.s.cfg.Catalogue.VirtualAccountCurrencies(), ", "))
		}
	}
	ref := p.text("externalReference", req.ExternalReference, false, referenceLenMax)
	if e := checkMetadata("metadata", req.Metadata); e != nil {
		p = append(p, e.Fields...)
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateVirtualAccount(c.caller(), app.VirtualAccountInput{Currency: cur.Code, ExternalReference: ref, Metadata: req.Metadata.raw})
	c.created(r, func(res *ledger.Result) any { return &virtualAccountBody{renderVirtualAccount(res.VirtualAccount)} })
}

// getVirtualAccount: GET /v1/virtual-accounts/{id}.
func (c *call) getVirtualAccount() {
	if v, ok := lookup(c, "id", "Virtual account", func(st *ledger.Reader, id string) (ledger.VirtualAccount, bool) {
		if _, va, ok := c.orderOfVirtualAccount(id); ok {
			return va, true
		}
		return st.VirtualAccount(c.org, id)
	}); ok {
		c.ok(fasthttp.StatusOK, &virtualAccountBody{renderVirtualAccount(&v)})
	}
}

// orderOfVirtualAccount finds the bank order whose deposit account id is
// id ("va_ord_…").
func (c *call) orderOfVirtualAccount(id string) (ledger.Order, ledger.VirtualAccount, bool) {
	if !strings.HasPrefix(id, app.OrderVirtualAccountPrefix) {
		return ledger.Order{}, ledger.VirtualAccount{}, false
	}
	o, found := c.s.cfg.Actors.Reader().Order(c.org, strings.TrimPrefix(id, "va_"))
	if !found {
		return ledger.Order{}, ledger.VirtualAccount{}, false
	}
	va, ok := app.OrderVirtualAccount(&o)
	return o, va, ok
}

// listVirtualAccounts: GET /v1/virtual-accounts, filters status, currency
// and externalReference; an order id as externalReference lists that bank
// order's deposit account.
func (c *call) listVirtualAccounts() {
	limit, before, e := pageParams(c.ctx, listVirtualAccountsKind, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.VirtualAccountFilter
	var p problems
	if v, ok := query(c.ctx, "status"); ok {
		if f.Status, ok = ledger.ParseVirtualAccountStatus(v); !ok {
			p.add("status", "must be one of active, paused")
		}
	}
	if v, ok := query(c.ctx, "currency"); ok {
		if _, known := ledger.LookupCurrency(v); !known {
			p.add("currency", "is not a supported currency")
		}
		f.Currency = v
	}
	f.ExternalReference, _ = query(c.ctx, "externalReference")
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	var page ledger.Page[ledger.VirtualAccount]
	if strings.HasPrefix(f.ExternalReference, "ord_") {
		page.Items = []ledger.VirtualAccount{}
		if _, va, ok := c.orderOfVirtualAccount("va_" + f.ExternalReference); ok && before == ledger.CursorStart &&
			(f.Status == 0 || f.Status == va.Status) && (f.Currency == "" || f.Currency == va.Currency) {
			page.Items = append(page.Items, va)
		}
		c.ok(fasthttp.StatusOK, newList(listVirtualAccountsKind, page, renderVirtualAccount))
		return
	}
	page = c.s.cfg.Actors.Reader().VirtualAccounts(c.org, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(listVirtualAccountsKind, page, renderVirtualAccount))
}

type updateVirtualAccountBody struct {
	Status *string `json:"status"`
}

// updateVirtualAccount: PATCH /v1/virtual-accounts/{id}, body {status}.
// Setting the status it already has changes nothing and answers 200.
func (c *call) updateVirtualAccount() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	var req updateVirtualAccountBody
	if !c.decode(&req) {
		return
	}
	if req.Status == nil {
		c.fail(ledger.FieldInvalid("status", "is required: active or paused"))
		return
	}
	status, ok := ledger.ParseVirtualAccountStatus(*req.Status)
	if !ok {
		c.fail(ledger.FieldInvalid("status", "must be one of active, paused"))
		return
	}
	r := c.s.cfg.App.UpdateVirtualAccount(c.caller(), id, status)
	c.reply(r, fasthttp.StatusOK, func(res *ledger.Result) any { return &virtualAccountBody{renderVirtualAccount(res.VirtualAccount)} })
}
