package actors_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	"payments/ledger"
	"payments/raft"
	"payments/rails"
)

// fastSandbox settles quickly so tests see final states without waiting.
var fastSandbox = rails.SandboxTiming{
	SubmitLatency:     time.Millisecond,
	Settlement:        20 * time.Millisecond,
	Timeout:           50 * time.Millisecond,
	DelayedCompletion: 150 * time.Millisecond,
	CustomerTimeout:   100 * time.Millisecond,
}

type harness struct {
	node *raft.Node
	sys  *actors.System
	org  string
}

// start opens a real single-node Raft cluster on a temporary directory and
// starts the actors on it, with one organization.
func start(t *testing.T) *harness {
	return startWith(t, actors.Config{})
}

func startWith(t *testing.T, cfg actors.Config) *harness {
	t.Helper()
	return startWithRail(t, cfg, fastSandbox)
}

func startWithRail(t *testing.T, cfg actors.Config, timing rails.SandboxTiming) *harness {
	t.Helper()
	node := actorstest.OpenNode(t)
	cfg.Rail = rails.NewSandbox(timing)
	sys := actorstest.Start(t, node, cfg)
	h := &harness{node: node, sys: sys, org: "org_test"}
	secret := actors.NewKeySecret(false)
	r := sys.Propose(context.Background(), &ledger.CreateOrganization{
		At: time.Now().UnixMilli(), ID: h.org, Name: "Test org",
		Key: ledger.CreateAPIKey{ID: "key_test", OrgID: h.org, Hash: actors.HashKey(secret), Scopes: ledger.ScopesMerchant},
	})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("create organization: %v %v", r.Err, r.Result.Err)
	}
	return h
}

// mtnFee is the catalogue's fee for moving amount through MTN Mobile Money
// in direction dir, as the operations price it.
func mtnFee(dir rails.Direction, amount ledger.Minor) ledger.Minor {
	m, _ := rails.DefaultCatalogue().Method("gh_mtn")
	fees, _ := m.Fees(dir)
	return fees.Fee(amount)
}

func (h *harness) fund(t *testing.T, currency string, amount ledger.Minor, ref string) {
	t.Helper()
	r := h.sys.FundBalance(h.org, currency, amount, ref)
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("fund: %v %v", r.Err, r.Result.Err)
	}
}

func (h *harness) payout(ref string, amount ledger.Minor) actors.Reply {
	return h.sys.CreatePayout(actors.PayoutRequest{
		OrgID:             h.org,
		ExternalReference: ref,
		MethodType:        ledger.MethodMobileMoney,
		Spec: ledger.PayoutSpec{
			Currency: "GHS", Amount: amount, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567",
		},
		Principal: amount,
		Fee:       mtnFee(rails.Payout, amount),
	})
}

func (h *harness) balance(currency string) ledger.Account {
	var a ledger.Account
	a, _ = h.sys.Reader().AccountFor(h.org, currency)
	return a
}

// N concurrent payouts against a balance that covers exactly K of them:
// exactly K succeed, the others are refused for insufficient funds, and the
// balance never goes below zero.
func TestConcurrentPayoutsOneAccount(t *testing.T) {
	h := start(t)
	const n, k = 200, 37
	amount := ledger.Minor(10_000) // 100.00 GHS, fee 1.00
	fee := mtnFee(rails.Payout, amount)
	h.fund(t, "GHS", ledger.Minor(k)*(amount+fee)+fee, "seed") // K fit, K+1 does not

	var wg sync.WaitGroup
	var mu sync.Mutex
	created, refused := 0, 0
	for i := 0; i < n; i++ {
		wg.Go(func() {
			r := h.payout(fmt.Sprintf("p-%d", i), amount)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Err != nil:
				t.Errorf("payout %d: %v", i, r.Err)
			case r.Result.Err == nil:
				created++
			case errors.Is(r.Result.Err, ledger.ErrInsufficientFunds):
				refused++
			default:
				t.Errorf("payout %d: unexpected %v", i, r.Result.Err)
			}
		})
	}
	wg.Wait()
	if created != k || refused != n-k {
		t.Fatalf("created %d, refused %d; want %d and %d", created, refused, k, n-k)
	}
	a := h.balance("GHS")
	if a.Available() != fee {
		t.Fatalf("available %d after %d payouts, want %d", a.Available(), k, fee)
	}
	{
		s := h.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// The same reference sent concurrently many times creates one payout, and
// every caller gets its id.
func TestConcurrentSameReference(t *testing.T) {
	h := start(t)
	h.fund(t, "GHS", 1_000_000, "seed")
	const n = 100
	ids := make(chan string, n)
	created := make(chan bool, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Go(func() {
			r := h.payout("same-ref", 5_000)
			if r.Err != nil || r.Result.Err != nil {
				t.Errorf("payout: %v %v", r.Err, r.Result.Err)
				return
			}
			ids <- r.Result.Payout.ID
			created <- !r.Result.Replayed
		})
	}
	wg.Wait()
	close(ids)
	close(created)
	var first string
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first {
			t.Fatalf("two payouts for one reference: %s and %s", first, id)
		}
	}
	fresh := 0
	for c := range created {
		if c {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d callers were told they created the payout, want 1", fresh)
	}
	var count int
	{
		s := h.sys.Reader()
		count = len(s.Payouts(h.org, ledger.PayoutFilter{}, ledger.CursorStart, 100).Items)
	}
	if count != 1 {
		t.Fatalf("%d payouts exist, want 1", count)
	}
	// A changed replay is a duplicate naming the original.
	r := h.payout("same-ref", 5_001)
	if !errors.Is(r.Result.Err, ledger.ErrDuplicate) || r.Result.Err.ExistingID != first {
		t.Fatalf("changed replay: %v, want duplicate of %s", r.Result.Err, first)
	}
}

// Payouts move through the sandbox rail to their final state; a rejected
// one (cents 01) is refunded with its fee.
func TestPayoutLifecycle(t *testing.T) {
	h := start(t)
	h.fund(t, "GHS", 100_000, "seed")
	ok := h.payout("good", 10_000)
	bad := h.payout("bad", 10_001)
	slow := h.payout("slow", 10_003)
	for _, r := range []actors.Reply{ok, bad, slow} {
		if r.Err != nil || r.Result.Err != nil {
			t.Fatalf("create: %v %v", r.Err, r.Result.Err)
		}
	}
	want := map[string]ledger.PayoutStatus{
		ok.Result.Payout.ID:   ledger.PayoutCompleted,
		bad.Result.Payout.ID:  ledger.PayoutFailed,
		slow.Result.Payout.ID: ledger.PayoutCompleted,
	}
	if !eventually(10*time.Second, func() bool {
		s := h.sys.Reader()
		for id, st := range want {
			if p, _ := s.Payout(id); p.Status != st {
				return false
			}
		}
		return true
	}) {
		s := h.sys.Reader()
		for id := range want {
			p, _ := s.Payout(id)
			t.Logf("%s: %s %q", id, p.Status, p.StatusMessage)
		}
		t.Fatal("payouts did not reach their final states")
	}
	// Funded 1000.00; two payouts of 100.00 and 100.03 went out with fees
	// 1.00 each; the rejected one came back in full.
	a := h.balance("GHS")
	wantTotal := ledger.Minor(100_000 - (10_000 + 100) - (10_003 + 100))
	if a.Total != wantTotal {
		t.Fatalf("total %d, want %d", a.Total, wantTotal)
	}
	{
		s := h.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// Idle account actors are stopped and come back on the next message; no
// request is lost in between, even when requests arrive just as an actor
// decides to stop.
func TestAccountActorPassivation(t *testing.T) {
	h := startWith(t, actors.Config{IdleTimeout: 5 * time.Millisecond})
	h.fund(t, "GHS", 10_000_000, "seed")
	var wg sync.WaitGroup
	var created atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for i := 0; i < 40; i++ {
				// Pauses around the idle timeout race requests against
				// passivation.
				time.Sleep(time.Duration(i%4) * 3 * time.Millisecond)
				r := h.payout(fmt.Sprintf("p-%d-%d", w, i), 1_000)
				if r.Err != nil || r.Result.Err != nil {
					t.Errorf("payout %d/%d: %v %v", w, i, r.Err, r.Result.Err)
					return
				}
				created.Add(1)
			}
		})
	}
	wg.Wait()
	if created.Load() != 160 {
		t.Fatalf("%d of 160 payouts created", created.Load())
	}
	want := ledger.Minor(10_000_000 - 160*(1_000+mtnFee(rails.Payout, 1_000)))
	if a := h.balance("GHS"); a.Total != want {
		t.Fatalf("total %d, want %d", a.Total, want)
	}
}

// Each sandbox collection scenario ends in its state, and only completed
// collections credit the balance, less their fee.
func TestCollectionScenarios(t *testing.T) {
	h := start(t)
	cases := []struct {
		amount ledger.Minor // GHS pesewas: the cents pick the scenario
		want   ledger.CollectionStatus
	}{
		{10_000, ledger.CollectionCompleted}, // default
		{10_001, ledger.CollectionFailed},    // 01 rejected
		{10_003, ledger.CollectionCompleted}, // 03 times out, then reconciles
		{10_050, ledger.CollectionCompleted}, // 50 completes late
		{10_051, ledger.CollectionFailed},    // 51 fails
		{10_052, ledger.CollectionFailed},    // 52 payer never approves
		{10_099, ledger.CollectionCompleted}, // 99 transient error, then reconciles
	}
	ids := map[string]ledger.CollectionStatus{}
	var credited ledger.Minor
	for i, c := range cases {
		r := h.sys.CreateCollection(actors.CollectionRequest{
			OrgID: h.org, ExternalReference: fmt.Sprintf("c-%d", i), MethodType: ledger.MethodMobileMoney,
			Spec: ledger.CollectionSpec{Currency: "GHS", Amount: c.amount, Method: "gh_mtn", PayerNumber: "233559630374"},
			Fee:  mtnFee(rails.Collection, c.amount),
		})
		if r.Err != nil || r.Result.Err != nil {
			t.Fatalf("collection %d: %v %v", i, r.Err, r.Result.Err)
		}
		if r.Result.Collection.Status != ledger.CollectionPending {
			t.Fatalf("collection %d starts %s", i, r.Result.Collection.Status)
		}
		ids[r.Result.Collection.ID] = c.want
		if c.want == ledger.CollectionCompleted {
			credited += c.amount - mtnFee(rails.Collection, c.amount)
		}
	}
	waitFor(t, "the collections' final states", func() bool {
		s := h.sys.Reader()
		for id := range ids {
			if c, _ := s.Collection(id); !c.Status.Terminal() {
				return false
			}
		}
		return true
	})
	{
		s := h.sys.Reader()
		for id, want := range ids {
			c, _ := s.Collection(id)
			if c.Status != want {
				t.Errorf("collection of %d ended %s (%q), want %s", c.Spec.Amount, c.Status, c.StatusMessage, want)
			}
			if want == ledger.CollectionFailed && c.StatusMessage == "" {
				t.Errorf("failed collection of %d has no statusMessage", c.Spec.Amount)
			}
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.balance("GHS").Total; got != credited {
		t.Fatalf("balance %d, want the completed collections less fees: %d", got, credited)
	}
}

// A rail transition the ledger refuses (the refund of a failed payout that
// would take the balance past its limit) is retried with backoff, not
// re-proposed as fast as the log commits, and goes through once it can.
func TestRefusedTransitionIsParked(t *testing.T) {
	slow := fastSandbox
	slow.Settlement = 500 * time.Millisecond
	h := startWithRail(t, actors.Config{}, slow)
	// Fill the GHS balance to the most an account holds.
	ctx := context.Background()
	var wg sync.WaitGroup
	var refused atomic.Int64
	for g := 0; g < 32; g++ {
		wg.Go(func() {
			for i := 0; refused.Load() == 0 && i < 1000; i++ {
				r := h.sys.Propose(ctx, &ledger.FundBalance{At: time.Now().UnixMilli(), OrgID: h.org, Currency: "GHS",
					Amount: ledger.AmountMax, ExternalReference: fmt.Sprint("fill-", g, "-", i)})
				if r.Err == nil && r.Result.Err != nil && r.Result.Err.Code == ledger.CodeBalanceLimit {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if a, _ := h.sys.Reader().AccountFor(h.org, "GHS"); a.Total < math.MaxInt64 {
		h.fund(t, "GHS", ledger.Minor(math.MaxInt64)-a.Total, "fill-last")
	}
	// A payout the rail will reject, debited now; a collection credits the
	// balance behind it, so its refund cannot book.
	r := h.payout("rejected", 1001) // 10.01: rejected by the sandbox rail
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("payout: %v %v", r.Err, r.Result.Err)
	}
	for _, cmd := range []ledger.Command{
		&ledger.CreateCollection{At: time.Now().UnixMilli(), ID: "col_fill", OrgID: h.org, ExternalReference: "fill-col",
			Spec:       ledger.CollectionSpec{Currency: "GHS", Amount: 100, Method: "gh_mtn", PayerNumber: "233241234567"},
			MethodType: ledger.MethodMobileMoney},
		&ledger.SettleCollection{At: time.Now().UnixMilli(), ID: "col_fill", Completed: true},
	} {
		if r := h.sys.Propose(ctx, cmd); r.Err != nil || r.Result.Err != nil {
			t.Fatalf("%T: %v %v", cmd, r.Err, r.Result.Err)
		}
	}
	_, last0 := h.node.LogBounds()
	time.Sleep(3 * time.Second)
	parked := h.sys.ParkedTransitions()
	_, last1 := h.node.LogBounds()
	if parked == 0 {
		t.Fatal("the refused refund was never parked")
	}
	if parked > 12 || last1-last0 > 20 {
		t.Fatalf("in 3s the refund was refused %d times and the log grew %d entries: not backing off", parked, last1-last0)
	}
	p, _ := h.sys.Reader().PayoutByReference(h.org, "rejected")
	if p.Status != ledger.PayoutProcessing {
		t.Fatalf("payout is %s while its refund cannot book", p.Status)
	}
	// Room again: the next try books the refund.
	if r := h.payout("room", 100_000); r.Err != nil || r.Result.Err != nil {
		t.Fatalf("payout: %v %v", r.Err, r.Result.Err)
	}
	if !eventually(40*time.Second, func() bool {
		p, _ = h.sys.Reader().PayoutByReference(h.org, "rejected")
		return p.Status == ledger.PayoutFailed
	}) {
		t.Fatalf("payout still %s after the balance had room for its refund", p.Status)
	}
	if err := h.sys.Reader().Check(); err != nil {
		t.Fatal(err)
	}
}
