package core

import (
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

func init() {
	registerRoutes(endpoint{fasthttp.MethodPost, "/v1/simulations/fund-balance", ledger.ScopeSimulationsWrite, (*call).fundBalance, &simulationDoc{
		operation:   "fund_balance",
		description: "Credits a balance account with sandbox money, idempotent by externalReference.",
	}})
}

type fundBalanceRequestBody struct {
	Amount            amount  `json:"amount"`
	Currency          *string `json:"currency"`
	ExternalReference *string `json:"externalReference"`
}

type simulationBody struct {
	Simulation fundBalanceJSON `json:"simulation"`
}

type fundBalanceJSON struct {
	Type              string `json:"type"`
	TransactionID     string `json:"transactionId"`
	AccountID         string `json:"accountId"`
	Amount            string `json:"amount"`
	Currency          string `json:"currency"`
	NewBalance        string `json:"newBalance"`
	ExternalReference string `json:"externalReference"`
	Replayed          bool   `json:"replayed"`
}

// sandboxOnly answers 404 on production, where simulations do not exist.
func (c *call) sandboxOnly() bool {
	if c.s.cfg.Live {
		c.fail(errSandboxOnly)
		return false
	}
	return true
}

// errSandboxOnly answers a simulation on production: there is none.
var errSandboxOnly = &ledger.Error{Code: ledger.CodeNotFound, Message: "Simulation endpoint not found: simulations exist only on the sandbox stack"}

// fundBalance: POST /v1/simulations/fund-balance. Credits a sandbox balance
// at once, idempotent by externalReference.
func (c *call) fundBalance() {
	if !c.sandboxOnly() {
		return
	}
	var req fundBalanceRequestBody
	if !c.decode(&req) {
		return
	}
	in, e := fundBalanceInput(&req)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.FundBalance(c.caller(), in.currency, in.amount, in.ref)
	c.created(r, func(res *ledger.Result) any {
		f := res.Funding
		return &simulationBody{fundBalanceJSON{
			Type:              "fund_balance",
			TransactionID:     c.s.publicIDs().EntryID(f.EntrySeq),
			AccountID:         f.AccountNumber,
			Amount:            money(f.Amount, f.Currency),
			Currency:          f.Currency,
			NewBalance:        money(f.BalanceAfter, f.Currency),
			ExternalReference: f.ExternalReference,
			Replayed:          res.Replayed,
		}}
	})
}

// fundBalanceRequest is a checked request to fund a balance.
type fundBalanceRequest struct {
	currency string
	amount   ledger.Minor
	ref      string
}

// fundBalanceInput checks a request to fund a balance (the API's, or the
// dashboard's form in its shape).
func fundBalanceInput(req *fundBalanceRequestBody) (fundBalanceRequest, *ledger.Error) {
	var p problems
	ref := p.text("externalReference", req.ExternalReference, true, referenceLenMax)
	cur, curOK := p.currency("currency", req.Currency, true)
	if curOK && cur.Crypto {
		p.add("currency", "is a crypto currency: fund it with a deposit on its chain instead")
		curOK = false
	}
	var amt ledger.Minor
	if !req.Amount.set {
		p.add("amount", "is required")
	} else if curOK {
		amt = p.amount("amount", req.Amount, cur)
	}
	return fundBalanceRequest{cur.Code, amt, ref}, p.err()
}
