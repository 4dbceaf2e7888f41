package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"sync"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/paymentlinks"
	"payments/rails"
)

// Checkout sessions: a payer's attempt to pay a payment link by one
// method, priced and provisioned here (the mobile money charge and its
// fee, the pooled bank account, the stablecoin deposit address and, in
// another currency, the amount at the all-in rate); and the sandbox's
// deposits into them, which stand for the payer's bank transfer or
// on-chain transfer.

// Limits and defaults of the sandbox's simulated deposits.
const (
	// simulatedDepositsMax bounds the deposits on their way at once, on
	// this node.
	simulatedDepositsMax = 1024
	// SandboxSettlementDefault is how long a simulated deposit takes to
	// land when Config.SandboxSettlement is not set.
	SandboxSettlementDefault = 500 * time.Millisecond
)

// The sandbox's pooled collection account, which bank-transfer sessions
// are paid into.
const pooledBankName = "Sandbox Pooled Bank"

// CheckoutSessionRequest asks to open a checkout session on a payment
// link. The front end has checked its shape: Code is present for mobile
// money (the wallet) and crypto (the stablecoin network), PayerNumber for
// mobile money (digits with the country code), neither for bank transfer.
type CheckoutSessionRequest struct {
	LinkID      string
	Method      paymentlinks.Method
	Code        string
	PayerNumber string
	// Attempt names the payer's attempt to pay (the hosted checkout draws
	// one per attempt, the simulator uses its request's reference): the
	// session's id derives from it, so that a retry, or the same attempt
	// sent twice at once, opens one session and is answered with it
	// (Replayed). "" draws a new id.
	Attempt string
}

// OpenCheckoutSession opens a session on a link for the method the payer
// chose. The ledger fails the open session the payer switches away from,
// and for mobile money creates the charge, which the rail driver sends at
// once.
func (a *App) OpenCheckoutSession(c Caller, in CheckoutSessionRequest) actors.Reply {
	if a.cfg.NoProvider {
		return refused(NoProviderError())
	}
	if a.cfg.Live && in.Method != paymentlinks.MobileMoney {
		// The sandbox's pooled account and derived addresses are no
		// one's: a production checkout takes only what a provider
		// collects.
		return refused(ledger.FieldInvalid("method", "only mobile_money is taken at checkout on this deployment: no provider collects bank transfers or stablecoins for checkout sessions yet"))
	}
	r := a.sys.Reader()
	link, ok := paymentlinks.GetLink(r, c.OrgID, in.LinkID)
	if !ok {
		return refused(notFound("Payment link"))
	}
	id := actors.NewID("cs_")
	if in.Attempt != "" {
		id = attemptSessionID(link.ID, in.Attempt)
		if s, ok := paymentlinks.GetSession(r, c.OrgID, id); ok {
			return actors.Reply{Result: ledger.Result{Replayed: true, Value: &s}}
		}
	}
	cmd, e := a.checkoutSessionCommand(link, in, id)
	if e != nil {
		return refused(e)
	}
	rep := a.proposeTracked(cmd)
	if in.Attempt != "" && (rep.Err != nil || rep.Result.Err != nil) {
		// The same attempt, sent twice at once (or an earlier try whose
		// answer was lost), opened it.
		if s, ok := paymentlinks.GetSession(a.sys.Reader(), c.OrgID, id); ok {
			return actors.Reply{Result: ledger.Result{Replayed: true, Value: &s}}
		}
	}
	return rep
}

// checkoutSessionCommand prices a session with id on link for the request.
// A link that takes no session gets the command unpriced: the ledger says
// why it refuses it.
func (a *App) checkoutSessionCommand(link paymentlinks.Link, in CheckoutSessionRequest, id string) (*paymentlinks.CreateSession, *ledger.Error) {
	remaining := link.Remaining()
	cmd := &paymentlinks.CreateSession{
		At: a.nowMilli(), ID: id, OrgID: link.OrgID, LinkID: link.ID, Method: in.Method,
		OriginCurrency: link.Spec.Currency, OriginAmount: remaining, DestAmount: remaining, Rate: "1",
	}
	if link.Status != paymentlinks.LinkActive || remaining <= 0 {
		return cmd, nil
	}
	switch in.Method {
	case paymentlinks.MobileMoney:
		m, e := a.cfg.Catalogue.Check(rails.Collection, "code", "amount", in.Code, link.Spec.Currency, remaining)
		if e != nil {
			return nil, e
		}
		if m.Type != ledger.MethodMobileMoney {
			return nil, ledger.FieldInvalid("code", "must be a mobile money method")
		}
		cmd.MethodCode, cmd.PayerNumber, cmd.MethodType = m.Code, in.PayerNumber, m.Type
		cmd.CollectionID = actors.NewID("col_")
		fees, _ := m.Fees(rails.Collection)
		cmd.Fee = fees.Fee(remaining)
	case paymentlinks.BankTransfer:
		cmd.DepositBank, cmd.DepositAccount = pooledBankName, pooledAccountNumber(link.Spec.Currency)
	case paymentlinks.Crypto:
		m, ok := a.cfg.Catalogue.Method(in.Code)
		if !ok || m.Type != ledger.MethodCrypto {
			return nil, ledger.FieldInvalid("code", fmt.Sprintf("%q is not a stablecoin network; see GET /v1/capabilities", in.Code))
		}
		cmd.MethodCode, cmd.Chain, cmd.OriginCurrency = m.Code, m.Chain, m.Currency
		addr, err := sandboxDepositAddress(m.Chain, cmd.ID)
		if err != nil {
			return nil, ledger.FieldInvalid("code", fmt.Sprintf("%q: deposits on %s are not supported", in.Code, rails.ChainName(m.Chain)))
		}
		cmd.DepositAccount = addr
		if m.Currency != link.Spec.Currency {
			rate, e := a.Rate(m.Currency, link.Spec.Currency)
			if e != nil {
				return nil, e
			}
			origin, err := rails.ConvertTo(rate, remaining)
			if err != nil {
				return nil, ledger.FieldInvalid("amount", "cannot be priced in "+m.Currency)
			}
			cmd.OriginAmount, cmd.Rate = origin, rate.String()
		}
	}
	return cmd, nil
}

// attemptSessionID derives the id of the session an attempt opens.
func attemptSessionID(linkID, attempt string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte("checkout-attempt\x00" + linkID + "\x00" + attempt))
	id := []byte("cs_")
	for _, b := range sum[:20] {
		id = append(id, alphabet[int(b)%len(alphabet)])
	}
	return string(id)
}

// pooledAccountNumber is the sandbox's pooled collection account for a
// currency: bank-transfer sessions quote their own id as the reference.
func pooledAccountNumber(currency string) string {
	sum := sha256.Sum256([]byte("pooled:" + currency))
	n := new(big.Int).SetBytes(sum[:8])
	return fmt.Sprintf("99%08d", n.Mod(n, big.NewInt(100_000_000)).Int64())
}

// sandboxDepositAddress derives a session's own sandbox deposit address
// from its id: a valid address of the chain (the same generator as deposit
// addresses and orders use) that nobody holds keys to.
func sandboxDepositAddress(chain, sessionID string) (string, error) {
	return rails.DepositAddress(chain, []byte("checkout:"+sessionID))
}

// CheckoutDepositRequest pays into a bank-transfer or stablecoin session,
// as the payer's transfer would: a completed collection credits the
// balance and the session's link counts it.
type CheckoutDepositRequest struct {
	SessionID string
	// Amount is what the payer sends, in the session's origin currency, as
	// the request wrote it: only the session knows that currency, so it is
	// parsed here (ledger.ParseAmount). nil: what the session has left to
	// pay.
	Amount *string
	// ExternalReference makes the deposit idempotent: the same deposit
	// again is answered with the one it made (Replayed); reused for another
	// it is conflict.
	ExternalReference string
}

// CheckoutDepositReply is a deposit's reply, with the session it was
// asked for as it was read before (zero when it was not found).
type CheckoutDepositReply struct {
	actors.Reply
	Session paymentlinks.Session
}

// SimulateCheckoutDeposit pays into a session now (sandbox only).
func (a *App) SimulateCheckoutDeposit(c Caller, in CheckoutDepositRequest) CheckoutDepositReply {
	if a.cfg.Live {
		return CheckoutDepositReply{Reply: refused(errSimulationsSandboxOnly())}
	}
	sess, amount, e := a.depositInto(c, in)
	if e != nil {
		return CheckoutDepositReply{Reply: refused(e), Session: sess}
	}
	return CheckoutDepositReply{Reply: a.proposeTracked(a.checkoutDepositCommand(sess, amount, in.ExternalReference)), Session: sess}
}

// StartCheckoutDeposit sends a deposit into a session that lands after
// the sandbox's settlement time (Config.SandboxSettlement), as the hosted
// checkout's test mode simulates a payer's transfer; meanwhile
// CheckoutDepositOnItsWay reports it. While one is on its way into a
// session, another is not sent: the answer is nil, as for the first, so
// that a double click pays once. A deposit on its way is this node's: a
// new leader has none.
func (a *App) StartCheckoutDeposit(c Caller, in CheckoutDepositRequest) *ledger.Error {
	if a.cfg.Live {
		return errSimulationsSandboxOnly()
	}
	sess, amount, e := a.depositInto(c, in)
	switch {
	case e != nil:
		return e
	case sess.Status.Terminal():
		return &ledger.Error{Code: ledger.CodeBadRequest, Message: "Checkout session " + sess.ID + " is " + sess.Status.String() + ": it accepts no more deposits"}
	case !a.deposits.start(sess.ID):
		if !a.deposits.has(sess.ID) {
			return &ledger.Error{Code: ledger.CodeUnavailable, Message: "Too many simulated deposits are on their way; retry in a moment"}
		}
		return nil
	}
	// Named by what the session had received and what is sent, so that
	// the same deposit sent again (a retry after the leader changed) is
	// one deposit.
	cur, _ := ledger.LookupCurrency(sess.OriginCurrency)
	ref := "checkout-page:" + sess.ID + ":" + ledger.FormatMinor(sess.OriginReceived, cur) + ":" + ledger.FormatMinor(amount, cur)
	a.cfg.Clock.AfterFunc(a.cfg.SandboxSettlement, func() {
		defer a.deposits.done(sess.ID)
		r := a.proposeTracked(a.checkoutDepositCommand(sess, amount, ref))
		switch {
		case r.Err != nil:
			a.cfg.Logger.Warn("simulated checkout deposit", "session", sess.ID, "err", r.Err)
		case r.Result.Err != nil:
			a.cfg.Logger.Info("simulated checkout deposit refused", "session", sess.ID, "err", r.Result.Err.Message)
		}
	})
	return nil
}

// CheckoutDepositOnItsWay reports whether a deposit StartCheckoutDeposit
// sent into session id has yet to land.
func (a *App) CheckoutDepositOnItsWay(sessionID string) bool { return a.deposits.has(sessionID) }

// depositInto reads the session a deposit is for and parses its amount (0:
// what remains).
func (a *App) depositInto(c Caller, in CheckoutDepositRequest) (paymentlinks.Session, ledger.Minor, *ledger.Error) {
	sess, ok := paymentlinks.GetSession(a.sys.Reader(), c.OrgID, in.SessionID)
	if !ok {
		return sess, 0, notFound("Checkout session")
	}
	var amount ledger.Minor
	if in.Amount != nil {
		var e *ledger.Error
		if amount, e = parseAmount("amount", *in.Amount, sess.OriginCurrency); e != nil {
			return sess, 0, e
		}
	}
	return sess, amount, nil
}

// checkoutDepositCommand pays amount (0: what remains) into sess.
func (a *App) checkoutDepositCommand(sess paymentlinks.Session, amount ledger.Minor, ref string) *paymentlinks.DepositCommand {
	return &paymentlinks.DepositCommand{
		At: a.nowMilli(), OrgID: sess.OrgID, SessionID: sess.ID, Amount: amount, ExternalReference: ref,
		DepositID: actors.NewID("vad_"), CollectionID: actors.NewID("col_"),
	}
}

// simulatedDeposits are the sandbox deposits on their way, by session.
type simulatedDeposits struct {
	mu      sync.Mutex
	pending map[string]struct{}
}

// start records a deposit on its way into session id; false when one is
// already, or too many are.
func (d *simulatedDeposits) start(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.pending[id]; ok || len(d.pending) >= simulatedDepositsMax {
		return false
	}
	if d.pending == nil {
		d.pending = make(map[string]struct{})
	}
	d.pending[id] = struct{}{}
	return true
}

func (d *simulatedDeposits) done(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, id)
}

func (d *simulatedDeposits) has(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.pending[id]
	return ok
}

// Helpers of every operation that proposes without an actor.

// proposeTracked is propose, and hands a pending collection the result
// created (a mobile money session's charge) to the rail driver at once.
func (a *App) proposeTracked(cmd ledger.Command) actors.Reply {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CommitTimeout)
	defer cancel()
	return a.sys.ProposeTracked(ctx, cmd)
}

// nowMilli is the leader's clock in unix milliseconds, as commands carry it.
func (a *App) nowMilli() int64 { return a.sys.Now().UnixMilli() }

func notFound(resource string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeNotFound, Message: resource + " not found"}
}

// parseAmount parses an amount the request wrote in a currency it did not
// name (the resource's), as the front end parses the others.
func parseAmount(field, text, currency string) (ledger.Minor, *ledger.Error) {
	cur, _ := ledger.LookupCurrency(currency)
	m, err := ledger.ParseAmount(text, cur)
	if err != nil {
		return 0, ledger.FieldInvalid(field, ledger.AsError(err).Message)
	}
	return m, nil
}

func errSimulationsSandboxOnly() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeNotFound, Message: "Simulation endpoint not found: simulations exist only on the sandbox stack"}
}
