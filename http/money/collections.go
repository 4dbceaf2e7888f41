package money

import (
	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
)

func init() {
	core.RegisterRoutes(core.Resource("/v1/collections", ledger.ScopeCollectionsRead, ledger.ScopeCollectionsWrite, core.Handlers{
		Create:      core.Creator(collectionInput, core.App.CreateCollection, collectionResult),
		List:        listCollections,
		ByReference: core.ByReference("Collection", (*ledger.Reader).CollectionByReference, collectionGetBody),
		Get:         core.ByID("Collection", orgCollection, collectionGetBody),
	})...)
	core.RegisterEventRenderer(ledger.SubjectCollection, core.RenderAs(renderCollection))
}

type collectionRequestBody struct {
	From *sideBody `json:"from"`
	To   *struct {
		Currency *string `json:"currency"`
	} `json:"to"`
	Narration         *string         `json:"narration"`
	ExternalReference *string         `json:"externalReference"`
	Metadata          core.JSONObject `json:"metadata"`
}

// collectionInput checks a collection request's shape, reporting every
// problem at once.
func collectionInput(req *collectionRequestBody) (app.CollectionInput, *ledger.Error) {
	var p core.Problems
	var in app.CollectionInput
	spec := &in.Spec
	in.ExternalReference = p.Text("externalReference", req.ExternalReference, true, core.ReferenceLenMax)
	spec.Narration = p.Text("narration", req.Narration, false, core.NarrationLenMax)
	spec.Metadata = p.Metadata("metadata", req.Metadata)
	if req.From == nil {
		p.Add("from", "is required")
		return in, p.Err()
	}
	from := req.From
	spec.PayerNumber = p.Text("from.accountNumber", from.AccountNumber, true, 50)
	if spec.PayerNumber != "" {
		spec.PayerNumber = p.Phone("from.accountNumber", spec.PayerNumber)
	}
	spec.Method = p.Text("from.code", from.Code, true, 64)
	cur, curOK := p.Currency("from.currency", from.Currency, true)
	spec.Currency = cur.Code
	spec.Amount = p.RequiredAmount("from.amount", from.Amount, cur, curOK)
	if req.To != nil {
		if to, ok := p.Currency("to.currency", req.To.Currency, false); ok && curOK && to.Code != cur.Code {
			p.Add("to.currency", "must equal from.currency: collections are credited in the currency collected")
		}
	}
	spec.KYC = p.KYC("from.kyc", from.KYC)
	return in, p.Err()
}

// orgCollection is org's collection id: another organization's is none.
func orgCollection(st *ledger.Reader, org, id string) (ledger.Collection, bool) {
	col, ok := st.Collection(id)
	return col, ok && col.OrgID == org
}

// collectionGetBody and collectionResult are the bodies of a single
// collection's GET, by id or by reference, and of its create.
var collectionGetBody, collectionResult = core.Bodies("collection", func(res ledger.Result) *ledger.Collection { return res.Collection }, renderCollection)

// listCollections: GET /v1/collections.
func listCollections(c *core.Call) {
	// Deposit filters page their own list (deposits.go).
	core.List(c, collectionListKind(c.Ctx), collectionFilter, (*ledger.Reader).Collections, renderCollection)
}

// collectionFilter reads GET /v1/collections' filters, every problem at
// once.
func collectionFilter(c *core.Call) (ledger.CollectionFilter, *ledger.Error) {
	var f ledger.CollectionFilter
	var p core.Problems
	depositCollectionFilter(c.Ctx, &f, &p)
	f.Status = core.QueryStatus(c, &p, ledger.ParseCollectionStatus, "must be one of pending, completed, failed")
	if v, ok := core.Query(c.Ctx, "type"); ok {
		switch v {
		case "mobile_money", "virtual_account", "crypto":
			f.Type = v
		default:
			p.Add("type", "must be one of mobile_money, virtual_account, crypto")
		}
	}
	f.Method, _ = core.Query(c.Ctx, "code")
	f.Currency = currencyFilter(c, &p)
	f.ExternalReference, _ = core.Query(c.Ctx, "externalReference")
	f.CreatedFrom = p.QueryTime(c.Ctx, "from")
	f.CreatedTo = p.QueryTime(c.Ctx, "to")
	return f, p.Err()
}
