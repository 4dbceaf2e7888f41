package core

import (
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

// Orders: POST /v1/orders, the list with its seven filters, get by id (with
// the timeline) and by reference, and the sandbox's deposit into an order's
// instructions. The rules of the order's life are in ledger/order.go.

func init() {
	// order.* events carry the order as GET /v1/orders/{id} shows it.
	registerEventRenderer(ledger.SubjectOrder, renderAs(renderOrderDetail))
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/orders", ledger.ScopeOrdersWrite, (*call).createOrder, nil},
		endpoint{fasthttp.MethodGet, "/v1/orders", ledger.ScopeOrdersRead, (*call).listOrders, nil},
		endpoint{fasthttp.MethodGet, "/v1/orders/by-reference/{externalReference}", ledger.ScopeOrdersRead, (*call).getOrderByReference, nil},
		endpoint{fasthttp.MethodGet, "/v1/orders/{id}", ledger.ScopeOrdersRead, (*call).getOrder, nil},
		endpoint{fasthttp.MethodPost, "/v1/simulations/order-deposit", ledger.ScopeSimulationsWrite, (*call).simulateOrderDeposit, &simulationDoc{
			operation: "order_deposit",
			description: "Sends money to a bank or crypto order's deposit instructions: `amount` in the order's origin currency " +
				"(default: its expectedAmount; less is underpaid, more is overpaid). Outcome `confirmed` (default) lands the funds " +
				"and starts the payout; `unconfirmed` (crypto only) leaves the deposit awaiting confirmations until a later call " +
				"confirms or rejects it; `rejected` bounces it and the order fails. Mobile money orders are paid by their prompt, " +
				"whose outcome follows the last two decimal digits of the amount, as for collections. With an `externalReference` " +
				"a retry answers the original deposit (200) and the reference with another body is a duplicate (409).",
			outcomes: []string{"confirmed", "unconfirmed", "rejected"},
		}},
	)
}

const listOrdersKind listKind = 'o'

// Limits of an order's text fields, in bytes.
const (
	orderReferenceLenMax = 100
	orderNarrationLenMax = 200
)

type orderRequestBody struct {
	From *struct {
		Code          *string    `json:"code"`
		Currency      *string    `json:"currency"`
		AccountNumber *string    `json:"accountNumber"`
		Amount        amount     `json:"amount"`
		KYC           jsonObject `json:"kyc"`
	} `json:"from"`
	To *struct {
		Code          *string    `json:"code"`
		Currency      *string    `json:"currency"`
		AccountNumber *string    `json:"accountNumber"`
		Tag           *string    `json:"tag"`
		Amount        amount     `json:"amount"`
		KYC           jsonObject `json:"kyc"`
	} `json:"to"`
	ExternalReference *string    `json:"externalReference"`
	Narration         *string    `json:"narration"`
	Metadata          jsonObject `json:"metadata"`
}

type orderBody struct {
	Order orderJSON `json:"order"`
}

// createOrder: POST /v1/orders.
func (c *call) createOrder() {
	var body orderRequestBody
	if !c.decode(&body) {
		return
	}
	in, e := orderInput(&body)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateOrder(c.caller(), in)
	c.created(r, func(res *ledger.Result) any { return &orderBody{renderOrder(res.Order)} })
}

// orderInput checks an order request's shape, reporting every problem at
// once.
func orderInput(body *orderRequestBody) (app.OrderInput, *ledger.Error) {
	var p problems
	var in app.OrderInput
	spec := &in.Spec
	in.ExternalReference = p.text("externalReference", body.ExternalReference, true, orderReferenceLenMax)
	spec.Narration = p.text("narration", body.Narration, false, orderNarrationLenMax)
	if e := checkMetadata("metadata", body.Metadata); e != nil {
		p = append(p, e.Fields...)
	}
	spec.Metadata = body.Metadata.raw
	if body.From == nil {
		p.add("from", "is required")
	}
	if body.To == nil {
		p.add("to", "is required")
	}
	if body.From == nil || body.To == nil {
		return in, p.err()
	}
	from, to := body.From, body.To
	spec.FromMethod = p.text("from.code", from.Code, true, 64)
	fromCur, fromOK := p.currency("from.currency", from.Currency, true)
	spec.FromCurrency = fromCur.Code
	spec.ToMethod = p.text("to.code", to.Code, true, 64)
	toCur, toOK := p.currency("to.currency", to.Currency, true)
	spec.ToCurrency = toCur.Code
	for _, k := range []struct {
		field string
		o     jsonObject
	}{{"from.kyc", from.KYC}, {"to.kyc", to.KYC}} {
		if e := checkKYC(k.field, k.o); e != nil {
			p = append(p, e.Fields...)
		}
	}
	spec.FromKYC, spec.ToKYC = from.KYC.raw, to.KYC.raw

	// The amount goes on exactly one side, in that side's currency.
	switch {
	case from.Amount.set && to.Amount.set:
		p.add("to.amount", "must not be given together with from.amount: put the amount on exactly one side")
	case from.Amount.set:
		spec.AmountSide = ledger.SideFrom
		if fromOK {
			spec.Amount = p.amount("from.amount", from.Amount, fromCur)
		}
	case to.Amount.set:
		spec.AmountSide = ledger.SideTo
		if toOK {
			spec.Amount = p.amount("to.amount", to.Amount, toCur)
		}
	default:
		p.add("to.amount", "is required (or from.amount): put the amount on exactly one side")
	}
	spec.ToAccountNumber = p.text("to.accountNumber", to.AccountNumber, true, 128)
	spec.ToTag = p.text("to.tag", to.Tag, false, 100)
	spec.FromAccountNumber = p.text("from.accountNumber", from.AccountNumber, false, 100)
	return in, p.err()
}

// getOrder: GET /v1/orders/{id}, with its timeline.
func (c *call) getOrder() {
	if o, ok := lookup(c, "id", "Order", func(st *ledger.Reader, id string) (ledger.Order, bool) { return st.Order(c.org, id) }); ok {
		c.ok(fasthttp.StatusOK, &orderBody{renderOrderDetail(&o)})
	}
}

// renderOrderDetail is an order as a single-order GET shows it, with its
// timeline: by id, by reference, and in its events.
func renderOrderDetail(o *ledger.Order) orderJSON {
	out := renderOrder(o)
	out.Timeline = orderTimeline(o)
	return out
}

// getOrderByReference: GET /v1/orders/by-reference/{externalReference}.
func (c *call) getOrderByReference() {
	if o, ok := lookup(c, "externalReference", "Order", func(st *ledger.Reader, ref string) (ledger.Order, bool) {
		return st.OrderByReference(c.org, ref)
	}); ok {
		c.ok(fasthttp.StatusOK, &orderBody{renderOrderDetail(&o)})
	}
}

// listOrders: GET /v1/orders.
func (c *call) listOrders() {
	limit, before, e := pageParams(c.ctx, listOrdersKind, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.OrderFilter
	var p problems
	if v, ok := query(c.ctx, "status"); ok {
		if f.Status, ok = ledger.ParseOrderStatus(v); !ok {
			p.add("status", "must be one of "+strings.Join(ledger.OrderStatusNames(), ", "))
		}
	}
	if v, ok := query(c.ctx, "currency"); ok {
		if _, known := ledger.LookupCurrency(v); !known {
			p.add("currency", "is not a supported currency")
		}
		f.Currency = v
	}
	f.Origins = orderCurrencyList(c.ctx, &p, "origin")
	f.Destinations = orderCurrencyList(c.ctx, &p, "destination")
	f.ExternalReference, _ = query(c.ctx, "externalReference")
	var err *ledger.Error
	if f.CreatedFrom, err = queryTime(c.ctx, "from"); err != nil {
		p = append(p, err.Fields...)
	}
	if f.CreatedBefore, err = queryTime(c.ctx, "to"); err != nil {
		p = append(p, err.Fields...)
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	var page ledger.Page[ledger.Order]
	page = c.s.cfg.Actors.Reader().Orders(c.org, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(listOrdersKind, page, renderOrder))
}

// orderCurrencyList reads a comma-separated list of currency codes.
func orderCurrencyList(ctx *fasthttp.RequestCtx, p *problems, name string) []string {
	v, ok := query(ctx, name)
	if !ok {
		return nil
	}
	codes := strings.Split(v, ",")
	if len(codes) > 50 {
		p.add(name, "must list at most 50 currencies")
		return nil
	}
	out := make([]string, 0, len(codes))
	for _, code := range codes {
		code = strings.TrimSpace(code)
		if _, known := ledger.LookupCurrency(code); !known {
			p.add(name, fmt.Sprintf("must be a comma-separated list of supported currencies; %q is not one", code))
			return nil
		}
		out = append(out, code)
	}
	return out
}

type orderDepositBody struct {
	OrderID           *string `json:"orderId"`
	Amount            amount  `json:"amount"`
	Outcome           *string `json:"outcome"`
	ExternalReference *string `json:"externalReference"`
}

type orderDepositJSON struct {
	Type              string    `json:"type"`
	OrderID           string    `json:"orderId"`
	Outcome           string    `json:"outcome"`
	Amount            string    `json:"amount"`
	ExternalReference *string   `json:"externalReference"`
	Order             orderJSON `json:"order"`
}

// simulateOrderDeposit: POST /v1/simulations/order-deposit.
func (c *call) simulateOrderDeposit() {
	if !c.sandboxOnly() {
		return
	}
	var body orderDepositBody
	if !c.decode(&body) {
		return
	}
	var p problems
	in := app.OrderDepositInput{Amount: body.Amount.app(), Outcome: ledger.DepositConfirmed}
	in.OrderID = p.text("orderId", body.OrderID, true, 64)
	in.ExternalReference = p.text("externalReference", body.ExternalReference, false, referenceLenMax)
	if body.Outcome != nil {
		var ok bool
		if in.Outcome, ok = ledger.ParseDepositOutcome(*body.Outcome); !ok {
			p.add("outcome", "must be one of confirmed, unconfirmed, rejected")
		}
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	d := c.s.cfg.App.SimulateOrderDeposit(c.caller(), in)
	// 201 like the other deposit simulations: a deposit was made; 200 for
	// a retry under its reference, answered from the deposit it recorded.
	c.created(d.Reply, func(res *ledger.Result) any {
		after := res.Order
		return struct {
			Simulation orderDepositJSON `json:"simulation"`
		}{orderDepositJSON{
			Type: "order_deposit", OrderID: after.ID, Outcome: in.Outcome.String(),
			Amount: money(d.Sent, after.Spec.FromCurrency), ExternalReference: optional(in.ExternalReference), Order: renderOrder(after),
		}}
	})
}
