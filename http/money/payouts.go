package money

import (
	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
)

func init() {
	core.RegisterRoutes(core.Resource("/v1/payouts", ledger.ScopePayoutsRead, ledger.ScopePayoutsWrite, core.Handlers{
		Create:      core.Creator(payoutInput, core.App.CreatePayout, func(res *ledger.Result) any { return &payoutBody{renderPayout(res.Payout)} }),
		List:        core.Lister(core.ListPayouts, payoutFilter, (*ledger.Reader).Payouts, renderPayout),
		ByReference: core.ByReference("Payout", (*ledger.Reader).PayoutByReference, payoutDetailBody),
		Get:         core.ByID("Payout", orgPayout, payoutDetailBody),
	})...)
	renderPayoutEvent := core.RenderAs(renderPayoutDetail)
	core.RegisterEventRenderer(ledger.SubjectPayout, renderPayoutEvent)
	core.RegisterEventRenderer(ledger.SubjectFXPayout, renderPayoutEvent) // a cross-currency payout, its FX joined
	core.RegisterEventRenderer(ledger.SubjectPayoutRouted, renderPayoutEvent)
	core.RegisterEventRenderer(ledger.SubjectFXPayoutRouted, renderPayoutEvent)
}

type payoutRequestBody struct {
	From *struct {
		Amount   core.Amount     `json:"amount"`
		Currency *string         `json:"currency"`
		KYC      core.JSONObject `json:"kyc"`
	} `json:"from"`
	To *struct {
		Code          *string         `json:"code"`
		Currency      *string         `json:"currency"`
		AccountNumber *string         `json:"accountNumber"`
		Address       *string         `json:"address"`
		Tag           *string         `json:"tag"`
		RoutingNumber *string         `json:"routingNumber"`
		Amount        core.Amount     `json:"amount"`
		KYC           core.JSONObject `json:"kyc"`
		RecipientID   *string         `json:"recipientId"` // fills the destination (recipients.go)
	} `json:"to"`
	Narration         *string         `json:"narration"`
	ExternalReference *string         `json:"externalReference"`
	Metadata          core.JSONObject `json:"metadata"`
}

type payoutBody struct {
	Payout payoutJSON `json:"payout"`
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
		var p core.Problems
		spec.RecipientID = p.Text("to.recipientId", to.RecipientID, true, 100)
		for _, f := range []struct {
			name  string
			given bool
		}{{"to.accountNumber", to.AccountNumber != nil}, {"to.address", to.Address != nil}, {"to.tag", to.Tag != nil},
			{"to.routingNumber", to.RoutingNumber != nil}} {
			if f.given {
				p.Add(f.name, "must not be given with to.recipientId: the recipient supplies the destination")
			}
		}
		if e := p.Err(); e != nil {
			return in, e
		}
	}
	byRecipient := spec.RecipientID != ""
	var p core.Problems
	in.ExternalReference = p.Text("externalReference", req.ExternalReference, true, core.PayoutReferenceLenMax)
	spec.Narration = p.Text("narration", req.Narration, false, core.NarrationLenMax)
	spec.Metadata = p.Metadata("metadata", req.Metadata)
	if to == nil {
		p.Add("to", "is required")
		return in, p.Err()
	}
	spec.Method = p.Text("to.code", to.Code, !byRecipient, 64)
	cur, curOK := p.Currency("to.currency", to.Currency, !byRecipient)
	spec.Currency = cur.Code
	spec.ToKYC = p.KYC("to.kyc", to.KYC)

	var fromAmount core.Amount
	if req.From != nil {
		fromAmount = req.From.Amount
	}
	var given core.Amount
	spec.AmountSide, given = amountSide(&p, fromAmount, to.Amount, ledger.SideTo)
	var fromCur ledger.Currency
	if req.From != nil {
		var ok bool
		if fromCur, ok = p.Currency("from.currency", req.From.Currency, false); ok {
			in.FromCurrency = fromCur.Code
		}
		spec.FromKYC = p.KYC("from.kyc", req.From.KYC)
	}
	switch {
	case spec.AmountSide == 0:
	case curOK:
		// In the currency of its side.
		amountCur := cur
		if spec.AmountSide == ledger.SideFrom && in.FromCurrency != "" {
			amountCur = fromCur
		}
		spec.Amount = p.Amount(sideField(spec.AmountSide), given, amountCur)
	case byRecipient && to.Currency == nil:
		in.Amount = given.App() // in the recipient's currency
	}
	in.Destination = app.Destination{AccountNumber: to.AccountNumber, Address: to.Address, Tag: to.Tag, RoutingNumber: to.RoutingNumber}
	return in, p.Err()
}

// orgPayout is org's payout id: another organization's is none.
func orgPayout(st *ledger.Reader, org, id string) (ledger.Payout, bool) {
	p, ok := st.Payout(id)
	return p, ok && p.OrgID == org
}

// payoutDetailBody is the body of a single-payout GET, by id or by
// reference.
func payoutDetailBody(p *ledger.Payout) *payoutBody { return &payoutBody{renderPayoutDetail(p)} }

// renderPayoutDetail is a payout as a single-payout GET shows it, with its
// timeline: by id, by reference, and in its events.
func renderPayoutDetail(p *ledger.Payout) payoutJSON {
	out := renderPayout(p)
	out.Timeline = payoutTimeline(p)
	return out
}

// payoutFilter reads GET /v1/payouts' filters: status and recipientId.
func payoutFilter(c *core.Call) (ledger.PayoutFilter, *ledger.Error) {
	var f ledger.PayoutFilter
	var p core.Problems
	f.Status = core.QueryStatus(c, &p, ledger.ParsePayoutStatus, "must be one of pending, processing, completed, failed")
	f.RecipientID, _ = core.Query(c.Ctx, "recipientId")
	return f, p.Err()
}
