package http

import (
	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/ledger"
	"payments/rails"
)

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
	if c.s.cfg.NoProvider && !c.crossCurrencyRateAvailable() {
		return
	}
	if !c.railsAvailable() {
		return
	}
	var req payoutRequestBody
	if !c.decode(&req) || !c.fillPayoutFromRecipient(&req) {
		return
	}
	spec, methodType, fx, e := c.s.payoutSpecPriced(&req, c.fxPricerFor(req.ExternalReference))
	if e != nil {
		c.fail(e)
		return
	}
	if req.To.RecipientID != nil {
		spec.RecipientID = *req.To.RecipientID
	}
	// The debit's USD value: a cross-currency payout into USD at its own
	// rate, anything else at the current rate of the debited currency.
	debitCurrency, ownRate := spec.Currency, ""
	if fx != nil {
		debitCurrency = fx.FromCurrency
		if spec.Currency == "USD" {
			ownRate = fx.Rate
		}
	}
	spend, e := c.spendFor(debitCurrency, ownRate)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.Actors.CreatePayout(actors.PayoutRequest{
		OrgID:             c.org,
		ExternalReference: *req.ExternalReference,
		Attempt:           c.s.attemptOf(c.ctx),
		Spec:              spec,
		MethodType:        methodType,
		FX:                fx,
		Spend:             spend,
	})
	c.created(r, func(res *ledger.Result) any { return &payoutBody{renderPayout(res.Payout)} })
}

// crossCurrencyRateAvailable answers a cross-currency payout whose pair
// has no rate right now (503 rate_unavailable, or 400 for a currency the
// source does not price) and reports false; it lets anything else through.
// The rate is asked first because without it nothing can be priced, rail
// or not. A body it cannot read is left to the normal path.
func (c *call) crossCurrencyRateAvailable() bool {
	var peek payoutRequestBody
	body, e := jsonBody(c.ctx)
	if e != nil || decodeBody(body, &peek) != nil || peek.From == nil || peek.To == nil ||
		peek.From.Currency == nil || peek.To.Currency == nil {
		return true
	}
	from, ok1 := ledger.LookupCurrency(*peek.From.Currency)
	to, ok2 := ledger.LookupCurrency(*peek.To.Currency)
	if !ok1 || !ok2 || from.Code == to.Code {
		return true
	}
	if _, e := c.rate(from.Code, to.Code); e != nil {
		c.fail(e)
		return false
	}
	return true
}

// created answers a create: 201 for a new resource, 200 with the
// idempotent-replayed header for a replay, the error otherwise (with the
// header too when it repeats the refusal an earlier attempt got).
func (c *call) created(r actors.Reply, body func(*ledger.Result) any) {
	switch {
	case r.Err != nil:
		c.fail(errorFromActors(r.Err))
	case r.Result.Err != nil:
		if r.Result.Replayed {
			c.ctx.Response.Header.Set("idempotent-replayed", "true")
		}
		c.fail(r.Result.Err)
	case r.Result.Replayed:
		c.ctx.Response.Header.Set("idempotent-replayed", "true")
		c.ok(fasthttp.StatusOK, body(&r.Result))
	default:
		c.ok(fasthttp.StatusCreated, body(&r.Result))
	}
}

// fxPricerFor returns how to price a cross-currency payout with reference
// ref: at the current all-in rate (priceFXPayout), except that a retry of a
// cross-currency payout that exists keeps the price it was created at, so
// that a replay is a replay (200) whatever the rate, or the rate source,
// does meanwhile. A changed retry is priced afresh and refused as a
// duplicate by the ledger.
func (c *call) fxPricerFor(ref *string) fxPricer {
	return func(from, to string, side ledger.Side, amount ledger.Minor) (*actors.FXPricing, *ledger.Error) {
		// Only cross-currency payouts get here, so same-currency ones pay
		// nothing for the lookup.
		var prev ledger.Payout
		var found bool
		if ref != nil {
			prev, found = c.s.cfg.Actors.Reader().PayoutByReference(c.org, *ref)
		}
		if !found || prev.FX == nil || from != prev.FX.FromCurrency || to != prev.Spec.Currency ||
			side != prev.Spec.AmountSide || amount != prev.RequestedSpec().Amount {
			return c.priceFXPayout(from, to, side, amount)
		}
		return &actors.FXPricing{FromCurrency: from, FromAmount: prev.FX.FromAmount, ToAmount: prev.Spec.Amount, Rate: prev.FX.Rate}, nil
	}
}

// priceFXPayout prices a cross-currency payout of amount on side at the
// current all-in rate: the side the caller left out is computed
// (rails.ConvertTo rounds the from amount up, rails.ConvertFrom the to
// amount down); the method's limits apply to the amount delivered.
func (c *call) priceFXPayout(from, to string, side ledger.Side, amount ledger.Minor) (*actors.FXPricing, *ledger.Error) {
	r, e := c.rate(from, to)
	if e != nil {
		return nil, e
	}
	fx := &actors.FXPricing{FromCurrency: from, Rate: r.String()}
	var err error
	if side == ledger.SideFrom {
		fx.FromAmount = amount
		fx.ToAmount, err = rails.ConvertFrom(r, amount)
	} else {
		fx.ToAmount = amount
		fx.FromAmount, err = rails.ConvertTo(r, amount)
	}
	switch {
	case err != nil:
		return nil, ledger.FieldInvalid(sideField(side), "is out of range at the current rate "+r.String())
	case fx.ToAmount <= 0:
		return nil, ledger.FieldInvalid(sideField(side), "is too small: it converts to nothing in "+to+" at the current rate "+r.String())
	}
	return fx, nil
}

type fxPricer func(from, to string, side ledger.Side, amount ledger.Minor) (*actors.FXPricing, *ledger.Error)

func (s *Server) payoutSpecPriced(req *payoutRequestBody, price fxPricer) (ledger.PayoutSpec, string, *actors.FXPricing, *ledger.Error) {
	var p problems
	var spec ledger.PayoutSpec
	p.text("externalReference", req.ExternalReference, true, payoutReferenceLenMax)
	spec.Narration = p.text("narration", req.Narration, false, narrationLenMax)
	if e := checkMetadata("metadata", req.Metadata); e != nil {
		p = append(p, e.Fields...)
	}
	spec.Metadata = req.Metadata.raw
	if req.To == nil {
		p.add("to", "is required")
		return spec, "", nil, p.err()
	}
	to := req.To
	spec.Method = p.text("to.code", to.Code, true, 64)
	cur, curOK := p.currency("to.currency", to.Currency, true)
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
	var fromCur ledger.Currency // set for a cross-currency payout
	if req.From != nil {
		if from, ok := p.currency("from.currency", req.From.Currency, false); ok && curOK && from.Code != cur.Code {
			fromCur = from
		}
		if e := checkKYC("from.kyc", req.From.KYC); e != nil {
			p = append(p, e.Fields...)
		}
		spec.FromKYC = req.From.KYC.raw
	}
	if curOK && spec.AmountSide != 0 {
		amountCur := cur
		if fromCur.Code != "" && spec.AmountSide == ledger.SideFrom {
			amountCur = fromCur
		}
		spec.Amount = p.amount(sideField(spec.AmountSide), side, amountCur)
	}
	if len(p) > 0 {
		return spec, "", nil, p.err()
	}

	var fx *actors.FXPricing
	delivered, amountField := spec.Amount, sideField(spec.AmountSide)
	if spec.AmountSide == ledger.SideFrom {
		// from.amount is the whole debit: the fee comes out of it, and what
		// is left is converted and delivered (the account actor splits it
		// the same way).
		if m, ok := s.cfg.Catalogue.Method(spec.Method); ok {
			delivered, _ = ledger.SplitPayoutDebit(m.Type, spec.Amount)
		}
		if delivered <= 0 {
			return spec, "", nil, ledger.FieldInvalid(amountField, "is too small to cover the fee")
		}
	}
	if fromCur.Code != "" {
		var e *ledger.Error
		if fx, e = price(fromCur.Code, spec.Currency, spec.AmountSide, delivered); e != nil {
			return spec, "", nil, e
		}
		delivered, amountField = fx.ToAmount, "to.amount"
	}
	method, e := s.cfg.Catalogue.Check(rails.Payout, "to.code", amountField, spec.Method, spec.Currency, delivered)
	if e != nil {
		return spec, "", nil, e
	}
	switch method.Type {
	case "crypto":
		spec.Address = p.text("to.address", to.Address, true, 128)
		spec.Tag = p.text("to.tag", to.Tag, false, 64)
		if spec.Address != "" {
			if err := rails.ValidateAddress(method.Chain, spec.Address); err != nil {
				p.add("to.address", addressReason(err))
			}
		}
		if to.AccountNumber != nil {
			p.add("to.accountNumber", "must not be given for a crypto method; use to.address")
		}
	default:
		spec.AccountNumber = p.text("to.accountNumber", to.AccountNumber, true, 50)
		if spec.AccountNumber != "" {
			if method.Type == "mobile_money" {
				spec.AccountNumber = p.phone("to.accountNumber", spec.AccountNumber)
			} else {
				p.alnum("to.accountNumber", spec.AccountNumber, 5, 34)
			}
		}
		if to.Address != nil {
			p.add("to.address", "must not be given for a "+methodTypeName(method.Type)+" method; use to.accountNumber")
		}
		if to.Tag != nil {
			p.add("to.tag", "is only for crypto methods")
		}
	}
	if e := p.err(); e != nil {
		return spec, "", nil, e
	}
	return spec, method.Type, fx, nil
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

func notFound(resource string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeNotFound, Message: resource + " not found"}
}
