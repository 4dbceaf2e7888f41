package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/orders"
	"payments/rails"
)

// Sandbox deposits: money pushed into a virtual account, to a crypto
// address or into an order's instructions through the same ledger
// commands a provider's deposit notification will use, so that the
// collection, the credit and the events are those of a real deposit. The
// amount's currency is that of where the money goes, so the operations
// read the amount themselves.

// DepositInput is a simulated deposit, its shape checked.
type DepositInput struct {
	// To is the virtual account's id (a bank order's deposit account
	// among them) or the crypto address's.
	To                string
	Amount            Amount
	ExternalReference string // "" for none (order deposits only)
	Completed         bool
}

// OrderDepositInput is a simulated deposit into an order's instructions.
type OrderDepositInput struct {
	OrderID           string
	Amount            Amount // unset: the order's expected amount
	Outcome           orders.DepositOutcome
	ExternalReference string
}

// Deposited is a simulated deposit's answer: the ledger's, and the amount
// sent, in the currency of where it went.
type Deposited struct {
	actors.Reply
	Sent ledger.Minor
}

// SimulateVirtualAccountDeposit pushes a bank transfer into a virtual
// account: a deposit and its collection (deposits.DepositOf), completed or
// failed. Into a bank order's deposit account it pays the order as
// SimulateOrderDeposit does (orders.Of), and a reference used for other
// funding is a conflict, as for any virtual account deposit. Refusals:
// not_found (no such account; on the production stack, always: no
// deposit is simulated there), validation_error (the amount in its
// currency), conflict, bad_request for a paused account.
func (a *App) SimulateVirtualAccountDeposit(c Caller, in DepositInput) Deposited {
	if e := a.sandboxOnly(); e != nil {
		return Deposited{Reply: refused(e)}
	}
	if o, va, ok := a.orderOfVirtualAccount(c.OrgID, in.To); ok {
		amt, e := depositAmount(in.Amount, va.Currency)
		if e != nil {
			return Deposited{Reply: refused(e)}
		}
		outcome := orders.DepositConfirmed
		if !in.Completed {
			outcome = orders.DepositRejected
		}
		r := a.sys.DepositOrder(c.OrgID, o.ID, amt, outcome, in.ExternalReference)
		if e := r.Result.Err; e != nil && e.Code == ledger.CodeDuplicate {
			// This endpoint's answer to a reference reused for other
			// funding, whichever kind of deposit holds it.
			r.Result.Err = deposits.Conflict()
		}
		return Deposited{Reply: r, Sent: amt}
	}
	va, ok := deposits.GetVirtualAccount(a.Reader(), c.OrgID, in.To)
	if !ok {
		return Deposited{Reply: refused(&ledger.Error{Code: ledger.CodeNotFound, Message: "Virtual account not found"})}
	}
	bank, _ := a.cfg.Catalogue.VirtualAccountMethod(va.Currency)
	fees, hasFees := bank.Fees(rails.Deposit)
	return a.simulateDeposit(c, in, simulatedDeposit{
		currency: va.Currency, fees: fees, hasFees: hasFees, served: va.Currency + " virtual accounts",
		idPrefix: "vad_", failure: "The sending bank reversed the transfer (simulated failure)",
		to:     func(cmd *deposits.Receive) { cmd.VirtualAccountID = va.ID },
		source: func(seed []byte) string { return rails.SandboxSessionID(seed) },
	})
}

// SimulateCryptoDeposit sends an amount of a crypto address's asset to
// it: a deposit and its collection (deposits.DepositOf), completed or failed.
// Refusals: not_found (on the production stack, always), validation_error,
// conflict.
func (a *App) SimulateCryptoDeposit(c Caller, in DepositInput) Deposited {
	if e := a.sandboxOnly(); e != nil {
		return Deposited{Reply: refused(e)}
	}
	addr, ok := deposits.GetCryptoAddress(a.Reader(), c.OrgID, in.To)
	if !ok {
		return Deposited{Reply: refused(&ledger.Error{Code: ledger.CodeNotFound, Message: "Crypto address not found"})}
	}
	network, _ := a.cfg.Catalogue.Network(addr.Currency, addr.Chain)
	fees, hasFees := network.Fees(rails.Deposit)
	return a.simulateDeposit(c, in, simulatedDeposit{
		currency: addr.Currency, fees: fees, hasFees: hasFees, served: addr.Currency + " on " + rails.ChainName(addr.Chain),
		idPrefix: "cdp_", failure: "The transaction failed on chain (simulated failure)",
		to:     func(cmd *deposits.Receive) { cmd.CryptoAddressID = addr.ID },
		source: func(seed []byte) string { return rails.SandboxTxHash(addr.Chain, seed) },
	})
}

// simulatedDeposit is where a simulated deposit goes (a virtual account or
// a crypto address) and what of it differs between the two.
type simulatedDeposit struct {
	currency string
	fees     ledger.FeeSchedule // the destination method's deposit fees
	hasFees  bool               // false: no method of the catalogue takes deposits there
	served   string             // the destination, as a refusal names it
	idPrefix string             // of the deposit's id
	failure  string             // the deposit's message when it fails
	to       func(*deposits.Receive)
	// source is the rail's reference of the transfer, drawn from seed (the
	// same for a retry under the same externalReference).
	source func(seed []byte) string
}

// simulateDeposit proposes the deposit of in to where d says.
func (a *App) simulateDeposit(c Caller, in DepositInput, d simulatedDeposit) Deposited {
	seed, e := a.depositSeed(c.OrgID)
	if e != nil {
		return Deposited{Reply: refused(e)}
	}
	amt, e := depositAmount(in.Amount, d.currency)
	if e != nil {
		return Deposited{Reply: refused(e)}
	}
	if !d.hasFees {
		return Deposited{Reply: refused(noDeposits(d.served))}
	}
	cmd := &deposits.Receive{
		At:                a.sys.Now().UnixMilli(),
		ID:                actors.NewID(d.idPrefix),
		CollectionID:      actors.NewID("col_"),
		OrgID:             c.OrgID,
		Amount:            amt,
		Fee:               d.fees.Fee(amt),
		Completed:         in.Completed,
		ExternalReference: in.ExternalReference,
		SourceReference:   d.source([]byte(seed + in.ExternalReference)),
	}
	d.to(cmd)
	if !in.Completed {
		cmd.Message = d.failure
	}
	return Deposited{Reply: a.propose(cmd), Sent: amt}
}

// SimulateOrderDeposit sends money to an order's instructions
// (orders.Of): the amount given, in the order's origin currency, or
// what the order expects (or has awaiting confirmations). Sent is what was
// sent: for a retry under a reference, what the original deposit sent.
// Sandbox only: not_found on the production stack.
func (a *App) SimulateOrderDeposit(c Caller, in OrderDepositInput) Deposited {
	if e := a.sandboxOnly(); e != nil {
		return Deposited{Reply: refused(e)}
	}
	o, found := orders.Get(a.Reader(), c.OrgID, in.OrderID)
	if !found {
		return Deposited{Reply: refused(&ledger.Error{Code: ledger.CodeNotFound, Message: "Order not found"})}
	}
	var amt ledger.Minor
	if in.Amount.Set {
		var e *ledger.Error
		if amt, e = depositAmount(in.Amount, o.Spec.FromCurrency); e != nil {
			return Deposited{Reply: refused(e)}
		}
	}
	r := a.sys.DepositOrder(c.OrgID, in.OrderID, amt, in.Outcome, in.ExternalReference)
	d := Deposited{Reply: r}
	if res := &r.Result; r.Err == nil && res.Err == nil && orders.Of(*res) != nil {
		d.Sent = (&orders.DepositCommand{Amount: amt}).Sent(orders.Of(*res))
		if od := orders.DepositOf(*res); od != nil {
			d.Sent = od.Amount // as it was: a retry finds the order moved on
		}
	}
	return d
}

// noDeposits refuses a deposit the catalogue no longer takes (the method
// that priced it is gone from it), rather than price it at nothing.
func noDeposits(what string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeBadRequest, Message: what + " take no deposits now: no method of the catalogue serves them"}
}

// depositAmount reads a deposit's amount in the currency of where it goes.
func depositAmount(a Amount, currency string) (ledger.Minor, *ledger.Error) {
	cur, _ := ledger.LookupCurrency(currency)
	var p Fields
	m := p.Amount("amount", a, cur)
	return m, p.Err()
}

// depositSeed is what the sandbox derives an organization's addresses and
// deposit references from: its place in creation order, so that they are
// the same for the same sequence of requests (and golden files need not
// mask them). Sandbox addresses hold nothing, so being guessable is fine.
func (a *App) depositSeed(org string) (string, *ledger.Error) {
	n, ok := a.Reader().OrganizationNumber(org)
	if !ok {
		return "", &ledger.Error{Code: ledger.CodeNotFound, Message: "Organization not found"}
	}
	return "organization " + strconv.FormatUint(n, 10) + "\x00", nil
}

// OrderVirtualAccountPrefix starts the id of a bank order's deposit
// account: "va_" and the order's id.
const OrderVirtualAccountPrefix = "va_ord_"

// OrderVirtualAccount is a bank order's deposit account seen as the
// virtual account it is (its externalReference is the order id), so that
// a client finds it among virtual accounts and pays it with the
// virtual-account deposit simulation. It takes deposits while the order
// waits for funds; ok is false for an order not paid by bank transfer.
func OrderVirtualAccount(o *orders.Order) (deposits.VirtualAccount, bool) {
	in := &o.Instructions
	if in.Type != orders.InstructionsVirtualAccount {
		return deposits.VirtualAccount{}, false
	}
	status := deposits.VirtualAccountActive
	if o.Status.Ended() {
		status = deposits.VirtualAccountPaused
	}
	return deposits.VirtualAccount{
		ID: "va_" + o.ID, OrgID: o.OrgID, Status: status, Currency: o.Spec.FromCurrency,
		Bank: in.Bank, AccountNumber: in.AccountNumber, AccountName: in.AccountName,
		ExternalReference: o.ID, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
	}, true
}

// orderOfVirtualAccount finds the bank order whose deposit account id is
// id ("va_ord_…").
func (a *App) orderOfVirtualAccount(org, id string) (orders.Order, deposits.VirtualAccount, bool) {
	if !strings.HasPrefix(id, OrderVirtualAccountPrefix) {
		return orders.Order{}, deposits.VirtualAccount{}, false
	}
	o, found := orders.Get(a.Reader(), org, strings.TrimPrefix(id, "va_"))
	if !found {
		return orders.Order{}, deposits.VirtualAccount{}, false
	}
	va, ok := OrderVirtualAccount(&o)
	return o, va, ok
}

// VirtualAccountInput is a request for a virtual account, its shape
// checked (a currency the catalogue issues virtual accounts in).
type VirtualAccountInput struct {
	Currency          string
	ExternalReference string
	Metadata          string
}

// CreateVirtualAccount issues a virtual account at the bank of its
// currency. With an externalReference it is idempotent per currency: the
// same reference and currency again answer the existing account
// (Result.Replayed). The production stack issues none (validation_error
// on currency): no provider adapter issues bank accounts yet.
func (a *App) CreateVirtualAccount(c Caller, in VirtualAccountInput) actors.Reply {
	if a.cfg.NoProvider {
		return refused(NoProviderError())
	}
	if a.cfg.Live {
		// The sandbox's banks are no one's: money sent to one of their
		// account numbers would reach no one.
		return refused(ledger.FieldInvalid("currency", "has no virtual accounts on this deployment: no provider issues them (bank transfers have no adapter yet); see GET /v1/capabilities"))
	}
	bank, ok := a.cfg.Catalogue.VirtualAccountBank(in.Currency)
	if !ok {
		return refused(ledger.FieldInvalid("currency", "has no virtual accounts; they are issued in "+strings.Join(a.cfg.Catalogue.VirtualAccountCurrencies(), ", ")))
	}
	return a.propose(&deposits.CreateVirtualAccount{
		At:                a.sys.Now().UnixMilli(),
		ID:                actors.NewID("va_"),
		OrgID:             c.OrgID,
		Currency:          in.Currency,
		Bank:              bank,
		ExternalReference: in.ExternalReference,
		Metadata:          in.Metadata,
	})
}

// UpdateVirtualAccount pauses or reactivates a virtual account; setting
// the status it has changes nothing.
func (a *App) UpdateVirtualAccount(c Caller, id string, status deposits.VirtualAccountStatus) actors.Reply {
	return a.propose(&deposits.UpdateVirtualAccount{At: a.sys.Now().UnixMilli(), ID: id, OrgID: c.OrgID, Status: status})
}

// CryptoAddressInput is a request for a deposit address, its shape
// checked (an asset and a chain the catalogue takes deposits of).
type CryptoAddressInput struct {
	Currency          string
	Chain             rails.Chain
	ExternalReference string
	Metadata          string
}

// CreateCryptoAddress issues the organization's address for an asset on a
// chain, with the memo the chain needs where addresses are shared. One
// address per currency and chain: asking again answers the existing one
// (Result.Replayed).
func (a *App) CreateCryptoAddress(c Caller, in CryptoAddressInput) actors.Reply {
	if a.cfg.NoProvider {
		return refused(NoProviderError())
	}
	if a.cfg.Live {
		return a.createProvidedCryptoAddress(c, in)
	}
	seed, e := a.depositSeed(c.OrgID)
	if e != nil {
		return refused(e)
	}
	address, err := rails.DepositAddress(in.Chain.Code, []byte(seed+in.Chain.Code))
	if err != nil {
		return refused(ledger.FieldInvalid("chain", err.Error()))
	}
	var tag string
	if in.Chain.RequiresMemo {
		tag = rails.DepositTag([]byte(seed + in.Currency + "\x00" + in.Chain.Code))
	}
	return a.proposeCryptoAddress(c, in, actors.NewID("addr_"), address, tag)
}

// createProvidedCryptoAddress issues a production deposit address: the
// provider instance that takes deposits of the network derives it from an
// index the ledger allocates (actors.System.ProvisionDeposit), so the funds
// sent to it reach a wallet the deployment holds and its deposit feed
// watches. A second request for the pair is answered the first address
// (the ledger replays it; the index drawn for it is a gap, which costs
// nothing).
func (a *App) createProvidedCryptoAddress(c Caller, in CryptoAddressInput) actors.Reply {
	network, ok := a.cfg.Catalogue.Network(in.Currency, in.Chain.Code)
	if !ok || !network.Serves(rails.Deposit) {
		return refused(noDepositProvider(in))
	}
	id := actors.NewID("addr_")
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CommitTimeout)
	defer cancel()
	address, tag, err := a.sys.ProvisionDeposit(ctx, id, network.Code, in.Currency)
	switch {
	case errors.Is(err, actors.ErrNoDepositProvider):
		return refused(noDepositProvider(in))
	case errors.Is(err, actors.ErrNotLeader), errors.Is(err, actors.ErrOutcomeUnknown), errors.Is(err, actors.ErrOverloaded):
		return actors.Reply{Err: err} // the write path's: the front end maps it
	case err != nil:
		var le *ledger.Error
		if errors.As(err, &le) {
			return refused(le)
		}
		return refused(&ledger.Error{Code: ledger.CodeUnavailable,
			Message: "The deposit provider could not issue an address right now; nothing was created, retry shortly"})
	}
	return a.proposeCryptoAddress(c, in, id, address, tag)
}

// proposeCryptoAddress records the address issued as id for in, on either
// stack.
func (a *App) proposeCryptoAddress(c Caller, in CryptoAddressInput, id, address, tag string) actors.Reply {
	return a.propose(&deposits.CreateCryptoAddress{
		At:                a.sys.Now().UnixMilli(),
		ID:                id,
		OrgID:             c.OrgID,
		Currency:          in.Currency,
		Chain:             in.Chain.Code,
		Address:           address,
		Tag:               tag,
		ExternalReference: in.ExternalReference,
		Metadata:          in.Metadata,
	})
}

// noDepositProvider refuses an address for a pair no provider of the
// deployment takes deposits of.
func noDepositProvider(in CryptoAddressInput) *ledger.Error {
	return ledger.FieldInvalid("chain", fmt.Sprintf("no provider takes %s deposits on %s on this deployment; see GET /v1/capabilities",
		in.Currency, rails.ChainName(in.Chain.Code)))
}

// UpdateCryptoAddress replaces an address's metadata ("" clears it); the
// address itself never changes.
func (a *App) UpdateCryptoAddress(c Caller, id, metadata string) actors.Reply {
	return a.propose(&deposits.UpdateCryptoAddress{At: a.sys.Now().UnixMilli(), ID: id, OrgID: c.OrgID, Metadata: metadata})
}
