package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	"payments/actors/app"
	"payments/ledger"
	"payments/rails"
)

// moneyHarness is the application API over a real single-node Raft cluster
// on Pebble in a temporary directory and the actors on it, with one
// organization and its key, for the money movement operations' tests.
type moneyHarness struct {
	t     *testing.T
	sys   *actors.System
	app   *app.App
	rates *testRates
	org   string
	key   ledger.APIKey
}

// heldTiming keeps every payout and collection pending, so that tests read
// what the operation made, not what the rail did since.
var heldTiming = rails.SandboxTiming{SubmitLatency: time.Hour, Settlement: time.Hour, Timeout: time.Hour}

// startMoney starts the stack; cfg's System and Rates are filled in (the
// rates are the harness's, which tests set).
func startMoney(t *testing.T, cfg app.Config) *moneyHarness {
	t.Helper()
	node := actorstest.OpenNode(t)
	sys := actorstest.Start(t, node, actors.Config{Rail: rails.NewSandbox(heldTiming)})
	rates := &testRates{rates: map[[2]string]string{}}
	cfg.System, cfg.Rates = sys, rates
	h := &moneyHarness{t: t, sys: sys, app: app.New(cfg), rates: rates, org: "org_money"}
	h.propose(&ledger.CreateOrganization{
		At: time.Now().UnixMilli(), ID: h.org, Name: "Money org",
		Key: ledger.CreateAPIKey{ID: "key_money", OrgID: h.org, Hash: actors.HashKey(actors.NewKeySecret(false)), Scopes: ledger.ScopesMerchant},
	})
	h.key, _ = sys.Reader().APIKey(h.org, "key_money")
	return h
}

// propose commits a command the test sets up state with.
func (h *moneyHarness) propose(cmd ledger.Command) ledger.Result {
	h.t.Helper()
	r := h.sys.Propose(context.Background(), cmd)
	mustApply(h.t, fmt.Sprintf("%T", cmd), r)
	return r.Result
}

func (h *moneyHarness) fund(currency string, amount ledger.Minor) {
	h.t.Helper()
	mustApply(h.t, "fund", h.sys.FundBalance(h.org, currency, amount, "fund-"+currency))
}

// caller is the organization's key, with caps as the ledger holds them.
func (h *moneyHarness) caller(attempt string) app.Caller {
	key, _ := h.sys.Reader().APIKey(h.org, h.key.ID)
	return app.Caller{OrgID: h.org, Key: &key, Attempt: attempt}
}

func (h *moneyHarness) available(currency string) ledger.Minor {
	a, _ := h.sys.Reader().AccountFor(h.org, currency)
	return a.Available()
}

// testRates is a rate source the test sets, pair by pair; a pair not set
// has no rate right now.
type testRates struct {
	mu    sync.Mutex
	rates map[[2]string]string
}

// set makes rate the pair's rate; "" leaves the pair without one.
func (r *testRates) set(from, to, rate string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rate == "" {
		delete(r.rates, [2]string{from, to})
		return
	}
	r.rates[[2]string{from, to}] = rate
}

func (r *testRates) Rate(from, to string) (rails.Rate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.rates[[2]string{from, to}]
	if !ok {
		return rails.Rate{}, rails.ErrRateUnavailable
	}
	out := rails.Rate{From: from, To: to}
	if _, _, err := out.Value.SetString(v); err != nil {
		return rails.Rate{}, err
	}
	return out, nil
}

var _ rails.RateSource = (*testRates)(nil)

// text is a pointer to s, for optional request fields.
func text(s string) *string { return &s }

// wantOutcome checks r against a case that wants the refusal code with
// message, or, code "", an applied command. It reports whether r applied,
// for the case to go on to what the command made.
func wantOutcome(t *testing.T, r actors.Reply, code ledger.Code, message string) bool {
	t.Helper()
	if code != "" {
		refusedWith(t, r, code, message)
		return false
	}
	mustApply(t, "refused", r)
	return true
}

// refusedWith reports whether r is a refusal with code whose message is
// message ("" for any).
func refusedWith(t *testing.T, r actors.Reply, code ledger.Code, message string) {
	t.Helper()
	switch {
	case r.Err != nil:
		t.Fatalf("got %v, want %s", r.Err, code)
	case r.Result.Err == nil:
		t.Fatalf("accepted, want %s %q", code, message)
	case r.Result.Err.Code != code || message != "" && r.Result.Err.Message != message:
		t.Fatalf("got %s %q, want %s %q", r.Result.Err.Code, r.Result.Err.Message, code, message)
	}
}
