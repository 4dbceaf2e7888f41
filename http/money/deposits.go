package money

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/orders"
	"payments/rails"
)

// Sandbox deposits: POST /v1/simulations/virtual-account-deposit and
// POST /v1/simulations/crypto-deposit push a transfer into a virtual account
// or to a crypto address through the same ledger command a provider's
// deposit notification will use, so the collection, the credit and the
// events are those of a real deposit.
//
// Errors, in the order they are checked: validation_error (the body);
// not_found (no such virtual account or address in the organization);
// conflict (the externalReference was used for a different deposit); an
// identical request replays the original with 200; bad_request (a paused
// virtual account takes no deposits: this is the "does not support
// simulated deposits" case, and the only one, since every virtual account
// the sandbox issues is at a bank it simulates).
//
// The deposits themselves are the application's (app.App.Simulate…).

func init() {
	// A deposit's collection is a subject of its own kind (it carries its
	// deposit); it renders as GET /v1/collections/{id} does.
	core.RegisterEventRenderer(ledger.SubjectDepositCollection, core.RenderAs(renderCollection))

	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/virtual-account-deposit", Scope: ledger.ScopeSimulationsWrite, H: simulateVirtualAccountDeposit, Sim: &core.SimulationDoc{
			Operation: "virtual_account_deposit",
			Description: "Pushes a bank transfer of `amount` into one of your virtual accounts: a collection of type virtual_account is created and, " +
				"with outcome completed (the default), your balance is credited the amount, firing collection.pending, collection.completed and " +
				"account.credited; with outcome failed the collection fails and nothing is credited (collection.failed). A paused account " +
				"refuses deposits (400 bad_request). The same externalReference replays with 200; reused for a different deposit, 409 conflict.",
			Outcomes: []string{"completed", "failed"},
		}},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/crypto-deposit", Scope: ledger.ScopeSimulationsWrite, H: simulateCryptoDeposit, Sim: &core.SimulationDoc{
			Operation: "crypto_deposit",
			Description: "Sends `amount` of the address's asset to one of your crypto addresses: a collection of type crypto is created and, " +
				"with outcome completed (the default), your balance in the asset is credited, firing collection.pending, collection.completed and " +
				"account.credited; with outcome failed the collection fails and nothing is credited. The same externalReference replays with " +
				"200; reused for a different deposit, 409 conflict.",
			Outcomes: []string{"completed", "failed"},
		}},
	)
}

// simulatedDepositBody is the deposit a simulation's request describes,
// wherever it goes: how much is sent, the outcome asked for, and the
// caller's reference for it.
type simulatedDepositBody struct {
	Amount            core.Amount `json:"amount"`
	ExternalReference *string     `json:"externalReference"`
	Outcome           *string     `json:"outcome"`
}

// DepositRequestBody is a deposit simulation's body: the API's two
// simulation endpoints and the dashboard's sandbox form read it.
type DepositRequestBody struct {
	VirtualAccountID *string `json:"virtualAccountId"`
	CryptoAddressID  *string `json:"cryptoAddressId"`
	simulatedDepositBody
}

type virtualAccountDepositJSON struct {
	DepositID        string `json:"depositId"`
	CollectionID     string `json:"collectionId"`
	VirtualAccountID string `json:"virtualAccountId"`
	core.MoneyJSON
	RequestedOutcome string `json:"requestedOutcome"`
	Replayed         bool   `json:"replayed"`
}

type cryptoDepositJSON struct {
	DepositID       string `json:"depositId"`
	CollectionID    string `json:"collectionId"`
	CryptoAddressID string `json:"cryptoAddressId"`
	core.MoneyJSON
	Chain            string `json:"chain"`
	TxHash           string `json:"txHash"`
	RequestedOutcome string `json:"requestedOutcome"`
	Replayed         bool   `json:"replayed"`
}

func outcomeName(completed bool) string {
	if completed {
		return "completed"
	}
	return "failed"
}

func renderVirtualAccountDeposit(d *ledger.Deposit, replayed bool) virtualAccountDepositJSON {
	return virtualAccountDepositJSON{
		DepositID:        d.ID,
		CollectionID:     d.CollectionID,
		VirtualAccountID: d.VirtualAccountID,
		MoneyJSON:        core.MoneyOf(d.Amount, d.Currency),
		RequestedOutcome: outcomeName(d.Completed),
		Replayed:         replayed,
	}
}

func renderCryptoDeposit(d *ledger.Deposit, replayed bool) cryptoDepositJSON {
	return cryptoDepositJSON{
		DepositID:        d.ID,
		CollectionID:     d.CollectionID,
		CryptoAddressID:  d.CryptoAddressID,
		MoneyJSON:        core.MoneyOf(d.Amount, d.Currency),
		Chain:            rails.ChainName(d.Chain),
		TxHash:           d.SourceReference,
		RequestedOutcome: outcomeName(d.Completed),
		Replayed:         replayed,
	}
}

// DepositInput checks a deposit simulation body: virtualAccountId, or
// cryptoAddressId when crypto is set, with the amount still as text (its
// currency is where it goes).
func DepositInput(req *DepositRequestBody, crypto bool) (in app.DepositInput, e *ledger.Error) {
	var p core.Problems
	if crypto {
		if req.VirtualAccountID != nil {
			p.Add("virtualAccountId", "is not a known field: this endpoint takes cryptoAddressId")
		}
		in.To = p.Text("cryptoAddressId", req.CryptoAddressID, true, 100)
	} else {
		if req.CryptoAddressID != nil {
			p.Add("cryptoAddressId", "is not a known field: this endpoint takes virtualAccountId")
		}
		in.To = p.Text("virtualAccountId", req.VirtualAccountID, true, 100)
	}
	in.ExternalReference = p.Text("externalReference", req.ExternalReference, true, core.ReferenceLenMax)
	in.Completed = true
	if req.Outcome != nil {
		switch *req.Outcome {
		case "completed":
		case "failed":
			in.Completed = false
		default:
			p.Add("outcome", "must be one of completed, failed")
		}
	}
	if !req.Amount.Set {
		p.Add("amount", "is required")
	}
	in.Amount = req.Amount.App()
	return in, p.Err()
}

// depositInput reads and checks a deposit simulation's request.
func depositInput(c *core.Call, crypto bool) (in app.DepositInput, ok bool) {
	return core.SimulationInput(c, func(req *DepositRequestBody) (app.DepositInput, *ledger.Error) {
		return DepositInput(req, crypto)
	})
}

// DepositCollectionID is the collection a simulated deposit made: the
// deposit's own, or the order's it paid.
func DepositCollectionID(res *ledger.Result) string {
	switch {
	case orders.Of(*res) != nil:
		return orders.Of(*res).CollectionID
	case deposits.DepositOf(*res) != nil:
		return deposits.DepositOf(*res).CollectionID
	}
	return ""
}

// simulateVirtualAccountDeposit: POST /v1/simulations/virtual-account-deposit.
// Into a bank order's deposit account (orderVirtualAccount) it pays the
// order as the order-deposit simulation does; the answer is a virtual
// account deposit all the same, whose depositId is the collection the
// order books.
func simulateVirtualAccountDeposit(c *core.Call) {
	simulateDeposit(c, false, c.Server.Config.App.SimulateVirtualAccountDeposit, func(in *app.DepositInput, d *app.Deposited, res *ledger.Result) virtualAccountDepositJSON {
		o := orders.Of(*res)
		if o == nil {
			return renderVirtualAccountDeposit(deposits.DepositOf(*res), res.Replayed)
		}
		return virtualAccountDepositJSON{
			DepositID: o.CollectionID, CollectionID: o.CollectionID, VirtualAccountID: in.To,
			MoneyJSON: core.MoneyOf(d.Sent, o.Spec.FromCurrency), RequestedOutcome: outcomeName(in.Completed),
			Replayed: res.Replayed,
		}
	})
}

// simulateCryptoDeposit: POST /v1/simulations/crypto-deposit.
func simulateCryptoDeposit(c *core.Call) {
	simulateDeposit(c, true, c.Server.Config.App.SimulateCryptoDeposit, func(_ *app.DepositInput, _ *app.Deposited, res *ledger.Result) cryptoDepositJSON {
		return renderCryptoDeposit(deposits.DepositOf(*res), res.Replayed)
	})
}

// simulateDeposit answers a deposit simulation: the request read by
// depositInput (crypto: to an address), the deposit op makes as the caller,
// answered as created with render's account of it.
func simulateDeposit[S any](c *core.Call, crypto bool, op func(app.Caller, app.DepositInput) app.Deposited, render func(*app.DepositInput, *app.Deposited, *ledger.Result) S) {
	in, ok := depositInput(c, crypto)
	if !ok {
		return
	}
	d := op(c.Caller(), in)
	c.Created(d.Reply, core.Simulated(func(res *ledger.Result) S { return render(&in, &d, res) }))
}

// Collections made by deposits render their source in details.

type virtualAccountDepositDetails struct {
	VirtualAccountID string `json:"virtualAccountId"`
	DepositID        string `json:"depositId"`
	Bank             string `json:"bank"`
	AccountNumber    string `json:"accountNumber"`
	AccountName      string `json:"accountName"`
	SessionID        string `json:"sessionId"`
}

type cryptoDepositDetails struct {
	CryptoAddressID string  `json:"cryptoAddressId"`
	DepositID       string  `json:"depositId"`
	Hash            string  `json:"hash"`
	Chain           string  `json:"chain"`
	Address         string  `json:"address"`
	Tag             *string `json:"tag,omitempty"`
}

// chargeDetails is a mobile money charge's details: the wallet prompted.
type chargeDetails struct {
	Code          string `json:"code"`
	AccountNumber string `json:"accountNumber"`
}

// depositDetails is a collection's details, always an object (the
// contract types it so): its deposit's source, or for a charge the wallet
// that was prompted (empty for a collection an order books from a deposit
// to its instructions).
func depositDetails(c *ledger.Collection) *jsontext.Value {
	d := c.Deposit
	var v any
	if d == nil && c.Spec.PayerNumber == "" {
		v = &struct{}{}
	} else if d == nil {
		v = &chargeDetails{c.Spec.Method, c.Spec.PayerNumber}
	} else if d.Type == ledger.CollectionTypeVirtualAccount {
		v = &virtualAccountDepositDetails{d.VirtualAccountID, d.ID, d.Bank, d.AccountNumber, d.AccountName, d.SourceReference}
	} else {
		v = &cryptoDepositDetails{d.CryptoAddressID, d.ID, d.SourceReference, rails.ChainName(d.Chain), d.Address, core.Optional(d.Tag)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("http: deposit details: " + err.Error())
	}
	raw := jsontext.Value(b)
	return &raw
}

// depositCollectionFilter reads the filters virtualAccountId and
// cryptoAddressId of GET /v1/collections into f. A filtered list pages with
// cursors of its own kind.
func depositCollectionFilter(ctx *fasthttp.RequestCtx, f *ledger.CollectionFilter, p *core.Problems) {
	if v, ok := core.Query(ctx, "virtualAccountId"); ok {
		if !strings.HasPrefix(v, "va_") {
			p.Add("virtualAccountId", "must be a virtual account id (va_…)")
		}
		f.VirtualAccountID = v
	}
	if v, ok := core.Query(ctx, "cryptoAddressId"); ok {
		if !strings.HasPrefix(v, "addr_") {
			p.Add("cryptoAddressId", "must be a crypto address id (addr_…)")
		}
		f.CryptoAddressID = v
	}
}

// collectionListKind is the cursor kind of a collections list: deposit
// filters walk a different list, so their cursors are not interchangeable.
func collectionListKind(ctx *fasthttp.RequestCtx) core.ListKind {
	if ctx.QueryArgs().Has("virtualAccountId") || ctx.QueryArgs().Has("cryptoAddressId") {
		return listDepositCollections
	}
	return core.ListCollections
}
