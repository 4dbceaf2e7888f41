package money

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/orders"
	"payments/rails"
)

// Where an organization's customers deposit: virtual accounts, a bank
// account per currency, and crypto addresses, one per currency and chain.
// Each has POST, GET (list), GET one and PATCH: a virtual account's pauses
// or reactivates it, a crypto address's replaces its metadata. Creating and
// changing need collections:write, reading collections:read: both exist to
// collect. The deposits into them are deposits.go's.

func init() {
	core.RegisterRoutes(core.Resource("/v1/virtual-accounts", ledger.ScopeCollectionsRead, ledger.ScopeCollectionsWrite, core.Handlers{
		Create: createVirtualAccount,
		List:   core.Lister(listVirtualAccountsKind, virtualAccountFilter, readVirtualAccounts, renderVirtualAccount),
		Get:    core.ByID("Virtual account", readVirtualAccount, virtualAccountGetBody),
		Update: updateVirtualAccount,
	})...)
	core.RegisterRoutes(core.Resource("/v1/crypto-addresses", ledger.ScopeCollectionsRead, ledger.ScopeCollectionsWrite, core.Handlers{
		Create: createCryptoAddress,
		List:   core.Lister(listCryptoAddressesKind, cryptoAddressFilter, deposits.ListCryptoAddresses, renderCryptoAddress),
		Get:    core.ByID("Crypto address", deposits.GetCryptoAddress, cryptoAddressGetBody),
		Update: updateCryptoAddress,
	})...)
}

// Cursor kinds of this feature's lists (see pagination.go).
const (
	listVirtualAccountsKind core.ListKind = 'V'
	listCryptoAddressesKind core.ListKind = 'A'
	listDepositCollections  core.ListKind = 'D' // collections filtered by virtual account or address
)

// depositAccountRecordJSON is what a virtual account and a crypto address
// both show last: the caller's reference and metadata, and when the
// account was made and last changed.
type depositAccountRecordJSON struct {
	ExternalReference *string        `json:"externalReference"`
	Metadata          jsontext.Value `json:"metadata"`
	CreatedAt         string         `json:"createdAt"`
	UpdatedAt         string         `json:"updatedAt"`
}

func renderDepositAccountRecord(ref, metadata string, created, updated int64) depositAccountRecordJSON {
	return depositAccountRecordJSON{core.Optional(ref), core.ObjectOrEmpty(metadata), core.Timestamp(created), core.Timestamp(updated)}
}

type virtualAccountJSON struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	Currency      string `json:"currency"`
	Bank          string `json:"bank"`
	AccountNumber string `json:"accountNumber"`
	AccountName   string `json:"accountName"`
	depositAccountRecordJSON
}

// virtualAccountGetBody and virtualAccountResult are the bodies of a single virtual account's GET and of
// its create or change.
var virtualAccountGetBody, virtualAccountResult = core.Bodies("virtualAccount", deposits.VirtualAccountOf, renderVirtualAccount)

func renderVirtualAccount(v *deposits.VirtualAccount) virtualAccountJSON {
	return virtualAccountJSON{
		ID:                       v.ID,
		Status:                   v.Status.String(),
		Currency:                 v.Currency,
		Bank:                     v.Bank,
		AccountNumber:            v.AccountNumber,
		AccountName:              v.AccountName,
		depositAccountRecordJSON: renderDepositAccountRecord(v.ExternalReference, v.Metadata, v.CreatedAt, v.UpdatedAt),
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
	}, c.Server.Config.App.CreateVirtualAccount, virtualAccountResult)
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

// readVirtualAccount reads org's virtual account id, or the deposit
// account of a bank order (orderVirtualAccount).
func readVirtualAccount(st *ledger.Reader, org, id string) (deposits.VirtualAccount, bool) {
	if va, ok := orderVirtualAccount(st, org, id); ok {
		return va, true
	}
	return deposits.GetVirtualAccount(st, org, id)
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

// virtualAccountFilter reads GET /v1/virtual-accounts' filters, every
// problem at once: status, currency and externalReference.
func virtualAccountFilter(c *core.Call) (deposits.VirtualAccountFilter, *ledger.Error) {
	var f deposits.VirtualAccountFilter
	var p core.Problems
	f.Status = core.QueryStatus(c, &p, deposits.ParseVirtualAccountStatus, "must be one of active, paused")
	f.Currency = currencyFilter(c, &p)
	f.ExternalReference, _ = core.Query(c.Ctx, "externalReference")
	return f, p.Err()
}

// readVirtualAccounts reads a page of org's virtual accounts (GET
// /v1/virtual-accounts); with an order id as externalReference, the one page of that bank order's deposit
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
	updateByID(c, virtualAccountChange, c.Server.Config.App.UpdateVirtualAccount, virtualAccountResult)
}

// virtualAccountChange checks a virtual account PATCH: the status to set.
func virtualAccountChange(req *updateVirtualAccountBody) (deposits.VirtualAccountStatus, *ledger.Error) {
	if req.Status == nil {
		return 0, ledger.FieldInvalid("status", "is required: active or paused")
	}
	status, ok := deposits.ParseVirtualAccountStatus(*req.Status)
	if !ok {
		return 0, ledger.FieldInvalid("status", "must be one of active, paused")
	}
	return status, nil
}

// updateByID answers PATCH {path}/{id} of a resource whose operation op
// takes the id and the change apart: the id, the body decoded into a Req
// and checked by change, op called as the caller, and its reply answered
// 200 with body's rendering (core.Update, for such operations).
func updateByID[Req, T any](c *core.Call, change func(*Req) (T, *ledger.Error), op func(app.Caller, string, T) actors.Reply, body func(*ledger.Result) any) {
	if id, ok := c.Param("id"); ok {
		if to, ok := core.Input(c, change); ok {
			c.Reply(op(c.Caller(), id, to), fasthttp.StatusOK, body)
		}
	}
}

type cryptoAddressJSON struct {
	ID       string  `json:"id"`
	Currency string  `json:"currency"`
	Chain    string  `json:"chain"`
	Address  string  `json:"address"`
	Tag      *string `json:"tag"`
	depositAccountRecordJSON
}

// cryptoAddressGetBody and cryptoAddressResult are the bodies of a single crypto address's GET and of
// its create or change.
var cryptoAddressGetBody, cryptoAddressResult = core.Bodies("address", deposits.CryptoAddressOf, renderCryptoAddress)

func renderCryptoAddress(a *deposits.CryptoAddress) cryptoAddressJSON {
	return cryptoAddressJSON{
		ID:                       a.ID,
		Currency:                 a.Currency,
		Chain:                    rails.ChainName(a.Chain),
		Address:                  a.Address,
		Tag:                      core.Optional(a.Tag),
		depositAccountRecordJSON: renderDepositAccountRecord(a.ExternalReference, a.Metadata, a.CreatedAt, a.UpdatedAt),
	}
}

type createCryptoAddressBody struct {
	Currency          *string         `json:"currency"`
	Chain             *string         `json:"chain"`
	ExternalReference *string         `json:"externalReference"`
	Metadata          core.JSONObject `json:"metadata"`
}

// depositChain reads a chain's code or name, in any case.
func depositChain(c *core.Call, p *core.Problems, field string, v *string, required bool) (rails.Chain, bool) {
	if v == nil || *v == "" {
		if required {
			p.Add(field, "is required")
		}
		return rails.Chain{}, false
	}
	ch, ok := c.Server.Config.Catalogue.ParseChain(*v)
	if !ok {
		p.Add(field, "must be one of "+strings.Join(c.Server.Config.Catalogue.ChainNames(), ", "))
	}
	return ch, ok
}

// createCryptoAddress: POST /v1/crypto-addresses. One address per currency
// and chain: asking again answers the existing address, unchanged, with 201
// (as for a new one) and the header idempotent-replayed: true.
func createCryptoAddress(c *core.Call) {
	in, ok := core.Input(c, func(req *createCryptoAddressBody) (app.CryptoAddressInput, *ledger.Error) {
		return cryptoAddressInput(c, req)
	})
	if !ok {
		return
	}
	r := c.Server.Config.App.CreateCryptoAddress(c.Caller(), in)
	// A replay answers 201 too, unlike created's 200.
	c.Reply(r, fasthttp.StatusCreated, func(res *ledger.Result) any {
		if res.Replayed {
			c.Ctx.Response.Header.Set("idempotent-replayed", "true")
		}
		return cryptoAddressResult(res)
	})
}

// cryptoAddressInput checks a crypto address request's shape against the
// deposit networks, reporting every problem at once.
func cryptoAddressInput(c *core.Call, req *createCryptoAddressBody) (app.CryptoAddressInput, *ledger.Error) {
	var p core.Problems
	cur, curOK := p.Currency("currency", req.Currency, true)
	chain, chainOK := depositChain(c, &p, "chain", req.Chain, true)
	if curOK && chainOK {
		if _, ok := c.Server.Config.Catalogue.DepositNetwork(cur.Code, chain.Code); !ok {
			p.Add("chain", cur.Code+" on "+chain.Name+" takes no deposits; supported: "+c.Server.Config.Catalogue.DepositNetworks())
		}
	}
	in := app.CryptoAddressInput{Currency: cur.Code, Chain: chain}
	in.ExternalReference = p.Text("externalReference", req.ExternalReference, false, core.ReferenceLenMax)
	in.Metadata = p.Metadata("metadata", req.Metadata)
	return in, p.Err()
}

// cryptoAddressFilter reads GET /v1/crypto-addresses' filters, every
// problem at once: currency, chain and externalReference.
func cryptoAddressFilter(c *core.Call) (deposits.CryptoAddressFilter, *ledger.Error) {
	var f deposits.CryptoAddressFilter
	var p core.Problems
	f.Currency = currencyFilter(c, &p)
	if v, ok := core.Query(c.Ctx, "chain"); ok {
		ch, _ := depositChain(c, &p, "chain", &v, false)
		f.Chain = ch.Code
	}
	f.ExternalReference, _ = core.Query(c.Ctx, "externalReference")
	return f, p.Err()
}

// currencyFilter reads a list's currency filter, a supported currency
// code; "" when the query gives none.
func currencyFilter(c *core.Call, p *core.Problems) string {
	v, ok := core.Query(c.Ctx, "currency")
	if _, known := ledger.LookupCurrency(v); ok && !known {
		p.Add("currency", "is not a supported currency")
	}
	return v
}

type updateCryptoAddressBody struct {
	Metadata core.JSONObject `json:"metadata"`
}

// updateCryptoAddress: PATCH /v1/crypto-addresses/{id}, body {metadata}.
// The metadata given replaces the old ({} clears it); the address itself
// never changes.
func updateCryptoAddress(c *core.Call) {
	updateByID(c, cryptoAddressChange, c.Server.Config.App.UpdateCryptoAddress, cryptoAddressResult)
}

// cryptoAddressChange checks a crypto address PATCH: the metadata to keep
// ("" for none).
func cryptoAddressChange(req *updateCryptoAddressBody) (string, *ledger.Error) {
	if !req.Metadata.Set {
		return "", ledger.FieldInvalid("metadata", "is required: the JSON object to keep ({} clears it), the only field that can change")
	}
	if e := core.CheckMetadata("metadata", req.Metadata); e != nil {
		return "", e
	}
	metadata := req.Metadata.Raw
	if metadata == "{}" {
		metadata = ""
	}
	return metadata, nil
}
