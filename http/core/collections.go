package core

import (
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/collections", ledger.ScopeCollectionsWrite, (*call).createCollection, nil},
		endpoint{fasthttp.MethodGet, "/v1/collections", ledger.ScopeCollectionsRead, (*call).listCollections, nil},
		endpoint{fasthttp.MethodGet, "/v1/collections/by-reference/{externalReference}", ledger.ScopeCollectionsRead, (*call).getCollectionByReference, nil},
		endpoint{fasthttp.MethodGet, "/v1/collections/{id}", ledger.ScopeCollectionsRead, (*call).getCollection, nil},
	)
	registerEventRenderer(ledger.SubjectCollection, renderAs(renderCollection))
}

type collectionRequestBody struct {
	From *struct {
		AccountNumber *string    `json:"accountNumber"`
		Code          *string    `json:"code"`
		Amount        amount     `json:"amount"`
		Currency      *string    `json:"currency"`
		KYC           jsonObject `json:"kyc"`
	} `json:"from"`
	To *struct {
		Currency *string `json:"currency"`
	} `json:"to"`
	Narration         *string    `json:"narration"`
	ExternalReference *string    `json:"externalReference"`
	Metadata          jsonObject `json:"metadata"`
}

type collectionBody struct {
	Collection collectionJSON `json:"collection"`
}

// createCollection: POST /v1/collections.
func (c *call) createCollection() {
	var req collectionRequestBody
	if !c.decode(&req) {
		return
	}
	in, e := collectionInput(&req)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateCollection(c.caller(), in)
	c.created(r, func(res *ledger.Result) any { return &collectionBody{renderCollection(res.Collection)} })
}

// collectionInput checks a collection request's shape, reporting every
// problem at once.
func collectionInput(req *collectionRequestBody) (app.CollectionInput, *ledger.Error) {
	var p problems
	var in app.CollectionInput
	spec := &in.Spec
	in.ExternalReference = p.text("externalReference", req.ExternalReference, true, referenceLenMax)
	spec.Narration = p.text("narration", req.Narration, false, narrationLenMax)
	if e := checkMetadata("metadata", req.Metadata); e != nil {
		p = append(p, e.Fields...)
	}
	spec.Metadata = req.Metadata.raw
	if req.From == nil {
		p.add("from", "is required")
		return in, p.err()
	}
	from := req.From
	spec.PayerNumber = p.text("from.accountNumber", from.AccountNumber, true, 50)
	if spec.PayerNumber != "" {
		spec.PayerNumber = p.phone("from.accountNumber", spec.PayerNumber)
	}
	spec.Method = p.text("from.code", from.Code, true, 64)
	cur, curOK := p.currency("from.currency", from.Currency, true)
	spec.Currency = cur.Code
	if !from.Amount.set {
		p.add("from.amount", "is required")
	} else if curOK {
		spec.Amount = p.amount("from.amount", from.Amount, cur)
	}
	if req.To != nil {
		if to, ok := p.currency("to.currency", req.To.Currency, false); ok && curOK && to.Code != cur.Code {
			p.add("to.currency", "must equal from.currency: collections are credited in the currency collected")
		}
	}
	if e := checkKYC("from.kyc", from.KYC); e != nil {
		p = append(p, e.Fields...)
	}
	spec.KYC = from.KYC.raw
	return in, p.err()
}

// getCollection: GET /v1/collections/{id}.
func (c *call) getCollection() {
	if col, ok := lookup(c, "id", "Collection", func(st *ledger.Reader, id string) (ledger.Collection, bool) {
		col, ok := st.Collection(id)
		return col, ok && col.OrgID == c.org
	}); ok {
		c.ok(fasthttp.StatusOK, &collectionBody{renderCollection(&col)})
	}
}

// getCollectionByReference: GET /v1/collections/by-reference/{externalReference}.
func (c *call) getCollectionByReference() {
	if col, ok := lookup(c, "externalReference", "Collection", func(st *ledger.Reader, ref string) (ledger.Collection, bool) {
		return st.CollectionByReference(c.org, ref)
	}); ok {
		c.ok(fasthttp.StatusOK, &collectionBody{renderCollection(&col)})
	}
}

// listCollections: GET /v1/collections.
func (c *call) listCollections() {
	kind := collectionListKind(c.ctx) // deposit filters page their own list (deposits.go)
	limit, before, e := pageParams(c.ctx, kind, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.CollectionFilter
	var p problems
	depositCollectionFilter(c.ctx, &f, &p)
	if v, ok := query(c.ctx, "status"); ok {
		if f.Status, ok = ledger.ParseCollectionStatus(v); !ok {
			p.add("status", "must be one of pending, completed, failed")
		}
	}
	if v, ok := query(c.ctx, "type"); ok {
		switch v {
		case "mobile_money", "virtual_account", "crypto":
			f.Type = v
		default:
			p.add("type", "must be one of mobile_money, virtual_account, crypto")
		}
	}
	f.Method, _ = query(c.ctx, "code")
	if v, ok := query(c.ctx, "currency"); ok {
		if _, known := ledger.LookupCurrency(v); !known {
			p.add("currency", "is not a supported currency")
		}
		f.Currency = v
	}
	f.ExternalReference, _ = query(c.ctx, "externalReference")
	var err *ledger.Error
	if f.CreatedFrom, err = queryTime(c.ctx, "from"); err != nil {
		p = append(p, err.Fields...)
	}
	if f.CreatedTo, err = queryTime(c.ctx, "to"); err != nil {
		p = append(p, err.Fields...)
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	var page ledger.Page[ledger.Collection]
	page = c.s.cfg.Actors.Reader().Collections(c.org, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(kind, page, renderCollection))
}
