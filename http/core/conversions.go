package core

import (
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

func init() {
	renderConversionEvent := renderAs(renderConversion)
	registerEventRenderer(ledger.SubjectConversion, renderConversionEvent)
	registerEventRenderer(ledger.SubjectConversionRef, renderConversionEvent) // one executed under an externalReference
}

// Quotes and conversions: priced and executed by the application
// (app.App.CreateQuote, ExecuteConversion).
//
// Reads of quotes and conversions need balances:read, like the balances
// they move; creating and executing quotes need conversions:write.

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/conversions/quote", ledger.ScopeConversionsWrite, (*call).createQuote, nil},
		endpoint{fasthttp.MethodGet, "/v1/conversions/quote/{id}", ledger.ScopeBalancesRead, (*call).getQuote, nil},
		endpoint{fasthttp.MethodPost, "/v1/conversions", ledger.ScopeConversionsWrite, (*call).executeConversion, nil},
		endpoint{fasthttp.MethodGet, "/v1/conversions", ledger.ScopeBalancesRead, (*call).listConversions, nil},
		endpoint{fasthttp.MethodGet, "/v1/conversions/{id}", ledger.ScopeBalancesRead, (*call).getConversion, nil},
	)
}

// listConversionsKind tags conversion list cursors.
const listConversionsKind listKind = 'v'

type conversionSideJSON struct {
	AccountNumber *string `json:"accountNumber"`
	Amount        string  `json:"amount"`
	Currency      string  `json:"currency"`
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

func renderQuote(q *ledger.Quote) quoteJSON {
	return quoteJSON{
		ID:        q.ID,
		Status:    q.Status.String(),
		From:      conversionSideJSON{optional(q.FromAccount), money(q.FromAmount, q.FromCurrency), q.FromCurrency},
		To:        conversionSideJSON{optional(q.ToAccount), money(q.ToAmount, q.ToCurrency), q.ToCurrency},
		Rate:      q.Rate,
		ExpiresAt: timestamp(q.ExpiresAt),
		CreatedAt: timestamp(q.CreatedAt),
		UpdatedAt: timestamp(q.UpdatedAt),
	}
}

func renderConversion(c *ledger.Conversion) conversionJSON {
	var completedAt *string
	if c.Status == ledger.ConversionCompleted {
		completedAt = optionalTimestamp(c.CompletedAt)
	}
	return conversionJSON{
		ID:            c.ID,
		Status:        c.Status.String(),
		QuoteID:       optional(c.QuoteID),
		From:          conversionSideJSON{optional(c.FromAccount), money(c.FromAmount, c.FromCurrency), c.FromCurrency},
		To:            conversionSideJSON{optional(c.ToAccount), money(c.ToAmount, c.ToCurrency), c.ToCurrency},
		Rate:          c.Rate,
		StatusMessage: optional(c.StatusMessage),
		CompletedAt:   completedAt,
		CreatedAt:     timestamp(c.CreatedAt),
		UpdatedAt:     timestamp(c.UpdatedAt),

		ExternalReference: optional(c.ExternalReference),
	}
}

type quoteBody struct {
	Quote quoteJSON `json:"quote"`
}

type conversionBody struct {
	Conversion conversionJSON `json:"conversion"`
}

type quoteSideBody struct {
	Amount   amount  `json:"amount"`
	Currency *string `json:"currency"`
}

type quoteRequestBody struct {
	From *quoteSideBody `json:"from"`
	To   *quoteSideBody `json:"to"`
}

// createQuote: POST /v1/conversions/quote.
func (c *call) createQuote() {
	var req quoteRequestBody
	if !c.decode(&req) {
		return
	}
	in, e := quoteInput(&req)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateQuote(c.caller(), in)
	c.created(r, func(res *ledger.Result) any { return &quoteBody{renderQuote(res.Quote)} })
}

// quoteInput checks a quote request's shape, reporting every problem at
// once.
func quoteInput(req *quoteRequestBody) (app.QuoteInput, *ledger.Error) {
	var p problems
	var in app.QuoteInput
	if req.From == nil {
		p.add("from", "is required")
	}
	if req.To == nil {
		p.add("to", "is required")
	}
	if len(p) > 0 {
		return in, p.err()
	}
	from, fromOK := p.currency("from.currency", req.From.Currency, true)
	to, toOK := p.currency("to.currency", req.To.Currency, true)
	if fromOK && toOK && from.Code == to.Code {
		p.add("to.currency", "must differ from from.currency")
	}
	in.FromCurrency, in.ToCurrency = from.Code, to.Code
	switch {
	case req.From.Amount.set && req.To.Amount.set:
		p.add("to.amount", "must not be given together with from.amount: put the amount on exactly one side")
	case req.From.Amount.set:
		in.Side = ledger.SideFrom
		if fromOK {
			in.Amount = p.amount("from.amount", req.From.Amount, from)
		}
	case req.To.Amount.set:
		in.Side = ledger.SideTo
		if toOK {
			in.Amount = p.amount("to.amount", req.To.Amount, to)
		}
	default:
		p.add("from.amount", "is required (or to.amount): put the amount on exactly one side")
	}
	return in, p.err()
}

// getQuote: GET /v1/conversions/quote/{id}. A lapsed quote reads expired
// even before the leader's expiry tick records it.
func (c *call) getQuote() {
	at := c.s.cfg.Actors.Now().UnixMilli()
	if q, ok := lookup(c, "id", "Conversion quote", func(st *ledger.Reader, id string) (ledger.Quote, bool) {
		return st.Quote(c.org, id, at)
	}); ok {
		c.ok(fasthttp.StatusOK, &quoteBody{renderQuote(&q)})
	}
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
func (c *call) executeConversion() {
	var req executeRequestBody
	if !c.decode(&req) {
		return
	}
	var p problems
	id := p.text("quoteId", req.QuoteID, true, 100)
	if req.ExternalReference != nil && *req.ExternalReference == "" {
		p.add("externalReference", "must not be empty: leave it out for none")
	}
	ref := p.text("externalReference", req.ExternalReference, false, referenceLenMax)
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.ExecuteConversion(c.caller(), id, ref)
	c.created(r, func(res *ledger.Result) any { return &conversionBody{renderConversion(res.Conversion)} })
}

// listConversions: GET /v1/conversions, newest first.
func (c *call) listConversions() {
	limit, before, e := pageParams(c.ctx, listConversionsKind, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var page ledger.Page[ledger.Conversion]
	page = c.s.cfg.Actors.Reader().Conversions(c.org, before, limit)
	c.ok(fasthttp.StatusOK, newList(listConversionsKind, page, renderConversion))
}

// getConversion: GET /v1/conversions/{id}.
func (c *call) getConversion() {
	if conv, ok := lookup(c, "id", "Conversion", func(st *ledger.Reader, id string) (ledger.Conversion, bool) {
		return st.Conversion(c.org, id)
	}); ok {
		c.ok(fasthttp.StatusOK, &conversionBody{renderConversion(&conv)})
	}
}
