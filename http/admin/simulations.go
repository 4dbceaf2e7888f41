package admin

import (
	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
)

func init() {
	core.RegisterRoutes(core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/fund-balance", Scope: ledger.ScopeSimulationsWrite, H: fundBalance, Sim: &core.SimulationDoc{
		Operation:   "fund_balance",
		Description: "Credits a balance account with sandbox money, idempotent by externalReference.",
	}})
}

type FundBalanceRequestBody struct {
	core.MoneyBody
	ExternalReference *string `json:"externalReference"`
}

type fundBalanceJSON struct {
	Type          string `json:"type"`
	TransactionID string `json:"transactionId"`
	AccountID     string `json:"accountId"`
	core.MoneyJSON
	NewBalance        string `json:"newBalance"`
	ExternalReference string `json:"externalReference"`
	Replayed          bool   `json:"replayed"`
}

// fundBalance: POST /v1/simulations/fund-balance. Credits a sandbox balance
// at once, idempotent by externalReference.
func fundBalance(c *core.Call) {
	if in, ok := core.SimulationInput(c, FundBalanceInput); ok {
		r := c.Server.Config.App.FundBalance(c.Caller(), in.Currency, in.Amount, in.Ref)
		c.Created(r, core.Simulated(func(res *ledger.Result) fundBalanceJSON {
			f := res.Funding
			return fundBalanceJSON{
				Type:              "fund_balance",
				TransactionID:     c.Server.PublicIDs().EntryID(f.EntrySeq),
				AccountID:         f.AccountNumber,
				MoneyJSON:         core.MoneyOf(f.Amount, f.Currency),
				NewBalance:        core.Money(f.BalanceAfter, f.Currency),
				ExternalReference: f.ExternalReference,
				Replayed:          res.Replayed,
			}
		}))
	}
}

// fundBalanceRequest is a checked request to fund a balance.
type FundBalanceRequest struct {
	Currency string
	Amount   ledger.Minor
	Ref      string
}

// fundBalanceInput checks a request to fund a balance (the API's, or the
// dashboard's form in its shape).
func FundBalanceInput(req *FundBalanceRequestBody) (FundBalanceRequest, *ledger.Error) {
	var p core.Problems
	ref := p.Text("externalReference", req.ExternalReference, true, core.ReferenceLenMax)
	cur, curOK := p.Currency("currency", req.Currency, true)
	if curOK && cur.Crypto {
		p.Add("currency", "is a crypto currency: fund it with a deposit on its chain instead")
		curOK = false
	}
	amt := p.RequiredAmount("amount", req.Amount, cur, curOK)
	return FundBalanceRequest{cur.Code, amt, ref}, p.Err()
}
