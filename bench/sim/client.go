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
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/conversions"
	"payments/ledger/orders"
	"payments/ledger/paymentlinks"
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
			held := attempt // the id it was sent with: a later retry draws another
			cl.holdInTransit(sys, func(sys *actors.System) { send(sys, held) })
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
	case orders.Of(*r) != nil: // before its legs, which the result carries too
		return orders.Of(*r).ID
	case paymentlinks.SessionOf(*r) != nil: // before its collection
		return paymentlinks.SessionOf(*r).ID
	case paymentlinks.LinkOf(*r) != nil:
		return paymentlinks.LinkOf(*r).ID
	case paymentlinks.DepositOf(*r) != nil: // before its collection
		return paymentlinks.DepositOf(*r).CollectionID
	case r.Payout != nil:
		return r.Payout.ID
	case r.Collection != nil:
		return r.Collection.ID
	case r.Funding != nil:
		return r.Funding.ExternalReference
	case conversions.Of(*r) != nil:
		return conversions.Of(*r).ID
	case conversions.QuoteOf(*r) != nil:
		return conversions.QuoteOf(*r).ID
	}
	return ""
}

// The simulation's payouts, collections and orders go to and from one
// mobile money wallet in Ghana.
const (
	simMethod = "gh_mtn"
	simPhone  = "233241234567"
)

// simFees are the simulation's method's fee schedules, as the catalogue
// prices its payouts and collections.
var simFees = func() (fees struct{ payout, collection ledger.FeeSchedule }) {
	m, ok := catalogue.Method(simMethod)
	if !ok {
		panic("sim: " + simMethod + " is not in the catalogue")
	}
	fees.payout, _ = m.Fees(rails.Payout)
	fees.collection, _ = m.Fees(rails.Collection)
	return fees
}()

// payout sends amount, as POST /v1/payouts does: through the application
// API of the node the client reaches, without a key (nothing counts
// against spend caps).
func (cl *clients) payout(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "payout", org: org, ref: ref, amount: amount}
	in := app.PayoutInput{
		ExternalReference: ref,
		Spec:              ledger.PayoutSpec{Currency: currency, Amount: amount, AmountSide: ledger.SideTo, Method: simMethod},
		Destination:       app.Destination{AccountNumber: ptr(simPhone)},
	}
	cl.writeAttempts(ctx, req, true, func(sys *actors.System, attempt string) actors.Reply {
		return cl.c.appOf(sys).CreatePayout(app.Caller{OrgID: org, Attempt: attempt}, in)
	})
	return req
}

func ptr(s string) *string { return &s }

func (cl *clients) fund(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "fund", org: org, ref: ref, amount: amount}
	cl.writeAttempts(ctx, req, true, func(sys *actors.System, _ string) actors.Reply {
		return cl.c.appOf(sys).FundBalance(app.Caller{OrgID: org}, currency, amount, ref)
	})
	return req
}

func (cl *clients) collection(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "collection", org: org, ref: ref, amount: amount}
	in := app.CollectionInput{ExternalReference: ref, Spec: ledger.CollectionSpec{Currency: currency, Amount: amount, Method: simMethod, PayerNumber: simPhone}}
	cl.writeAttempts(ctx, req, false, func(sys *actors.System, attempt string) actors.Reply {
		return cl.c.appOf(sys).CreateCollection(app.Caller{OrgID: org, Attempt: attempt}, in)
	})
	return req
}

var catalogue = rails.DefaultCatalogue()

// order creates a mobile money order (the payer is prompted, then the
// amount is paid out), as POST /v1/orders does.
func (cl *clients) order(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	req := &request{kind: "order", org: org, ref: ref, amount: amount}
	in := app.OrderInput{ExternalReference: ref, Spec: orders.Spec{
		FromMethod: simMethod, FromCurrency: currency, FromAccountNumber: simPhone,
		ToMethod: simMethod, ToCurrency: currency, ToAccountNumber: simPhone,
		Amount: amount, AmountSide: ledger.SideFrom,
	}}
	cl.writeAttempts(ctx, req, false, func(sys *actors.System, attempt string) actors.Reply {
		return cl.c.appOf(sys).CreateOrder(app.Caller{OrgID: org, Attempt: attempt}, in)
	})
	return req
}

// writeApp is write for requests the application API serves (package
// actors/app), as the HTTP layer calls it on the node it reaches. An
// operation reads state before it proposes, so a refusal or a replay may
// come from a node that no longer leads and is behind: as the HTTP layer
// does, it goes only once the node confirms it still leads, and is
// otherwise retried (nothing was done).
func (cl *clients) writeApp(ctx context.Context, req *request, send func(*app.App) actors.Reply) {
	cl.write(ctx, req, func(sys *actors.System) actors.Reply {
		a := cl.c.appOf(sys)
		if a == nil {
			return actors.Reply{Err: actors.ErrNotLeader} // its node went down: nothing was sent
		}
		r := send(a)
		if r.Err == nil && (r.Result.Err != nil || r.Result.Replayed) && !cl.c.confirmLeader(sys) {
			return actors.Reply{Err: actors.ErrNotLeader}
		}
		return r
	})
}

// checkoutMethods are the ways a payment link is paid in the simulation.
var checkoutMethods = []paymentlinks.Method{paymentlinks.MobileMoney, paymentlinks.BankTransfer, paymentlinks.Crypto}

// checkoutNetwork is the stablecoin network crypto checkouts pay on: USDC,
// priced into the link's currency at the sandbox rate.
const checkoutNetwork = "usdc_base"

// paymentLink creates a payment link and pays it through a checkout
// session, through the operations POST /v1/payment-links and the hosted
// checkout call: by mobile money (the session's collection prompts the
// payer), or by bank transfer or stablecoin (the session waits for a
// deposit, which the client then simulates as POST
// /v1/simulations/checkout-deposit does). The reference names every
// retry's resources: it is the link's customerReference, the payer's
// attempt (which names the session) and, prefixed, the deposit's
// externalReference.
func (cl *clients) paymentLink(ctx context.Context, org, ref string, amount ledger.Minor, method paymentlinks.Method) *request {
	caller := app.Caller{OrgID: org}
	linked := &request{kind: "payment_link", org: org, ref: ref, amount: amount}
	cl.writeApp(ctx, linked, func(a *app.App) actors.Reply {
		return a.CreatePaymentLink(caller, app.PaymentLinkRequest{CustomerReference: ref, Spec: paymentlinks.LinkSpec{
			Currency: currency, Amount: amount, Email: "payer@example.com",
			Appearance: paymentlinks.Appearance{Title: "Invoice " + ref, Methods: paymentlinks.MethodSet(0).With(method)},
		}})
	})
	if linked.outcome != acked {
		return linked
	}
	in := app.CheckoutSessionRequest{LinkID: linked.id, Method: method, Attempt: ref}
	switch method {
	case paymentlinks.MobileMoney:
		in.Code, in.PayerNumber = "gh_mtn", "233241234567"
	case paymentlinks.Crypto:
		in.Code = checkoutNetwork
	}
	req := &request{kind: "checkout", org: org, ref: ref, amount: amount}
	cl.writeApp(ctx, req, func(a *app.App) actors.Reply { return a.OpenCheckoutSession(caller, in) })
	if method == paymentlinks.MobileMoney || req.outcome != acked {
		return req
	}
	// The payer's transfer of what the session asks: its collection
	// credits the link's amount. A retry reuses the deposit's reference,
	// which the ledger answers with the deposit it made.
	paid := &request{kind: "checkout_deposit", org: org, ref: "dep-" + ref, amount: amount}
	cl.writeApp(ctx, paid, func(a *app.App) actors.Reply {
		return a.SimulateCheckoutDeposit(caller, app.CheckoutDepositRequest{SessionID: req.id, ExternalReference: paid.ref}).Reply
	})
	return paid
}

// conversion quotes and executes a GHS→NGN conversion, as POST
// /v1/conversions/quote then POST /v1/conversions do, at the sandbox's
// rate. A quote whose creation's outcome was unknown is quoted again (a
// pending quote nobody executes only expires); the execution names a
// reference of its own, so a retry after a lost answer is told the
// conversion it made.
func (cl *clients) conversion(ctx context.Context, org, ref string, amount ledger.Minor) *request {
	quoted := &request{kind: "quote", org: org, ref: "quote-" + ref}
	cl.write(ctx, quoted, func(sys *actors.System) actors.Reply {
		return cl.c.appOf(sys).CreateQuote(app.Caller{OrgID: org},
			app.QuoteInput{FromCurrency: currency, ToCurrency: "NGN", Side: ledger.SideFrom, Amount: amount})
	})
	if quoted.outcome != acked {
		return quoted
	}
	quoted.ref = quoted.id // the audit finds a quote by its id
	req := &request{kind: "conversion", org: org, ref: quoted.id, amount: amount}
	cl.write(ctx, req, func(sys *actors.System) actors.Reply {
		r := cl.c.appOf(sys).ExecuteConversion(app.Caller{OrgID: org}, req.ref, "conv-"+ref)
		if e := r.Result.Err; r.Err == nil && e != nil && e.Code == ledger.CodeBadRequest && e.ExistingID != "" {
			// Executed already, by an earlier attempt whose answer was lost.
			r.Result = ledger.Result{Replayed: true, Value: &conversions.Execution{Conversion: &conversions.Conversion{ID: e.ExistingID, QuoteID: req.ref, FromAmount: amount}}}
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
			cl.record(id, hot, opInput{kind: opDebit, amount: amount + simFees.payout.Fee(amount)}, req.outcome, call)
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
