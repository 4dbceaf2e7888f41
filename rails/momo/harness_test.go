package momo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"payments/rails/internal/railtest"
	"payments/rails/momo"
	"payments/rails/momo/momofake"
	"payments/rails/provider"
)

// rig is an adapter wired to a fake over loopback HTTP, with an ingress
// that stands for our callback route.
type rig struct {
	*railtest.Rig
	fake    *momofake.Server
	adapter *momo.Adapter
	ctx     context.Context
}

func newRig(t *testing.T, opts momofake.Options) *rig {
	t.Helper()
	r := &rig{Rig: railtest.NewRig(t, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), nil), ctx: context.Background()}
	opts.Now = r.Clock.Now
	r.fake = momofake.NewServer(opts)
	t.Cleanup(r.fake.Close)
	o := r.fake.Options()
	var err error
	r.adapter, err = momo.New(momo.Config{
		Name:              "momo_test",
		BaseURL:           r.fake.URL,
		TargetEnvironment: o.TargetEnvironment,
		Currency:          o.Currency,
		Exponent:          o.Exponent,
		CallbackURL:       r.In.URL + "/v1/providers/momo_test/callbacks",
		Collection:        creds(o.Collection),
		Disbursement:      creds(o.Disbursement),
		Now:               r.Clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func creds(c momofake.Credentials) *momo.Credentials {
	return &momo.Credentials{APIUser: provider.NewSecret(c.APIUser), APIKey: provider.NewSecret(c.APIKey), SubscriptionKey: provider.NewSecret(c.SubscriptionKey)}
}

// noMoneyMoved checks that the fake moved no money.
func (r *rig) noMoneyMoved() {
	r.T.Helper()
	if len(r.fake.Movements()) != 0 {
		r.T.Fatal("money moved")
	}
}

// submit prepares in and submits it, a collection or else a payout,
// failing the test unless MoMo took it; it returns the Prepared.
func (r *rig) submit(in provider.Instruction, collection bool) provider.Prepared {
	r.T.Helper()
	prepare, submit := r.adapter.PreparePayout, r.adapter.SubmitPayout
	if collection {
		prepare, submit = r.adapter.PrepareCollection, r.adapter.SubmitCollection
	}
	p, err := prepare(r.ctx, in)
	if err == nil {
		_, err = submit(r.ctx, in, p)
	}
	if err != nil {
		r.T.Fatal(err)
	}
	return p
}

// resubmitMovesOnce submits the prepared payout again: MoMo takes it, and
// money has moved once in all.
func (r *rig) resubmitMovesOnce(in provider.Instruction, p provider.Prepared) {
	r.T.Helper()
	if out, err := r.adapter.SubmitPayout(r.ctx, in, p); err != nil || out.State != provider.StateProcessing {
		r.T.Fatalf("re-submit: %+v %v", out, err)
	}
	if len(r.fake.Movements()) != 1 {
		r.T.Fatal("want exactly one movement")
	}
}

// noCallback checks that nothing more arrives once the fake's callbacks
// in flight are done.
func (r *rig) noCallback() {
	r.T.Helper()
	r.fake.Callbacks()
	r.In.None(r.T)
}

// settler stands for the caller: it settles an instruction once, whichever
// of reply, callback or status poll reports a final state first, and only
// believes an unauthenticated callback after asking the status.
type settler struct {
	mu      sync.Mutex
	settled map[string]provider.Outcome
	count   map[string]int
}

func newSettler() *settler {
	return &settler{settled: map[string]provider.Outcome{}, count: map[string]int{}}
}

// settle records a final outcome for key; a second is ignored.
func (s *settler) settle(key string, o provider.Outcome) bool {
	if !o.State.Final() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, done := s.settled[key]; done {
		return false
	}
	s.settled[key] = o
	s.count[key]++
	return true
}

// onCallback handles a callback the caller's way.
func (s *settler) onCallback(t *testing.T, ctx context.Context, a *momo.Adapter, cb provider.Callback, in provider.Instruction, p provider.Prepared) provider.Notification {
	t.Helper()
	n, err := a.HandleCallback(ctx, cb)
	if err != nil {
		t.Fatalf("HandleCallback: %v", err)
	}
	if n.Key != p.Key {
		t.Fatalf("callback for %s, want %s", n.Key, p.Key)
	}
	if n.Authenticated {
		t.Fatal("a MoMo callback claims to be authenticated")
	}
	var out provider.Outcome
	if n.Collection {
		out, err = a.CollectionStatus(ctx, in, p)
	} else {
		out, err = a.PayoutStatus(ctx, in, p)
	}
	if err != nil {
		t.Fatalf("status after callback: %v", err)
	}
	s.settle(n.Key, out)
	return n
}

func newAdapter(t *testing.T, r *rig, o momofake.Options) *momo.Adapter {
	t.Helper()
	a, err := momo.New(momo.Config{Name: "momo_test", BaseURL: r.fake.URL, TargetEnvironment: o.TargetEnvironment, Currency: o.Currency, Exponent: o.Exponent,
		Collection: creds(o.Collection), Disbursement: creds(o.Disbursement), Now: r.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
