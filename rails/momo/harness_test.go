package momo_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/rails/momo"
	"payments/rails/momo/momofake"
	"payments/rails/provider"
)

// clock is a test clock shared by the adapter and the fake.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// rig is an adapter wired to a fake over loopback HTTP, with an ingress
// that stands for our callback route.
type rig struct {
	t         *testing.T
	clock     *clock
	fake      *momofake.Server
	adapter   *momo.Adapter
	callbacks chan provider.Callback
	ctx       context.Context
}

func newRig(t *testing.T, opts momofake.Options) *rig {
	t.Helper()
	r := &rig{t: t, clock: &clock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}, callbacks: make(chan provider.Callback, 16), ctx: context.Background()}
	opts.Now = r.clock.Now
	r.fake = momofake.NewServer(opts)
	ingress := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		h := map[string]string{}
		for k := range req.Header {
			h[strings.ToLower(k)] = req.Header.Get(k)
		}
		r.callbacks <- provider.Callback{Header: h, Body: body, RemoteAddr: req.RemoteAddr, Query: req.URL.RawQuery}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() {
		r.fake.Close()
		ingress.Close()
	})
	o := r.fake.Options()
	var err error
	r.adapter, err = momo.New(momo.Config{
		Name:              "momo_test",
		BaseURL:           r.fake.URL,
		TargetEnvironment: o.TargetEnvironment,
		Currency:          o.Currency,
		Exponent:          o.Exponent,
		CallbackURL:       ingress.URL + "/v1/providers/momo_test/callbacks",
		Collection:        creds(o.Collection),
		Disbursement:      creds(o.Disbursement),
		Now:               r.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func creds(c momofake.Credentials) *momo.Credentials {
	return &momo.Credentials{APIUser: provider.NewSecret(c.APIUser), APIKey: provider.NewSecret(c.APIKey), SubscriptionKey: provider.NewSecret(c.SubscriptionKey)}
}

// callback waits for the next callback the ingress received.
func (r *rig) callback() provider.Callback {
	r.t.Helper()
	select {
	case cb := <-r.callbacks:
		return cb
	case <-time.After(5 * time.Second):
		r.t.Fatal("no callback arrived")
	}
	return provider.Callback{}
}

// noCallback checks that nothing more arrives once the fake's callbacks
// in flight are done.
func (r *rig) noCallback() {
	r.t.Helper()
	r.fake.Callbacks()
	select {
	case cb := <-r.callbacks:
		r.t.Fatalf("an unexpected callback: %s", cb.Body)
	default:
	}
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
		Collection: creds(o.Collection), Disbursement: creds(o.Disbursement), Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
