package core

import (
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/payouts", ledger.ScopePayoutsWrite, (*call).createPayout, nil},
		endpoint{fasthttp.MethodGet, "/v1/payouts", ledger.ScopePayoutsRead, (*call).listPayouts, nil},
		endpoint{fasthttp.MethodGet, "/v1/payouts/by-reference/{externalReference}", ledger.ScopePayoutsRead, (*call).getPayoutByReference, nil},
		endpoint{fasthttp.MethodGet, "/v1/payouts/{id}", ledger.ScopePayoutsRead, (*call).getPayout, nil},
	)
	renderPayoutEvent := renderAs(renderPayoutDetail)
	registerEventRenderer(ledger.SubjectPayout, renderPayoutEvent)
	registerEventRenderer(ledger.SubjectFXPayout, renderPayoutEvent) // a cross-currency payout, its FX joined
	registerEventRenderer(ledger.SubjectPayoutRouted, renderPayoutEvent)
	registerEventRenderer(ledger.SubjectFXPayoutRouted, renderPayoutEvent)
}

type payoutRequestBody struct {
	From *struct {
		Amount   amount     `json:"amount"`
		Currency *string    `json:"currency"`
		KYC      jsonObject `json:"kyc"`
	} `json:"from"`
	To *struct {
		Code          *string    `json:"code"`
		Currency      *string    `json:"currency"`
		AccountNumber *string    `json:"accountNumber"`
		Address       *string    `json:"address"`
		Tag           *string    `json:"tag"`
		RoutingNumber *string    `json:"routingNumber"`
		Amount        amount     `json:"amount"`
		KYC           jsonObject `json:"kyc"`
		RecipientID   *string    `json:"recipientId"` // fills the destination (recipients.go)
	} `json:"to"`
	Narration         *string    `json:"narration"`
	ExternalReference *string    `json:"externalReference"`
	Metadata          jsonObject `json:"metadata"`
}

type payoutBody struct {
	Payout payoutJSON `json:"payout"`
}

// createPayout: POST /v1/payouts.
func (c *call) createPayout() {
	var req payoutRequestBody
	if !c.decode(&req) {
		return
	}
	in, e := payoutInput(&req)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreatePayout(c.caller(), in)
	c.created(r, func(res *ledger.Result) any { return &payoutBody{renderPayout(res.Payout)} })
}

// payoutInput checks a payout request's shape, reporting every problem at
// once. A request naming a recipient gives no destination: the recipient
// does (so its method, currency and the amount's currency may be left to
// the operation).
func payoutInput(req *payoutRequestBody) (app.PayoutInput, *ledger.Error) {
	var in app.PayoutInput
	spec := &in.Spec
	to := req.To
	if to != nil && to.RecipientID != nil {
		var p problems
		spec.RecipientID = p.text("to.recipientId", to.RecipientID, true, 100)
		for _, f := range []struct {
			name  string
			given bool
		}{{"to.accountNumber", to.AccountNumber != nil}, {"to.address", to.Address != nil}, {"to.tag", to.Tag != nil},
			{"to.routingNumber", to.RoutingNumber != nil}} {
			if f.given {
				p.add(f.name, "must not be given with to.recipientId: the recipient supplies the destination")
			}
		}
		if e := p.err(); e != nil {
			return in, e
		}
	}
	byRecipient := spec.RecipientID != ""
	var p problems
	in.ExternalReference = p.text("externalReference", req.ExternalReference, true, payoutReferenceLenMax)
	spec.Narration = p.text("narration", req.Narration, false, narrationLenMax)
	if e := checkMetadata("metadata", req.Metadata); e != nil {
		p = append(p, e.Fields...)
	}
	spec.Metadata = req.Metadata.raw
	if to == nil {
		p.add("to", "is required")
		return in, p.err()
	}
	spec.Method = p.text("to.code", to.Code, !byRecipient, 64)
	cur, curOK := p.currency("to.currency", to.Currency, !byRecipient)
	spec.Currency = cur.Code
	if e := checkKYC("to.kyc", to.KYC); e != nil {
		p = append(p, e.Fields...)
	}
	spec.ToKYC = to.KYC.raw

	// The amount goes on exactly one side.
	var side amount
	switch {
	case to.Amount.set && req.From != nil && req.From.Amount.set:
		p.add("to.amount", "must not be given together with from.amount: put the amount on exactly one side")
	case to.Amount.set:
		side, spec.AmountSide = to.Amount, ledger.SideTo
	case req.From != nil && req.From.Amount.set:
		side, spec.AmountSide = req.From.Amount, ledger.SideFrom
	default:
		p.add("to.amount", "is required (or from.amount): put the amount on exactly one side")
	}
	var fromCur ledger.Currency
	if req.From != nil {
		var ok bool
		if fromCur, ok = p.currency("from.currency", req.From.Currency, false); ok {
			in.FromCurrency = fromCur.Code
		}
		if e := checkKYC("from.kyc", req.From.KYC); e != nil {
			p = append(p, e.Fields...)
		}
		spec.FromKYC = req.From.KYC.raw
	}
	switch {
	case spec.AmountSide == 0:
	case curOK:
		// In the currency of its side.
		amountCur := cur
		if spec.AmountSide == ledger.SideFrom && in.FromCurrency != "" {
			amountCur = fromCur
		}
		spec.Amount = p.amount(sideField(spec.AmountSide), side, amountCur)
	case byRecipient && to.Currency == nil:
		in.Amount = side.app() // in the recipient's currency
	}
	in.Destination = app.Destination{AccountNumber: to.AccountNumber, Address: to.Address, Tag: to.Tag, RoutingNumber: to.RoutingNumber}
	return in, p.err()
}

// sideField names the request field that carried the amount.
func sideField(side ledger.Side) string {
	if side == ledger.SideFrom {
		return "from.amount"
	}
	return "to.amount"
}

// getPayout: GET /v1/payouts/{id}.
func (c *call) getPayout() {
	if p, ok := lookup(c, "id", "Payout", func(st *ledger.Reader, id string) (ledger.Payout, bool) {
		p, ok := st.Payout(id)
		return p, ok && p.OrgID == c.org
	}); ok {
		c.ok(fasthttp.StatusOK, &payoutBody{renderPayoutDetail(&p)})
	}
}

// renderPayoutDetail is a payout as a single-payout GET shows it, with its
// timeline: by id, by reference, and in its events.
func renderPayoutDetail(p *ledger.Payout) payoutJSON {
	out := renderPayout(p)
	out.Timeline = payoutTimeline(p)
	return out
}

// getPayoutByReference: GET /v1/payouts/by-reference/{externalReference}.
func (c *call) getPayoutByReference() {
	if p, ok := lookup(c, "externalReference", "Payout", func(st *ledger.Reader, ref string) (ledger.Payout, bool) {
		return st.PayoutByReference(c.org, ref)
	}); ok {
		c.ok(fasthttp.StatusOK, &payoutBody{renderPayoutDetail(&p)})
	}
}

// listPayouts: GET /v1/payouts.
func (c *call) listPayouts() {
	limit, before, e := pageParams(c.ctx, listPayouts, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.PayoutFilter
	if v, ok := query(c.ctx, "status"); ok {
		st, ok := ledger.ParsePayoutStatus(v)
		if !ok {
			c.fail(ledger.FieldInvalid("status", "must be one of pending, processing, completed, failed"))
			return
		}
		f.Status = st
	}
	if v, ok := query(c.ctx, "recipientId"); ok {
		f.RecipientID = v
	}
	var page ledger.Page[ledger.Payout]
	page = c.s.cfg.Actors.Reader().Payouts(c.org, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(listPayouts, page, renderPayout))
}
