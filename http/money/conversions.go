package money

import (
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/conversions"
)

func init() {
	renderConversionEvent := core.RenderAs(renderConversion)
	core.RegisterEventRenderer(conversions.Subject, renderConversionEvent)
	core.RegisterEventRenderer(conversions.SubjectRef, renderConversionEvent) // one executed under an externalReference
}

// Quotes and conversions: priced and executed by the application
// (app.App.CreateQuote, ExecuteConversion).
//
// Reads of quotes and conversions need balances:read, like the balances
// they move; creating and executing quotes need conversions:write.

func init() {
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/conversions/quote", Scope: ledger.ScopeConversionsWrite, H: createQuote},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/conversions/quote/{id}", Scope: ledger.ScopeBalancesRead, H: getQuote},
	)
	core.RegisterRoutes(core.Resource("/v1/conversions", ledger.ScopeBalancesRead, ledger.ScopeConversionsWrite, core.Handlers{
		Create: executeConversion, List: listConversions, Get: getConversion,
	})...)
}

// listConversionsKind tags conversion list cursors.
const listConversionsKind core.ListKind = 'v'

type conversionSideJSON struct {
	AccountNumber *string `json:"accountNumber"`
	core.MoneyJSON
}

type quoteJSON struct {
	ID        string             `json:"id"`
	Status    string             `json:"status"`
	From      conversionSideJSON `json:"from"`
	To        conversionSideJSON `json:"to"`
	Rate      string             `json:"rate"`
	ExpiresAt string             `json:"expiresAt"`
	CreatedAt string             `json:"createdAt"`
	UpdatedAt string             `json:"updatedAt"`
}

type conversionJSON struct {
	ID            string             `json:"id"`
	Status        string             `json:"status"`
	QuoteID       *string            `json:"quoteId"`
	From          conversionSideJSON `json:"from"`
	To            conversionSideJSON `json:"to"`
	Rate          string             `json:"rate"`
	StatusMessage *string            `json:"statusMessage"`
	CompletedAt   *string            `json:"completedAt"`
	CreatedAt     string             `json:"createdAt"`
	UpdatedAt     string             `json:"updatedAt"`
	// ExternalReference is the caller's reference for the execution,
	// null when it gave none.
	ExternalReference *string `json:"externalReference"`
}

func renderQuote(q *conversions.Quote) quoteJSON {
	return quoteJSON{
		ID:        q.ID,
		Status:    q.Status.String(),
		From:      conversionSideJSON{core.Optional(q.FromAccount), core.MoneyOf(q.FromAmount, q.FromCurrency)},
		To:        conversionSideJSON{core.Optional(q.ToAccount), core.MoneyOf(q.ToAmount, q.ToCurrency)},
		Rate:      q.Rate,
		ExpiresAt: core.Timestamp(q.ExpiresAt),
		CreatedAt: core.Timestamp(q.CreatedAt),
		UpdatedAt: core.Timestamp(q.UpdatedAt),
	}
}

func renderConversion(c *conversions.Conversion) conversionJSON {
	return conversionJSON{
		ID:            c.ID,
		Status:        c.Status.String(),
		QuoteID:       core.Optional(c.QuoteID),
		From:          conversionSideJSON{core.Optional(c.FromAccount), core.MoneyOf(c.FromAmount, c.FromCurrency)},
		To:            conversionSideJSON{core.Optional(c.ToAccount), core.MoneyOf(c.ToAmount, c.ToCurrency)},
		Rate:          c.Rate,
		StatusMessage: core.Optional(c.StatusMessage),
		CompletedAt:   completedAt(c.Status == conversions.Completed, c.CompletedAt),
		CreatedAt:     core.Timestamp(c.CreatedAt),
		UpdatedAt:     core.Timestamp(c.UpdatedAt),

		ExternalReference: core.Optional(c.ExternalReference),
	}
}

type quoteBody struct {
	Quote quoteJSON `json:"quote"`
}

type conversionBody struct {
	Conversion conversionJSON `json:"conversion"`
}

type quoteRequestBody struct {
	From *core.MoneyBody `json:"from"`
	To   *core.MoneyBody `json:"to"`
}

// createQuote: POST /v1/conversions/quote.
func createQuote(c *core.Call) {
	core.Create(c, quoteInput, c.Server.Config.App.CreateQuote, func(res *ledger.Result) any { return &quoteBody{renderQuote(conversions.QuoteOf(*res))} })
}

// quoteInput checks a quote request's shape, reporting every problem at
// once.
func quoteInput(req *quoteRequestBody) (app.QuoteInput, *ledger.Error) {
	var p core.Problems
	var in app.QuoteInput
	if req.From == nil {
		p.Add("from", "is required")
	}
	if req.To == nil {
		p.Add("to", "is required")
	}
	if len(p) > 0 {
		return in, p.Err()
	}
	from, fromOK := p.Currency("from.currency", req.From.Currency, true)
	to, toOK := p.Currency("to.currency", req.To.Currency, true)
	if fromOK && toOK && from.Code == to.Code {
		p.Add("to.currency", "must differ from from.currency")
	}
	in.FromCurrency, in.ToCurrency = from.Code, to.Code
	// In the currency of the side that carries it.
	side, given := amountSide(&p, req.From.Amount, req.To.Amount, ledger.SideFrom)
	in.Side = side
	if side != 0 && bySide(side, fromOK, toOK) {
		in.Amount = p.Amount(sideField(side), given, bySide(side, from, to))
	}
	return in, p.Err()
}

// getQuote: GET /v1/conversions/quote/{id}. A lapsed quote reads expired
// even before the leader's expiry tick records it.
func getQuote(c *core.Call) {
	at := c.Server.Config.Actors.Now().UnixMilli()
	core.Get(c, "id", "Conversion quote", func(st *ledger.Reader, org, id string) (conversions.Quote, bool) {
		return conversions.GetQuote(st, org, id, at)
	}, func(q *conversions.Quote) *quoteBody { return &quoteBody{renderQuote(q)} })
}

type executeRequestBody struct {
	QuoteID           *string `json:"quoteId"`
	ExternalReference *string `json:"externalReference"`
}

// executeConversion: POST /v1/conversions. 201 with the conversion; 200
// (idempotent-replayed) with the original conversion to a retry with its
// externalReference and quote, whenever it comes, and to a caller that
// joined an execution of the same quote already in flight; 409 duplicate
// (details.existingId) for a reference already used with another quote;
// 400 bad_request for an expired or executed quote (details.existingId
// names the conversion of an executed one). The reference is optional: a
// quote executes once either way.
func executeConversion(c *core.Call) {
	if in, ok := core.Input(c, executeInput); ok {
		r := c.Server.Config.App.ExecuteConversion(c.Caller(), in.quoteID, in.ref)
		c.Created(r, func(res *ledger.Result) any { return &conversionBody{renderConversion(conversions.Of(*res))} })
	}
}

// execution is what executes a quote: its id and the optional reference.
type execution struct{ quoteID, ref string }

// executeInput checks an execution request's shape, reporting every
// problem at once.
func executeInput(req *executeRequestBody) (in execution, e *ledger.Error) {
	var p core.Problems
	in.quoteID = p.Text("quoteId", req.QuoteID, true, 100)
	if req.ExternalReference != nil && *req.ExternalReference == "" {
		p.Add("externalReference", "must not be empty: leave it out for none")
	}
	in.ref = p.Text("externalReference", req.ExternalReference, false, core.ReferenceLenMax)
	return in, p.Err()
}

// listConversions: GET /v1/conversions, newest first.
func listConversions(c *core.Call) {
	core.List(c, listConversionsKind, core.Unfiltered, func(st *ledger.Reader, org string, _ struct{}, before ledger.Cursor, limit int) ledger.Page[conversions.Conversion] {
		return conversions.List(st, org, before, limit)
	}, renderConversion)
}

// getConversion: GET /v1/conversions/{id}.
func getConversion(c *core.Call) {
	core.Get(c, "id", "Conversion", conversions.Get, func(conv *conversions.Conversion) *conversionBody { return &conversionBody{renderConversion(conv)} })
}
