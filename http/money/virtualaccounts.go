package money

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/orders"
)

// Virtual accounts: POST, GET (list), GET one and PATCH (pause or
// reactivate). Creating and changing need collections:write, reading
// collections:read: a virtual account exists to collect.

func init() {
	core.RegisterRoutes(core.Resource("/v1/virtual-accounts", ledger.ScopeCollectionsRead, ledger.ScopeCollectionsWrite,
		core.Handlers{Create: createVirtualAccount, List: listVirtualAccounts, Get: getVirtualAccount, Update: updateVirtualAccount})...)
}

// Cursor kinds of this feature's lists (see pagination.go).
const (
	listVirtualAccountsKind core.ListKind = 'V'
	listCryptoAddressesKind core.ListKind = 'A'
	listDepositCollections  core.ListKind = 'D' // collections filtered by virtual account or address
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

func renderVirtualAccount(v *deposits.VirtualAccount) virtualAccountJSON {
	return virtualAccountJSON{
		ID:                v.ID,
		Status:            v.Status.String(),
		Currency:          v.Currency,
		Bank:              v.Bank,
		AccountNumber:     v.AccountNumber,
		AccountName:       v.AccountName,
		ExternalReference: core.Optional(v.ExternalReference),
		Metadata:          core.ObjectOrEmpty(v.Metadata),
		CreatedAt:         core.Timestamp(v.CreatedAt),
		UpdatedAt:         core.Timestamp(v.UpdatedAt),
	}
}

type createVirtualAccountBody struct {
	Currency          *string         `json:"currency"`
	ExternalReference *string         `json:"externalReference"`
	Metadata          core.JSONObject `json:"metadata"`
}

// createVirtualAccount: POST /v1/virtual-accounts. With an
// externalReference it is idempotent per currency: the same reference and
// currency again answer the existing account with 200.
func createVirtualAccount(c *core.Call) {
	core.Create(c, func(req *createVirtualAccountBody) (app.VirtualAccountInput, *ledger.Error) {
		return virtualAccountInput(c, req)
	}, c.Server.Config.App.CreateVirtualAccount, func(res *ledger.Result) any {
		return &virtualAccountBody{renderVirtualAccount(deposits.VirtualAccountOf(*res))}
	})
}

// virtualAccountInput checks a virtual account request's shape against the
// currencies accounts are issued in, reporting every problem at once.
func virtualAccountInput(c *core.Call, req *createVirtualAccountBody) (app.VirtualAccountInput, *ledger.Error) {
	var p core.Problems
	cur, curOK := p.Currency("currency", req.Currency, true)
	if curOK {
		if _, ok := c.Server.Config.Catalogue.VirtualAccountBank(cur.Code); !ok {
			if issued := c.Server.Config.Catalogue.VirtualAccountCurrencies(); len(issued) > 0 {
				p.Add("currency", "has no virtual accounts; they are issued in "+strings.Join(issued, ", "))
			} else {
				p.Add("currency", "has no virtual accounts on this deployment: no provider issues them; see GET /v1/capabilities")
			}
		}
	}
	in := app.VirtualAccountInput{Currency: cur.Code}
	in.ExternalReference = p.Text("externalReference", req.ExternalReference, false, core.ReferenceLenMax)
	in.Metadata = p.Metadata("metadata", req.Metadata)
	return in, p.Err()
}

// getVirtualAccount: GET /v1/virtual-accounts/{id}.
func getVirtualAccount(c *core.Call) {
	core.Get(c, "id", "Virtual account", func(st *ledger.Reader, org, id string) (deposits.VirtualAccount, bool) {
		if va, ok := orderVirtualAccount(st, org, id); ok {
			return va, true
		}
		return deposits.GetVirtualAccount(st, org, id)
	}, func(v *deposits.VirtualAccount) *virtualAccountBody {
		return &virtualAccountBody{renderVirtualAccount(v)}
	})
}

// orderVirtualAccount is the deposit account of the bank order whose
// deposit account id is id ("va_ord_…").
func orderVirtualAccount(st *ledger.Reader, org, id string) (deposits.VirtualAccount, bool) {
	if !strings.HasPrefix(id, app.OrderVirtualAccountPrefix) {
		return deposits.VirtualAccount{}, false
	}
	o, found := orders.Get(st, org, strings.TrimPrefix(id, "va_"))
	if !found {
		return deposits.VirtualAccount{}, false
	}
	return app.OrderVirtualAccount(&o)
}

// listVirtualAccounts: GET /v1/virtual-accounts, filters status, currency
// and externalReference; an order id as externalReference lists that bank
// order's deposit account.
func listVirtualAccounts(c *core.Call) {
	core.List(c, listVirtualAccountsKind, virtualAccountFilter, readVirtualAccounts, renderVirtualAccount)
}

// virtualAccountFilter reads GET /v1/virtual-accounts' filters, every
// problem at once: status, currency and externalReference.
func virtualAccountFilter(c *core.Call) (deposits.VirtualAccountFilter, *ledger.Error) {
	var f deposits.VirtualAccountFilter
	var p core.Problems
	if v, ok := core.Query(c.Ctx, "status"); ok {
		if f.Status, ok = deposits.ParseVirtualAccountStatus(v); !ok {
			p.Add("status", "must be one of active, paused")
		}
	}
	f.Currency = currencyFilter(c, &p)
	f.ExternalReference, _ = core.Query(c.Ctx, "externalReference")
	return f, p.Err()
}

// readVirtualAccounts reads a page of org's virtual accounts; with an order
// id as externalReference, the one page of that bank order's deposit
// account, if the other filters take it.
func readVirtualAccounts(st *ledger.Reader, org string, f deposits.VirtualAccountFilter, before ledger.Cursor, limit int) ledger.Page[deposits.VirtualAccount] {
	if !strings.HasPrefix(f.ExternalReference, "ord_") {
		return deposits.ListVirtualAccounts(st, org, f, before, limit)
	}
	page := ledger.Page[deposits.VirtualAccount]{Items: []deposits.VirtualAccount{}}
	if va, ok := orderVirtualAccount(st, org, "va_"+f.ExternalReference); ok && before == ledger.CursorStart &&
		(f.Status == 0 || f.Status == va.Status) && (f.Currency == "" || f.Currency == va.Currency) {
		page.Items = append(page.Items, va)
	}
	return page
}

type updateVirtualAccountBody struct {
	Status *string `json:"status"`
}

// updateVirtualAccount: PATCH /v1/virtual-accounts/{id}, body {status}.
// Setting the status it already has changes nothing and answers 200.
func updateVirtualAccount(c *core.Call) {
	if ch, ok := core.ParamInput(c, "id", virtualAccountChange); ok {
		r := c.Server.Config.App.UpdateVirtualAccount(c.Caller(), ch.id, ch.to)
		c.Reply(r, fasthttp.StatusOK, func(res *ledger.Result) any {
			return &virtualAccountBody{renderVirtualAccount(deposits.VirtualAccountOf(*res))}
		})
	}
}

// pathChange is a PATCH's checked change to the resource whose id the path
// names.
type pathChange[T any] struct {
	id string
	to T
}

// virtualAccountChange checks a virtual account PATCH: the status to set.
func virtualAccountChange(id string, req *updateVirtualAccountBody) (pathChange[deposits.VirtualAccountStatus], *ledger.Error) {
	if req.Status == nil {
		return pathChange[deposits.VirtualAccountStatus]{}, ledger.FieldInvalid("status", "is required: active or paused")
	}
	status, ok := deposits.ParseVirtualAccountStatus(*req.Status)
	if !ok {
		return pathChange[deposits.VirtualAccountStatus]{}, ledger.FieldInvalid("status", "must be one of active, paused")
	}
	return pathChange[deposits.VirtualAccountStatus]{id, status}, nil
}
