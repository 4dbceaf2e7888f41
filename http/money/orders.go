package money

import (
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/orders"
)

// Orders: POST /v1/orders, the list with its seven filters, get by id (with
// the timeline) and by reference, and the sandbox's deposit into an order's
// instructions. The rules of the order's life are in package ledger/orders.

func init() {
	core.RegisterRoutes(core.Resource("/v1/orders", ledger.ScopeOrdersRead, ledger.ScopeOrdersWrite, core.Handlers{
		Create:      core.Creator(orderInput, core.App.CreateOrder, func(res *ledger.Result) any { return &orderBody{renderOrder(orders.Of(*res))} }),
		List:        core.Lister(listOrdersKind, orderFilter, orders.List, renderOrder),
		ByReference: core.ByReference("Order", orders.ByReference, orderDetailBody),
		Get:         core.ByID("Order", orders.Get, orderDetailBody), // with its timeline
	})...)
	// order.* events carry the order as GET /v1/orders/{id} shows it.
	core.RegisterEventRenderer(orders.Subject, core.RenderAs(renderOrderDetail))
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/order-deposit", Scope: ledger.ScopeSimulationsWrite, H: simulateOrderDeposit, Sim: &core.SimulationDoc{
			Operation: "order_deposit",
			Description: "Sends money to a bank or crypto order's deposit instructions: `amount` in the order's origin currency " +
				"(default: its expectedAmount; less is underpaid, more is overpaid). Outcome `confirmed` (default) lands the funds " +
				"and starts the payout; `unconfirmed` (crypto only) leaves the deposit awaiting confirmations until a later call " +
				"confirms or rejects it; `rejected` bounces it and the order fails. Mobile money orders are paid by their prompt, " +
				"whose outcome follows the last two decimal digits of the amount, as for collections. With an `externalReference` " +
				"a retry answers the original deposit (200) and the reference with another body is a duplicate (409).",
			Outcomes: []string{"confirmed", "unconfirmed", "rejected"},
		}},
	)
}

const listOrdersKind core.ListKind = 'o'

// Limits of an order's text fields, in bytes.
const (
	orderReferenceLenMax = 100
	orderNarrationLenMax = 200
)

type orderRequestBody struct {
	From *sideBody `json:"from"`
	To   *struct {
		sideBody
		Tag *string `json:"tag"`
	} `json:"to"`
	ExternalReference *string         `json:"externalReference"`
	Narration         *string         `json:"narration"`
	Metadata          core.JSONObject `json:"metadata"`
}

type orderBody struct {
	Order orderJSON `json:"order"`
}

// orderInput checks an order request's shape, reporting every problem at
// once.
func orderInput(body *orderRequestBody) (app.OrderInput, *ledger.Error) {
	var p core.Problems
	var in app.OrderInput
	spec := &in.Spec
	in.ExternalReference = p.Text("externalReference", body.ExternalReference, true, orderReferenceLenMax)
	spec.Narration = p.Text("narration", body.Narration, false, orderNarrationLenMax)
	spec.Metadata = p.Metadata("metadata", body.Metadata)
	if body.From == nil {
		p.Add("from", "is required")
	}
	if body.To == nil {
		p.Add("to", "is required")
	}
	if body.From == nil || body.To == nil {
		return in, p.Err()
	}
	from, to := body.From, body.To
	spec.FromMethod = p.Text("from.code", from.Code, true, 64)
	fromCur, fromOK := p.Currency("from.currency", from.Currency, true)
	spec.FromCurrency = fromCur.Code
	spec.ToMethod = p.Text("to.code", to.Code, true, 64)
	toCur, toOK := p.Currency("to.currency", to.Currency, true)
	spec.ToCurrency = toCur.Code
	spec.FromKYC = p.KYC("from.kyc", from.KYC)
	spec.ToKYC = p.KYC("to.kyc", to.KYC)

	// In the currency of the side that carries it.
	side, given := amountSide(&p, from.Amount, to.Amount, ledger.SideTo)
	spec.AmountSide = side
	if side != 0 && bySide(side, fromOK, toOK) {
		spec.Amount = p.Amount(sideField(side), given, bySide(side, fromCur, toCur))
	}
	spec.ToAccountNumber = p.Text("to.accountNumber", to.AccountNumber, true, 128)
	spec.ToTag = p.Text("to.tag", to.Tag, false, 100)
	spec.FromAccountNumber = p.Text("from.accountNumber", from.AccountNumber, false, 100)
	return in, p.Err()
}

// orderDetailBody is the body of a single-order GET, by id or by
// reference.
func orderDetailBody(o *orders.Order) *orderBody { return &orderBody{renderOrderDetail(o)} }

// renderOrderDetail is an order as a single-order GET shows it, with its
// timeline: by id, by reference, and in its events.
func renderOrderDetail(o *orders.Order) orderJSON {
	out := renderOrder(o)
	out.Timeline = orderTimeline(o)
	return out
}

// orderFilter reads GET /v1/orders' filters, every problem at once.
func orderFilter(c *core.Call) (orders.Filter, *ledger.Error) {
	var f orders.Filter
	var p core.Problems
	f.Status = core.QueryStatus(c, &p, orders.ParseStatus, "must be one of "+strings.Join(orders.StatusNames(), ", "))
	f.Currency = currencyFilter(c, &p)
	f.Origins = orderCurrencyList(c.Ctx, &p, "origin")
	f.Destinations = orderCurrencyList(c.Ctx, &p, "destination")
	f.ExternalReference, _ = core.Query(c.Ctx, "externalReference")
	f.CreatedFrom = p.QueryTime(c.Ctx, "from")
	f.CreatedBefore = p.QueryTime(c.Ctx, "to")
	return f, p.Err()
}

// orderCurrencyList reads a comma-separated list of currency codes.
func orderCurrencyList(ctx *fasthttp.RequestCtx, p *core.Problems, name string) []string {
	v, ok := core.Query(ctx, name)
	if !ok {
		return nil
	}
	codes := strings.Split(v, ",")
	if len(codes) > 50 {
		p.Add(name, "must list at most 50 currencies")
		return nil
	}
	out := make([]string, 0, len(codes))
	for _, code := range codes {
		code = strings.TrimSpace(code)
		if _, known := ledger.LookupCurrency(code); !known {
			p.Add(name, fmt.Sprintf("must be a comma-separated list of supported currencies; %q is not one", code))
			return nil
		}
		out = append(out, code)
	}
	return out
}

type orderDepositBody struct {
	OrderID *string `json:"orderId"`
	simulatedDepositBody
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
func simulateOrderDeposit(c *core.Call) {
	in, ok := core.SimulationInput(c, orderDepositInput)
	if !ok {
		return
	}
	d := c.Server.Config.App.SimulateOrderDeposit(c.Caller(), in)
	// 201 like the other deposit simulations: a deposit was made; 200 for
	// a retry under its reference, answered from the deposit it recorded.
	c.Created(d.Reply, core.Simulated(func(res *ledger.Result) orderDepositJSON {
		after := orders.Of(*res)
		return orderDepositJSON{
			Type: "order_deposit", OrderID: after.ID, Outcome: in.Outcome.String(),
			Amount: core.Money(d.Sent, after.Spec.FromCurrency), ExternalReference: core.Optional(in.ExternalReference), Order: renderOrder(after),
		}
	}))
}

// orderDepositInput checks an order deposit simulation's shape, reporting
// every problem at once.
func orderDepositInput(body *orderDepositBody) (app.OrderDepositInput, *ledger.Error) {
	var p core.Problems
	in := app.OrderDepositInput{Amount: body.Amount.App(), Outcome: orders.DepositConfirmed}
	in.OrderID = p.Text("orderId", body.OrderID, true, 64)
	in.ExternalReference = p.Text("externalReference", body.ExternalReference, false, core.ReferenceLenMax)
	if body.Outcome != nil {
		var ok bool
		if in.Outcome, ok = orders.ParseDepositOutcome(*body.Outcome); !ok {
			p.Add("outcome", "must be one of confirmed, unconfirmed, rejected")
		}
	}
	return in, p.Err()
}
