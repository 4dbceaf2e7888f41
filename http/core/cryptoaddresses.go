package core

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
	"payments/rails"
)

// Crypto addresses: POST, GET (list), GET one and PATCH (metadata).
// Creating and changing need collections:write, reading collections:read.

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/crypto-addresses", ledger.ScopeCollectionsWrite, (*call).createCryptoAddress, nil},
		endpoint{fasthttp.MethodGet, "/v1/crypto-addresses", ledger.ScopeCollectionsRead, (*call).listCryptoAddresses, nil},
		endpoint{fasthttp.MethodGet, "/v1/crypto-addresses/{id}", ledger.ScopeCollectionsRead, (*call).getCryptoAddress, nil},
		endpoint{fasthttp.MethodPatch, "/v1/crypto-addresses/{id}", ledger.ScopeCollectionsWrite, (*call).updateCryptoAddress, nil},
	)
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

func renderCryptoAddress(a *ledger.CryptoAddress) cryptoAddressJSON {
	return cryptoAddressJSON{
		ID:                a.ID,
		Currency:          a.Currency,
		Chain:             rails.ChainName(a.Chain),
		Address:           a.Address,
		Tag:               optional(a.Tag),
		ExternalReference: optional(a.ExternalReference),
		Metadata:          objectOrEmpty(a.Metadata),
		CreatedAt:         timestamp(a.CreatedAt),
		UpdatedAt:         timestamp(a.UpdatedAt),
	}
}

type createCryptoAddressBody struct {
	Currency          *string    `json:"currency"`
	Chain             *string    `json:"chain"`
	ExternalReference *string    `json:"externalReference"`
	Metadata          jsonObject `json:"metadata"`
}

// depositChain reads a chain's code or name, in any case.
func (c *call) depositChain(p *problems, field string, v *string, required bool) (rails.Chain, bool) {
	if v == nil || *v == "" {
		if required {
			p.add(field, "is required")
		}
		return rails.Chain{}, false
	}
	ch, ok := c.s.cfg.Catalogue.ParseChain(*v)
	if !ok {
		p.add(field, "must be one of "+strings.Join(c.s.cfg.Catalogue.ChainNames(), ", "))
	}
	return ch, ok
}

// createCryptoAddress: POST /v1/crypto-addresses. One address per currency
// and chain: asking again answers the existing address, unchanged, with 201
// (as for a new one) and the header idempotent-replayed: true.
func (c *call) createCryptoAddress() {
	var req createCryptoAddressBody
	if !c.decode(&req) {
		return
	}
	var p problems
	cur, curOK := p.currency("currency", req.Currency, true)
	chain, chainOK := c.depositChain(&p, "chain", req.Chain, true)
	if curOK && chainOK {
		if _, ok := c.s.cfg.Catalogue.DepositNetwork(cur.Code, chain.Code); !ok {
			p.add("chain", cur.Code+" on "+chain.Name+" takes no deposits; supported: "+c.s.cfg.Catalogue.DepositNetworks())
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
	r := c.s.cfg.App.CreateCryptoAddress(c.caller(), app.CryptoAddressInput{
		Currency: cur.Code, Chain: chain, ExternalReference: ref, Metadata: req.Metadata.raw,
	})
	// A replay answers 201 too, unlike created's 200.
	c.reply(r, fasthttp.StatusCreated, func(res *ledger.Result) any {
		if res.Replayed {
			c.ctx.Response.Header.Set("idempotent-replayed", "true")
		}
		return &cryptoAddressBody{renderCryptoAddress(res.CryptoAddress)}
	})
}

// getCryptoAddress: GET /v1/crypto-addresses/{id}.
func (c *call) getCryptoAddress() {
	if a, ok := lookup(c, "id", "Crypto address", func(st *ledger.Reader, id string) (ledger.CryptoAddress, bool) {
		return st.CryptoAddress(c.org, id)
	}); ok {
		c.ok(fasthttp.StatusOK, &cryptoAddressBody{renderCryptoAddress(&a)})
	}
}

// listCryptoAddresses: GET /v1/crypto-addresses, filters currency, chain and
// externalReference.
func (c *call) listCryptoAddresses() {
	limit, before, e := pageParams(c.ctx, listCryptoAddressesKind, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.CryptoAddressFilter
	var p problems
	if v, ok := query(c.ctx, "currency"); ok {
		if _, known := ledger.LookupCurrency(v); !known {
			p.add("currency", "is not a supported currency")
		}
		f.Currency = v
	}
	if v, ok := query(c.ctx, "chain"); ok {
		ch, _ := c.depositChain(&p, "chain", &v, false)
		f.Chain = ch.Code
	}
	f.ExternalReference, _ = query(c.ctx, "externalReference")
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	var page ledger.Page[ledger.CryptoAddress]
	page = c.s.cfg.Actors.Reader().CryptoAddresses(c.org, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(listCryptoAddressesKind, page, renderCryptoAddress))
}

type updateCryptoAddressBody struct {
	Metadata jsonObject `json:"metadata"`
}

// updateCryptoAddress: PATCH /v1/crypto-addresses/{id}, body {metadata}.
// The metadata given replaces the old ({} clears it); the address itself
// never changes.
func (c *call) updateCryptoAddress() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	var req updateCryptoAddressBody
	if !c.decode(&req) {
		return
	}
	if !req.Metadata.set {
		c.fail(ledger.FieldInvalid("metadata", "is required: the JSON object to keep ({} clears it), the only field that can change"))
		return
	}
	if e := checkMetadata("metadata", req.Metadata); e != nil {
		c.fail(e)
		return
	}
	metadata := req.Metadata.raw
	if metadata == "{}" {
		metadata = ""
	}
	r := c.s.cfg.App.UpdateCryptoAddress(c.caller(), id, metadata)
	c.reply(r, fasthttp.StatusOK, func(res *ledger.Result) any { return &cryptoAddressBody{renderCryptoAddress(res.CryptoAddress)} })
}
