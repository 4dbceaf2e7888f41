package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/rails"
)

// The organizations the clients work for. The hot accounts (GHS balances
// of hotOrgs) only receive fundings and pay out amounts the sandbox rail
// always completes, so that their balance is a simple register for the
// linearizability check; otherOrg also collects, and pays out amounts the
// rail rejects (refunded) or times out on.
var (
	hotOrgs  = []string{"org_hot1", "org_hot2"}
	otherOrg = "org_other"
	// scarceOrg's balance keeps running out and being topped up: most
	// of its payouts are refused, which is where a refusal from a state
	// behind the log, or a late copy of an attempt, would show.
	scarceOrg = "org_scarce"
)

// secretOf is the API key secret each organization's clients present.
func secretOf(org string) string { return "sk_test_" + org }

const currency = "GHS"

// outcome is what a client was told about one request, in the end.
type outcome int

const (
	acked   outcome = iota // a result: the resource, created or replayed
	refused                // a ledger refusal: nothing was done
	unknown                // no answer it could trust, after every retry
)

func (o outcome) String() string { return [...]string{"acked", "refused", "unknown"}[o] }

// request is one logical write as its client saw it: every retry reuses
// its reference.
type request struct {
	kind    string // "payout", "fund", "collection", "checkout", …
	org     string
	ref     string
	amount  ledger.Minor
	outcome outcome
	id      string      // the resource's id, when acked
	code    ledger.Code // the refusal's code
	retries int
	// replayed: the answer kept was a replay of an earlier create.
	replayed bool
}

// clients drive writes and reads through the real actors of whichever
// node leads (as the HTTP layer forwards to it), and record what they were
// told.
type clients struct {
	c     *cluster
	start time.Time
	recv  *receiver

	mu       sync.Mutex
	requests []*request
	history  []op // operations on the hot accounts, for porcupine
	unknowns int  // attempts answered outcome_unknown (or cut by a crash)
	causes   map[string]int
	// badAnswers are definite answers the clients could tell were wrong
	// when they got them: a valid key refused, a request sent once
	// answered as a replay.
	badAnswers []string

	// late is set while faults run: some attempts are then held in
	// transit (a frozen node's socket, a relay in flight) and delivered
	// later, after the client gave up on them and retried.
	late       atomic.Bool
	lateCopies atomic.Int64
	lateWG     sync.WaitGroup
	catchingUp atomic.Int64 // authentications answered "catching up"
}

// writeGiveUp is how long a client retries one request before it leaves
// it unknown.
const writeGiveUp = 6 * time.Second

func (cl *clients) now() int64 { return time.Since(cl.start).Nanoseconds() }

// stamp is the At of a command the client builds: the cluster's clock, as
// the HTTP layer stamps the leader's.
func (cl *clients) stamp() int64 { return cl.c.clock.Now().UnixMilli() }

// errCrashed stands for a reply that arrived across a crash of the node
// that gave it: a transport error, to the client.
var errCrashed = errors.New("sim: the node crashed during the request")

// onLeader runs fn against the leader's actors, retrying while there is
// none or it refuses (nothing done), until fn's answer is one to keep or
// the give-up time passes. It reports how many attempts ended unknown.
// With org, each attempt first presents org's key to the node it reaches,
// as the front end checks it there.
func (cl *clients) onLeader(ctx context.Context, deadline time.Time, org string, fn func(*actors.System) (keep bool, err error)) (kept bool, unknowns int) {
	for time.Now().Before(deadline) {
		// The node a client reaches is the load balancer's choice, not
		// the seed's.
		entry := rand.IntN(len(cl.c.nodes))
		if org != "" && !cl.authenticate(entry, org) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		n := cl.c.route(entry)
		if n == nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		crashes := n.crashes.Load()
		_, sys := n.running()
		if sys == nil {
			continue
		}
		keep, err := fn(sys)
		if n.crashes.Load() != crashes {
			err = errCrashed
		}
		switch {
		case err == nil && keep:
			return true, unknowns
		case err == nil, errors.Is(err, actors.ErrNotLeader), errors.Is(err, actors.ErrOverloaded):
			time.Sleep(5 * time.Millisecond)
		default: // outcome unknown: retry with the same reference
			unknowns++
			cl.mu.Lock()
			cl.causes[unknownCause(err)]++
			cl.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
		if ctx.Err() != nil && unknowns == 0 {
			break // stopping, and nothing is in doubt
		}
	}
	return false, unknowns
}

// unknownCause names why an attempt's outcome was unknown, for the report.
func unknownCause(err error) string {
	msg := err.Error()
	if i := strings.IndexAny(msg, "0123456789"); i > 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// keyWait bounds how long a node may take to give a definite answer on a
// key it does not know (the front end's followerKeyWait).
const keyWait = time.Second

// authenticate presents org's key to node entry, as the front end checks
// it there before relaying the request. A refusal of the valid key is a
// wrong definite answer; "catching up" is not an answer (the client
// retries).
func (cl *clients) authenticate(entry int, org string) bool {
	n := cl.c.nodes[entry]
	_, sys := n.running()
	if sys == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyWait)
	defer cancel()
	key, found, err := sys.KeyBySecret(ctx, []byte(secretOf(org)), cl.c.catchUp(n))
	switch {
	case err != nil:
		cl.catchingUp.Add(1)
		return false
	case !found || key.Revoked:
		cl.mu.Lock()
		cl.badAnswers = append(cl.badAnswers, fmt.Sprintf("%s refused the valid key of %s (401)", n.id, org))
		cl.mu.Unlock()
		return false
	}
	return true
}

// attemptsNamed are the kinds of request the service tells apart by
// attempt (actors.PayoutRequest.Attempt): a relay of the same attempt
// after its first relay committed is answered as the creation.
var attemptsNamed = map[string]bool{"payout": true, "collection": true, "order": true}

// errInTransit is an attempt held in transit: its client saw its
// connection break.
var errInTransit = errors.New("sim: the attempt was held in transit")

// write sends one request until it gets an answer it can trust.
func (cl *clients) write(ctx context.Context, req *request, send func(*actors.System) actors.Reply) {
	cl.writeAttempts(ctx, req, false, func(sys *actors.System, _ string) actors.Reply { return send(sys) })
}

// writeAttempts is write for requests that name their attempt (as the
// front end names a client's request): the first attempt's id is kept when
// a node re-sends it after an unknown outcome, and a new one drawn when
// the client retries. While faults run, an attempt of a request that may
// be delayed (payouts, fundings) may be held in transit and delivered
// later, after the client retried. A request whose every attempt carried
// one id was sent once: a replay answer to it is wrong.
func (cl *clients) writeAttempts(ctx context.Context, req *request, delayable bool, send func(sys *actors.System, attempt string) actors.Reply) {
	var last actors.Reply
	tries := 0
	attempt := req.ref + "#0"
	sentOnce := true
	kept, unknowns := cl.onLeader(ctx, time.Now().Add(writeGiveUp), req.org, func(sys *actors.System) (bool, error) {
		if tries > 0 && rand.IntN(2) == 0 {
			attempt, sentOnce = fmt.Sprintf("%s#%d", req.ref, tries), false // the client's retry
		}
		tries++
		if delayable && cl.late.Load() && rand.IntN(8) == 0 {
			cl.holdInTransit(sys, func(sys *actors.System) { send(sys, attempt) })
			sentOnce = false
			return false, errInTransit
		}
		last = send(sys, attempt)
		return last.Err == nil, last.Err
	})
	if kept && sentOnce && attemptsNamed[req.kind] && last.Result.Err == nil && last.Result.Replayed {
		cl.mu.Lock()
		cl.badAnswers = append(cl.badAnswers, fmt.Sprintf("%s %s/%s was sent once and answered as a replay", req.kind, req.org, req.ref))
		cl.mu.Unlock()
	}
	req.retries = unknowns
	switch {
	case !kept:
		req.outcome = unknown
	case last.Result.Err != nil:
		req.outcome, req.code = refused, last.Result.Err.Code
	default:
		req.outcome, req.id, req.replayed = acked, resultID(&last.Result), last.Result.Replayed
	}
	cl.mu.Lock()
	cl.requests = append(cl.requests, req)
	cl.unknowns += unknowns
	cl.mu.Unlock()
}

// holdInTransit delivers an attempt later, to whichever node leads then
// (a relay once its node thaws), and drops its answer: the client that
// sent it has moved on.
func (cl *clients) holdInTransit(sys *actors.System, deliver func(*actors.System)) {
	cl.lateCopies.Add(1)
	cl.lateWG.Add(1)
	delay := time.Duration(100+rand.IntN(1400)) * time.Millisecond
	go func() {
		defer cl.lateWG.Done()
		time.Sleep(delay)
		if n := cl.c.route(rand.IntN(len(cl.c.nodes))); n != nil {
			if _, sys := n.running(); sys != nil {
				deliver(sys)
			}
		}
	}()
}

func resultID(r *ledger.Result) string {
	switch {
	case r.Order != nil: // before its legs, which the result carries too
		return r.Order.ID
	case r.CheckoutSession != nil: // before its collection
		return r.CheckoutSession.ID
	case r.PaymentLink != nil:
		return r.PaymentLink.ID
	case r.CheckoutDeposit != nil: // before its collection
		return r.CheckoutDeposit.CollectionID
	case r.Payout != nil:
		return r.Payout.ID
	case r.Collection != nil:
		return r.Collection.ID
	case r.Funding != nil:
		return r.Funding.ExternalReference
	case r.Conversion != nil:
		return r.Conversion.ID
	case r.Quote != nil:
		return r.Quote.ID
	}
	return ""
}

func payoutRequest(org, ref, attempt string, amount ledger.Minor) actors.PayoutRequest {
	return actors.PayoutRequest{
		OrgID: org, ExternalReference: ref, Attempt: attempt, MethodType: "mobile_money",
		Spec: ledger.PayoutSpec{Currency: currency, Amount: amount, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
	}
}

func collectionRequest(org, ref string, amount ledger.Minor) actors.CollectionRequest {
	return actors.CollectionRequest{
		OrgID: org, ExternalReference: ref, MethodType: "mobile_money",
		Spec: ledger.CollectionSpec{Currency: currency, Amount: amount, Method: "gh_mtn", PayerNumber: "233241234567"},
	}
}

func (cl *clients) payout(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "payout", org: org, ref: ref, amount: amount}
	cl.writeAttempts(ctx, req, true, func(sys *actors.System, attempt string) actors.Reply {
		return sys.CreatePayout(payoutRequest(org, ref, attempt, amount))
	})
	return req
}

func (cl *clients) fund(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "fund", org: org, ref: ref, amount: amount}
	cl.writeAttempts(ctx, req, true, func(sys *actors.System, _ string) actors.Reply {
		return sys.FundBalance(org, currency, amount, ref)
	})
	return req
}

func (cl *clients) collection(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "collection", org: org, ref: ref, amount: amount}
	cl.writeAttempts(ctx, req, false, func(sys *actors.System, attempt string) actors.Reply {
		cr := collectionRequest(org, ref, amount)
		cr.Attempt = attempt
		return sys.CreateCollection(cr)
	})
	return req
}

var catalogue = rails.DefaultCatalogue()

// order creates a mobile money order (the payer is prompted, then the
// amount is paid out), priced and provisioned as POST /v1/orders does.
func (cl *clients) order(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "order", org: org, ref: ref, amount: amount}
	method, _ := catalogue.Method("gh_mtn")
	phone := "233241234567"
	in, err := rails.SandboxDepositInstructions(method, org, phone)
	if err != nil {
		panic(err) // the catalogue changed under the simulation
	}
	order := actors.OrderRequest{
		OrgID: org, ExternalReference: ref,
		Spec: ledger.OrderSpec{
			FromMethod: "gh_mtn", FromCurrency: currency, FromAccountNumber: phone,
			ToMethod: "gh_mtn", ToCurrency: currency, ToAccountNumber: phone,
			Amount: amount, AmountSide: ledger.SideFrom,
		},
		FromMethodType: "mobile_money", ToMethodType: "mobile_money",
		FromAmount: amount, ToAmount: amount, Fee: ledger.OrderFee("mobile_money", amount),
		Instructions: in,
	}
	cl.writeAttempts(ctx, req, false, func(sys *actors.System, attempt string) actors.Reply {
		o := order
		o.Attempt = attempt
		return sys.CreateOrder(o)
	})
	return req
}

// proposeOnce proposes a command that carries its own id, as the HTTP
// layer's checkout routes do. A retry after an attempt whose outcome was
// unknown is refused by whatever that attempt changed, not only as a
// conflict on the id: a checkout session whose collection has since
// completed has paid its link, and the link then refuses new sessions
// (bad_request). Whatever the refusal, a resource under the command's own
// id was made by an earlier attempt: the answer is a replay of it.
func (cl *clients) proposeOnce(ctx context.Context, req *request, cmd ledger.Command, exists func(*ledger.Reader) (ledger.Result, bool)) {
	cl.write(ctx, req, func(sys *actors.System) actors.Reply {
		pctx, cancel := context.WithTimeout(context.Background(), commitTimeout) // the request's own bound
		defer cancel()
		r := sys.ProposeTracked(pctx, cmd)
		if r.Err == nil && r.Result.Err != nil {
			if found, ok := exists(sys.Reader()); ok {
				found.Replayed = true
				r.Result = found
			}
		}
		return r
	})
}

// checkoutMethods are the ways a payment link is paid in the simulation.
var checkoutMethods = []ledger.CheckoutMethod{ledger.CheckoutMobileMoney, ledger.CheckoutBankTransfer, ledger.CheckoutCrypto}

// checkoutNetwork is the stablecoin network crypto checkouts pay on: USDC,
// priced into the link's currency at the sandbox rate.
const checkoutNetwork = "usdc_base"

// paymentLink creates a payment link and pays it through a checkout
// session, as POST /v1/payment-links then the hosted checkout do: by
// mobile money (the session's collection prompts the payer), or by bank
// transfer or stablecoin (the session waits for a deposit, which the
// client then simulates as POST /v1/simulations/checkout-deposit does).
// Ids are the reference's, so every retry names the same resources.
func (cl *clients) paymentLink(ctx context.Context, org, ref string, amount ledger.Minor, method ledger.CheckoutMethod) *request {
	id := strings.ReplaceAll(ref, "-", "_")
	link := &ledger.CreatePaymentLink{At: cl.stamp(), ID: "pl_" + id, OrgID: org, Spec: ledger.PaymentLinkSpec{
		Currency: currency, Amount: amount, Email: "payer@example.com",
		Appearance: ledger.CheckoutAppearance{Title: "Invoice " + ref, Methods: ledger.MethodSet(0).With(method)},
	}}
	linked := &request{kind: "payment_link", org: org, ref: link.ID, amount: amount}
	cl.proposeOnce(ctx, linked, link, func(r *ledger.Reader) (ledger.Result, bool) {
		l, ok := r.PaymentLink(org, link.ID)
		return ledger.Result{PaymentLink: &l}, ok
	})
	if linked.outcome != acked {
		return linked
	}
	sess := &ledger.CreateCheckoutSession{
		At: cl.stamp(), ID: "cs_" + id, OrgID: org, LinkID: link.ID, Method: method,
		OriginCurrency: currency, OriginAmount: amount, DestAmount: amount, Rate: "1",
	}
	switch method {
	case ledger.CheckoutMobileMoney:
		sess.MethodCode, sess.PayerNumber, sess.MethodType = "gh_mtn", "233241234567", "mobile_money"
		sess.CollectionID, sess.Fee = "col_"+id, ledger.CollectionFee("mobile_money", amount)
	case ledger.CheckoutBankTransfer:
		sess.DepositBank, sess.DepositAccount = "Sandbox Pooled Bank", "9900000001"
	case ledger.CheckoutCrypto:
		m, _ := catalogue.Method(checkoutNetwork)
		rate, err := rails.SandboxRates{}.Rate(m.Currency, currency)
		if err != nil {
			panic(err) // the rate table changed under the simulation
		}
		origin, err := rails.ConvertTo(rate, amount)
		if err != nil {
			panic(err)
		}
		addr, err := rails.DepositAddress(m.Chain, []byte("checkout:"+sess.ID))
		if err != nil {
			panic(err)
		}
		sess.MethodCode, sess.Chain, sess.OriginCurrency, sess.OriginAmount, sess.Rate = m.Code, m.Chain, m.Currency, origin, rate.String()
		sess.DepositAccount = addr
	}
	req := &request{kind: "checkout", org: org, ref: sess.ID, amount: amount}
	cl.proposeOnce(ctx, req, sess, func(r *ledger.Reader) (ledger.Result, bool) {
		s, ok := r.CheckoutSession(org, sess.ID)
		return ledger.Result{CheckoutSession: &s}, ok
	})
	if method == ledger.CheckoutMobileMoney || req.outcome != acked {
		return req
	}
	// The payer's transfer of what the session asks: its collection
	// credits the link's amount. A retry reuses the deposit's reference,
	// which the ledger answers with the deposit it made.
	deposit := &ledger.CheckoutDepositCommand{
		At: cl.stamp(), OrgID: org, SessionID: sess.ID, ExternalReference: "dep-" + ref,
		DepositID: "vad_" + id, CollectionID: "col_" + id,
	}
	paid := &request{kind: "checkout_deposit", org: org, ref: deposit.ExternalReference, amount: amount}
	cl.write(ctx, paid, func(sys *actors.System) actors.Reply {
		pctx, cancel := context.WithTimeout(context.Background(), commitTimeout) // the request's own bound
		defer cancel()
		return sys.ProposeTracked(pctx, deposit)
	})
	return paid
}

// conversionRate is the simulation's fixed GHS→NGN rate.
const conversionRate = 100

// conversion quotes and executes a GHS→NGN conversion, as POST
// /v1/conversions/quote then POST /v1/conversions do. The quote's id is
// the client's key: a retried quote that exists is the same quote, and a
// retried execution of an executed quote is told the conversion it made.
func (cl *clients) conversion(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "conversion", org: org, ref: "qte_" + strings.ReplaceAll(ref, "-", "_"), amount: amount}
	quote := &ledger.CreateQuote{
		At: cl.stamp(), ID: req.ref, OrgID: org,
		FromCurrency: currency, FromAmount: amount, ToCurrency: "NGN", ToAmount: amount * conversionRate,
		Side: ledger.SideFrom, Rate: fmt.Sprint(conversionRate),
	}
	quoted := &request{kind: "quote", org: org, ref: req.ref}
	cl.write(ctx, quoted, func(sys *actors.System) actors.Reply {
		pctx, cancel := context.WithTimeout(context.Background(), commitTimeout) // the request's own bound: ctx only stops new requests
		defer cancel()
		r := sys.Propose(pctx, quote)
		if r.Err == nil && r.Result.Err != nil && r.Result.Err.Code == ledger.CodeConflict {
			r.Result = ledger.Result{Replayed: true, Quote: &ledger.Quote{ID: quote.ID}}
		}
		return r
	})
	if quoted.outcome != acked {
		return quoted
	}
	cl.write(ctx, req, func(sys *actors.System) actors.Reply {
		r := sys.ExecuteQuote(org, req.ref, "", "")
		if e := r.Result.Err; r.Err == nil && e != nil && e.Code == ledger.CodeBadRequest && e.ExistingID != "" {
			// Executed already, by an earlier attempt whose answer was lost.
			r.Result = ledger.Result{Replayed: true, Conversion: &ledger.Conversion{ID: e.ExistingID, QuoteID: req.ref, FromAmount: amount}}
		}
		return r
	})
	return req
}

// balance reads an organization's balance on the leader, as GET
// /v1/accounts does.
func (cl *clients) balance(ctx context.Context, org string) (ledger.Minor, bool) {
	var total ledger.Minor
	kept, _ := cl.onLeader(ctx, time.Now().Add(writeGiveUp), org, func(sys *actors.System) (bool, error) {
		a, _ := sys.Reader().AccountFor(org, currency)
		total = a.Total
		return true, nil
	})
	return total, kept
}

// run is one client's loop until ctx ends: seeded choices of what to do.
func (cl *clients) run(ctx context.Context, id int, rng *rand.Rand) {
	for i := 0; ctx.Err() == nil; i++ {
		ref := fmt.Sprintf("c%d-%d", id, i)
		hot := hotOrgs[rng.IntN(len(hotOrgs))]
		if rng.IntN(5) == 0 { // the scarce balance: payouts it mostly cannot cover, top-ups
			if rng.IntN(4) == 0 {
				cl.fund(ctx, scarceOrg, ref, ledger.Minor(100*(30+rng.IntN(50))))
			} else {
				cl.payout(ctx, scarceOrg, ref, ledger.Minor(100*(20+rng.IntN(40))))
			}
			continue
		}
		switch p := rng.IntN(100); {
		case p < 30: // a debit of a hot account, always completed by the rail
			amount := ledger.Minor(100 * (1 + rng.IntN(400)))
			call := cl.now()
			req := cl.payout(ctx, hot, ref, amount)
			cl.record(id, hot, opInput{kind: opDebit, amount: amount + ledger.PayoutFee("mobile_money", amount)}, req.outcome, call)
		case p < 42: // a credit of a hot account
			amount := ledger.Minor(100 * (1 + rng.IntN(600)))
			call := cl.now()
			req := cl.fund(ctx, hot, ref, amount)
			cl.record(id, hot, opInput{kind: opCredit, amount: amount}, req.outcome, call)
		case p < 58: // a read of a hot account
			call := cl.now()
			if v, ok := cl.balance(ctx, hot); ok {
				cl.mu.Lock()
				cl.history = append(cl.history, op{client: id, account: hot, in: opInput{kind: opRead}, out: opOutput{value: v}, call: call, ret: cl.now()})
				cl.mu.Unlock()
			}
		case p < 70: // a collection, any sandbox scenario
			amount := ledger.Minor(100*(1+rng.IntN(200)) + sandboxCents[rng.IntN(len(sandboxCents))])
			cl.collection(ctx, otherOrg, ref, amount)
		case p < 78: // an order: a mobile money prompt, then a payout, any scenario
			cl.order(ctx, otherOrg, ref, ledger.Minor(100*(1+rng.IntN(100))+sandboxCents[rng.IntN(len(sandboxCents))]))
		case p < 88: // a conversion: a quote, then its execution
			cl.conversion(ctx, otherOrg, ref, ledger.Minor(100*(1+rng.IntN(100))))
		case p < 94: // a payment link, paid through its checkout
			// The method follows from p, so that it took no draw of its
			// own: every seed's other choices stayed what they were.
			method := checkoutMethods[p%len(checkoutMethods)]
			cl.paymentLink(ctx, otherOrg, ref, ledger.Minor(100*(1+rng.IntN(100))+sandboxCents[rng.IntN(len(sandboxCents))]), method)
		default: // a payout the rail may reject or time out on
			amount := ledger.Minor(100*(1+rng.IntN(50)) + sandboxCents[rng.IntN(len(sandboxCents))])
			cl.payout(ctx, otherOrg, ref, amount)
		}
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		}
	}
}

// sandboxCents are amounts' last two decimal digits that pick the sandbox
// rails' scenarios (rails.PayoutTrigger, rails.CollectionTrigger), with
// plain ones.
var sandboxCents = []int{0, 0, 0, 1, 3, 50, 51, 52, 99}

// record adds a write on a hot account to the history.
func (cl *clients) record(client int, account string, in opInput, o outcome, call int64) {
	out := opOutput{outcome: o}
	ret := cl.now()
	if o == unknown {
		ret = unknownReturn
	}
	cl.mu.Lock()
	cl.history = append(cl.history, op{client: client, account: account, in: in, out: out, call: call, ret: ret})
	cl.mu.Unlock()
}
