package actors_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	"payments/ledger"
	"payments/ledger/conversions"
	"payments/rails"
)

// gatedLog is the real Raft log with a gate in front of it: while the gate
// is shut, appends wait. It lets a test hold one command in flight and see
// what arrives meanwhile.
type gatedLog struct {
	actors.Replicator
	mu   sync.Mutex
	gate chan struct{} // nil when open
}

func (g *gatedLog) Append(entry []byte) actors.Pending {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return g.Replicator.Append(entry)
}

func (g *gatedLog) shut() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedLog) open() {
	g.mu.Lock()
	close(g.gate)
	g.gate = nil
	g.mu.Unlock()
}

// startGated is start with the gate between the actors and the log.
func startGated(t *testing.T, cfg actors.Config) (*harness, *gatedLog) {
	t.Helper()
	node := actorstest.OpenNode(t)
	g := &gatedLog{Replicator: node}
	cfg.Log, cfg.Rail = g, rails.NewSandbox(fastSandbox)
	sys := actorstest.Start(t, node, cfg)
	h := &harness{node: node, sys: sys, org: "org_test"}
	r := sys.Propose(context.Background(), &ledger.CreateOrganization{
		At: time.Now().UnixMilli(), ID: h.org, Name: "Test org",
		Key: ledger.CreateAPIKey{ID: "key_test", OrgID: h.org, Hash: actors.HashKey(actors.NewKeySecret(false)), Scopes: ledger.ScopesMerchant},
	})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("create organization: %v %v", r.Err, r.Result.Err)
	}
	return h, g
}

// quote creates a GHS→USD quote selling from pesewas.
func (h *harness) quote(t *testing.T, from, to ledger.Minor) string {
	t.Helper()
	id := actors.NewID("qte_")
	r := h.sys.Propose(context.Background(), &conversions.CreateQuote{
		At: h.sys.Now().UnixMilli(), ID: id, OrgID: h.org, FromCurrency: "GHS", FromAmount: from,
		ToCurrency: "USD", ToAmount: to, Side: ledger.SideFrom, Rate: "0.0634",
	})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("quote: %v %v", r.Err, r.Result.Err)
	}
	return id
}

// Dozens of executions of one quote while the first is in flight join it:
// one conversion, every caller gets it, exactly one as its creator.
func TestConcurrentQuoteExecutionsJoin(t *testing.T) {
	h, g := startGated(t, actors.Config{})
	h.fund(t, "GHS", 100_000, "seed")
	id := h.quote(t, 10_000, 634)

	const n = 48
	g.shut()
	replies := make(chan actors.Reply, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies <- h.sys.ExecuteQuote(h.org, id, "", "")
		}()
	}
	if !eventually(10*time.Second, func() bool { return h.sys.QuoteWaiters(h.org, id) == n }) {
		t.Fatalf("%d of %d executions reached the quote actor", h.sys.QuoteWaiters(h.org, id), n)
	}
	g.open()
	wg.Wait()
	close(replies)
	ids := map[string]int{}
	fresh := 0
	for r := range replies {
		if r.Err != nil || r.Result.Err != nil {
			t.Fatalf("execution: %v %v", r.Err, r.Result.Err)
		}
		ids[conversions.Of(r.Result).ID]++
		if !r.Result.Replayed {
			fresh++
		}
	}
	if len(ids) != 1 || fresh != 1 {
		t.Fatalf("conversions %v, %d fresh; want one conversion created once", ids, fresh)
	}
	if a := h.balance("GHS"); a.Total != 90_000 {
		t.Fatalf("GHS total %d, want 90000: the quote moved money more than once", a.Total)
	}
	if a := h.balance("USD"); a.Total != 634 {
		t.Fatalf("USD total %d", a.Total)
	}
	// After it applied, an execution is refused and names the conversion.
	r := h.sys.ExecuteQuote(h.org, id, "", "")
	for cid := range ids {
		if r.Result.Err == nil || r.Result.Err.Code != ledger.CodeBadRequest || r.Result.Err.ExistingID != cid {
			t.Fatalf("late execution: %+v", r.Result.Err)
		}
	}
	// Another organization cannot execute it, nor join.
	if r := h.sys.ExecuteQuote("org_other", id, "", ""); !errors.Is(r.Result.Err, ledger.ErrNotFound) {
		t.Fatalf("another organization: %v", r.Result.Err)
	}
	{
		s := h.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		if p := conversions.List(s, h.org, ledger.CursorStart, 10); len(p.Items) != 1 {
			t.Fatalf("%d conversions", len(p.Items))
		}
	}
}

// Conversions debit the balance outside the account actor. Payouts (through
// the actor, with reservations) and conversions racing on one balance never
// overdraw it: what succeeded is exactly what left, the ledger stays
// balanced, and the actor's reservations stay exact, so the remainder can
// still be paid out to the last pesewa.
func TestConversionsAndPayoutsShareOneBalance(t *testing.T) {
	h := start(t)
	const funded = 200_000 // 2000.00 GHS
	h.fund(t, "GHS", funded, "seed")
	const nQuotes, nPayouts = 30, 30
	quotes := make([]string, nQuotes)
	for i := range quotes {
		quotes[i] = h.quote(t, 5_000, 317) // 50.00 GHS each
	}
	payout := ledger.Minor(5_000) // 50.00 GHS, fee 0.50
	fee := mtnFee(rails.Payout, payout)

	var mu sync.Mutex
	var debited ledger.Minor
	converted, paid := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < nQuotes+nPayouts; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var r actors.Reply
			if i%2 == 0 {
				r = h.sys.ExecuteQuote(h.org, quotes[i/2], "", "")
			} else {
				r = h.payout(fmt.Sprintf("race-%d", i), payout)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Err != nil:
				t.Errorf("request %d: %v", i, r.Err)
			case r.Result.Err == nil && conversions.Of(r.Result) != nil:
				converted++
				debited += conversions.Of(r.Result).FromAmount
			case r.Result.Err == nil && r.Result.Payout != nil:
				paid++
				debited += r.Result.Payout.Debit()
			case !errors.Is(r.Result.Err, ledger.ErrInsufficientFunds):
				t.Errorf("request %d: %v", i, r.Result.Err)
			}
		}(i)
	}
	wg.Wait()
	a := h.balance("GHS")
	if a.Total != funded-debited || a.Available() < 0 {
		t.Fatalf("total %d, available %d; funded %d and %d left in %d conversions and %d payouts",
			a.Total, a.Available(), funded, debited, converted, paid)
	}
	// 30 × 50.00 + 30 × 50.50 > 2000.00: some requests must have been refused.
	if converted+paid == nQuotes+nPayouts || converted == 0 || paid == 0 {
		t.Fatalf("%d conversions and %d payouts succeeded", converted, paid)
	}
	{
		s := h.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
	// The account actor holds no stale reservation: the remainder, less a
	// fee, pays out exactly, and a pesewa more does not.
	rest := a.Available()
	if rest > fee+1 {
		amount := rest - mtnFee(rails.Payout, rest)
		for amount+mtnFee(rails.Payout, amount) > rest {
			amount--
		}
		if r := h.payout("rest", amount); r.Err != nil || r.Result.Err != nil {
			t.Fatalf("paying out the remaining %d: %v %v", amount, r.Err, r.Result.Err)
		}
		left := h.balance("GHS").Available()
		if r := h.payout("one-more", left+1); !errors.Is(r.Result.Err, ledger.ErrInsufficientFunds) {
			t.Fatalf("overdraft by one pesewa: %v", r.Result.Err)
		}
	}
}

// A quote expires on the organization's sandbox clock: after an advance
// past its deadline, executing it is refused and nothing moves.
func TestQuoteExpiresOnSandboxClock(t *testing.T) {
	h := start(t)
	h.fund(t, "GHS", 100_000, "seed")
	id := h.quote(t, 10_000, 634)
	r := h.sys.Propose(context.Background(), &ledger.AdvanceClock{At: h.sys.Now().UnixMilli(), OrgID: h.org, Millis: conversions.QuoteLifetimeMillis})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatal(r.Err, r.Result.Err)
	}
	r = h.sys.ExecuteQuote(h.org, id, "", "")
	if r.Result.Err == nil || r.Result.Err.Code != ledger.CodeBadRequest {
		t.Fatalf("expired quote executed: %+v", r)
	}
	if a := h.balance("GHS"); a.Total != 100_000 {
		t.Fatalf("balance %d after a refused execution", a.Total)
	}
	if r := h.sys.ExecuteQuote(h.org, "qte_unknown", "", ""); !errors.Is(r.Result.Err, ledger.ErrNotFound) {
		t.Fatalf("unknown quote: %v", r.Result.Err)
	}
}

// Idle quote actors stop and come back: executions spread around the idle
// timeout all get an answer, and the quote converts once.
func TestQuoteActorPassivation(t *testing.T) {
	h := startWith(t, actors.Config{IdleTimeout: 5 * time.Millisecond})
	h.fund(t, "GHS", 100_000, "seed")
	id := h.quote(t, 1_000, 63)
	created := 0
	for i := 0; i < 20; i++ {
		time.Sleep(time.Duration(i%4) * 3 * time.Millisecond)
		r := h.sys.ExecuteQuote(h.org, id, "", "")
		switch {
		case r.Err != nil:
			t.Fatal(r.Err)
		case r.Result.Err == nil:
			created++
		case r.Result.Err.Code != ledger.CodeBadRequest:
			t.Fatalf("execution %d: %v", i, r.Result.Err)
		}
	}
	if created != 1 || h.balance("GHS").Total != 99_000 {
		t.Fatalf("%d conversions, balance %d", created, h.balance("GHS").Total)
	}
}

// Executions under an externalReference: while one is in flight, callers
// with its reference join it and one with another reference waits, then
// gets the executed quote's bad_request; after it applied, the reference
// answers the same conversion (replayed) for its quote and a duplicate for
// another quote, and the second quote stays executable under a new one.
func TestQuoteExecutionReferences(t *testing.T) {
	h, g := startGated(t, actors.Config{})
	h.fund(t, "GHS", 100_000, "seed")
	id := h.quote(t, 10_000, 634)
	other := h.quote(t, 1_000, 63)

	g.shut()
	type answer struct {
		ref string
		r   actors.Reply
	}
	refs := []string{"fx-1", "fx-1", "fx-1", "fx-other"}
	replies := make(chan answer, len(refs))
	for i, ref := range refs {
		go func() { replies <- answer{ref, h.sys.ExecuteQuote(h.org, id, ref, "")} }()
		if !eventually(10*time.Second, func() bool { return h.sys.QuoteWaiters(h.org, id) == i+1 }) { // in this order
			t.Fatalf("%d of %d executions reached the quote actor", h.sys.QuoteWaiters(h.org, id), i+1)
		}
	}
	g.open()
	var conv string
	fresh := 0
	for range refs {
		a := <-replies
		switch {
		case a.r.Err != nil:
			t.Fatal(a.r.Err)
		case a.ref == "fx-other":
			if a.r.Result.Err == nil || a.r.Result.Err.Code != ledger.CodeBadRequest {
				t.Fatalf("another reference: %+v", a.r.Result)
			}
		case a.r.Result.Err != nil:
			t.Fatalf("execution: %v", a.r.Result.Err)
		default:
			if conv != "" && conversions.Of(a.r.Result).ID != conv {
				t.Fatalf("conversions %s and %s", conv, conversions.Of(a.r.Result).ID)
			}
			conv = conversions.Of(a.r.Result).ID
			if !a.r.Result.Replayed {
				fresh++
			}
		}
	}
	if fresh != 1 {
		t.Fatalf("%d fresh executions", fresh)
	}
	if r := h.sys.ExecuteQuote(h.org, id, "fx-1", ""); r.Result.Err != nil || !r.Result.Replayed || conversions.Of(r.Result).ID != conv || conversions.Of(r.Result).ExternalReference != "fx-1" {
		t.Fatalf("retry after it applied: %+v", r)
	}
	if r := h.sys.ExecuteQuote(h.org, other, "fx-1", ""); !errors.Is(r.Result.Err, ledger.ErrDuplicate) || r.Result.Err.ExistingID != conv {
		t.Fatalf("another quote under the reference: %+v", r.Result)
	}
	if r := h.sys.ExecuteQuote(h.org, other, "fx-2", ""); r.Result.Err != nil || r.Result.Replayed {
		t.Fatalf("the other quote under a new reference: %+v", r.Result)
	}
	if a := h.balance("GHS"); a.Total != 89_000 {
		t.Fatalf("GHS total %d, want 89000", a.Total)
	}
}
