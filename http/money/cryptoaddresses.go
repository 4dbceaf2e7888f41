package money

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/rails"
)

// Crypto addresses: POST, GET (list), GET one and PATCH (metadata).
// Creating and changing need collections:write, reading collections:read.

func init() {
	core.RegisterRoutes(core.Resource("/v1/crypto-addresses", ledger.ScopeCollectionsRead, ledger.ScopeCollectionsWrite,
		core.Handlers{Create: createCryptoAddress, List: listCryptoAddresses, Get: getCryptoAddress, Update: updateCryptoAddress})...)
}

type cryptoAddressJSON struct {
	ID                string         `json:"id"`
	Currency          string         `json:"currency"`
	Chain             string         `json:"chain"`
	Address           string         `json:"address"`
	Tag               *string        `json:"tag"`
	ExternalReference *string        `json:"externalReference"`
	Metadata          jsontext.Value `json:"metadata"`
	CreatedAt         string         `json:"createdAt"`
	UpdatedAt         string         `json:"updatedAt"`
}

type cryptoAddressBody struct {
	Address cryptoAddressJSON `json:"address"`
}

func renderCryptoAddress(a *deposits.CryptoAddress) cryptoAddressJSON {
	return cryptoAddressJSON{
		ID:                a.ID,
		Currency:          a.Currency,
		Chain:             rails.ChainName(a.Chain),
		Address:           a.Address,
		Tag:               core.Optional(a.Tag),
		ExternalReference: core.Optional(a.ExternalReference),
		Metadata:          core.ObjectOrEmpty(a.Metadata),
		CreatedAt:         core.Timestamp(a.CreatedAt),
		UpdatedAt:         core.Timestamp(a.UpdatedAt),
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
		return &cryptoAddressBody{renderCryptoAddress(deposits.CryptoAddressOf(*res))}
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

// getCryptoAddress: GET /v1/crypto-addresses/{id}.
func getCryptoAddress(c *core.Call) {
	core.Get(c, "id", "Crypto address", deposits.GetCryptoAddress, func(a *deposits.CryptoAddress) *cryptoAddressBody { return &cryptoAddressBody{renderCryptoAddress(a)} })
}

// listCryptoAddresses: GET /v1/crypto-addresses, filters currency, chain and
// externalReference.
func listCryptoAddresses(c *core.Call) {
	core.List(c, listCryptoAddressesKind, cryptoAddressFilter, deposits.ListCryptoAddresses, renderCryptoAddress)
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
	if ch, ok := core.ParamInput(c, "id", cryptoAddressChange); ok {
		r := c.Server.Config.App.UpdateCryptoAddress(c.Caller(), ch.id, ch.to)
		c.Reply(r, fasthttp.StatusOK, func(res *ledger.Result) any {
			return &cryptoAddressBody{renderCryptoAddress(deposits.CryptoAddressOf(*res))}
		})
	}
}

// cryptoAddressChange checks a crypto address PATCH: the metadata to keep
// ("" for none).
func cryptoAddressChange(id string, req *updateCryptoAddressBody) (pathChange[string], *ledger.Error) {
	if !req.Metadata.Set {
		return pathChange[string]{}, ledger.FieldInvalid("metadata", "is required: the JSON object to keep ({} clears it), the only field that can change")
	}
	if e := core.CheckMetadata("metadata", req.Metadata); e != nil {
		return pathChange[string]{}, e
	}
	metadata := req.Metadata.Raw
	if metadata == "{}" {
		metadata = ""
	}
	return pathChange[string]{id, metadata}, nil
}
