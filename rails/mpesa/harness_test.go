package mpesa_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"payments/rails/internal/railtest"
	"payments/rails/mpesa"
	"payments/rails/mpesa/mpesafake"
	"payments/rails/provider"
)

// One RSA key for every fake in the run: generating one per test is slow.
var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

func sharedKey(t *testing.T) *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		testKey = k
	})
	return testKey
}

// rig is an adapter wired to a fake Daraja over loopback HTTP, with an
// ingress standing for our callback route.
type rig struct {
	*railtest.Rig
	fake    *mpesafake.Server
	adapter *mpesa.Adapter
	ingress string
	ctx     context.Context
}

func newRig(t *testing.T, opts mpesafake.Options) *rig {
	t.Helper()
	r := &rig{Rig: railtest.NewRig(t, time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC), []byte(`{"ResultCode":0,"ResultDesc":"Accepted"}`)), ctx: context.Background()}
	opts.Now = r.Clock.Now
	if opts.Key == nil {
		opts.Key = sharedKey(t)
	}
	r.fake = mpesafake.NewServer(opts)
	r.ingress = r.In.URL + "/v1/providers/mpesa_test/callbacks"
	t.Cleanup(r.fake.Close)
	r.adapter = r.newAdapter(func(*mpesa.Config) {})
	return r
}

// noMoneyMoved checks that the fake moved no money.
func (r *rig) noMoneyMoved() {
	r.T.Helper()
	if len(r.fake.Movements()) != 0 {
		r.T.Fatal("money moved")
	}
}

// config is the adapter configuration that matches the fake.
func (r *rig) config() mpesa.Config {
	o := r.fake.Options()
	return mpesa.Config{
		Name: "mpesa_test", BaseURL: r.fake.URL, CallbackURL: r.ingress,
		ConsumerKey: provider.NewSecret(o.ConsumerKey), ConsumerSecret: provider.NewSecret(o.ConsumerSecret),
		ShortCode: o.ShortCode, Passkey: provider.NewSecret(o.Passkey),
		B2CShortCode: o.B2CShortCode, InitiatorName: o.InitiatorName, InitiatorPassword: provider.NewSecret(o.InitiatorPassword),
		Certificate: r.fake.CertificatePEM(),
		Now:         r.Clock.Now,
	}
}

func (r *rig) newAdapter(edit func(*mpesa.Config)) *mpesa.Adapter {
	r.T.Helper()
	cfg := r.config()
	edit(&cfg)
	a, err := mpesa.New(cfg)
	if err != nil {
		r.T.Fatal(err)
	}
	return a
}

// noCallback checks that nothing more arrives once the fake's callbacks
// in flight are done.
func (r *rig) noCallback() {
	r.T.Helper()
	r.fake.Callbacks()
	r.In.None(r.T)
}

// caller stands for the operations layer: it keeps what it committed for
// each instruction (the Prepared, the provider's reference, whether it
// began submitting) and settles an instruction once. It follows the
// SendOnce rule: Submit only when no send may have happened.
type caller struct {
	t          *testing.T
	a          *mpesa.Adapter
	in         provider.Instruction
	p          provider.Prepared
	collection bool
	sending    bool // committed "submitting" before the first Submit
	settled    *provider.Outcome
	settles    int
}

func (c *caller) settle(o provider.Outcome) {
	if !o.State.Final() {
		return
	}
	if c.settled != nil {
		return
	}
	c.settled = &o
	c.settles++
}

// submit sends unless a send may already have happened.
func (c *caller) submit(ctx context.Context) (provider.Outcome, error) {
	if c.sending {
		c.t.Fatal("the caller would Submit twice; SendOnce forbids it")
	}
	c.sending = true // committed before the call
	out, err := c.submitCall(ctx)
	if err == nil && out.ProviderRef != "" {
		c.in.ProviderRef = out.ProviderRef
	}
	return out, err
}

// mustSubmit submits, failing the test on an error.
func (c *caller) mustSubmit(ctx context.Context) provider.Outcome {
	c.t.Helper()
	out, err := c.submit(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (c *caller) submitCall(ctx context.Context) (provider.Outcome, error) {
	if c.collection {
		return c.a.SubmitCollection(ctx, c.in, c.p)
	}
	return c.a.SubmitPayout(ctx, c.in, c.p)
}

// submitLost submits once with Daraja's answer lost after it took the
// request (a DropAfterApply fault on op): the outcome is unknown, and a
// retry in this process is refused without a request.
func (c *caller) submitLost(r *rig, op string) {
	c.t.Helper()
	r.fake.FailNext(op, mpesafake.Fault{DropAfterApply: true})
	if _, err := c.submit(r.ctx); !errors.Is(err, provider.ErrUnknownOutcome) {
		c.t.Fatalf("err %v, want unknown outcome", err)
	}
	if _, err := c.submitCall(r.ctx); !errors.Is(err, provider.ErrUnknownOutcome) {
		c.t.Fatalf("a second submit was allowed: %v", err)
	}
}

// onCallback handles a callback the caller's way.
func (c *caller) onCallback(ctx context.Context, cb provider.Callback) provider.Notification {
	c.t.Helper()
	n, err := c.a.HandleCallback(ctx, cb)
	if err != nil {
		c.t.Fatalf("HandleCallback: %v", err)
	}
	if n.Key != c.p.Key {
		c.t.Fatalf("callback for %s, want %s", n.Key, c.p.Key)
	}
	if n.Outcome.ProviderRef != "" && c.in.ProviderRef == "" {
		c.in.ProviderRef = n.Outcome.ProviderRef // committed
	}
	if n.Authenticated {
		c.settle(n.Outcome)
		return n
	}
	out, err := c.a.CollectionStatus(ctx, c.in, c.p)
	if err != nil {
		c.t.Fatalf("status after callback: %v", err)
	}
	c.settle(out)
	return n
}

func newCaller(t *testing.T, a *mpesa.Adapter, in provider.Instruction, collection bool) *caller {
	t.Helper()
	c := &caller{t: t, a: a, in: in, collection: collection}
	var err error
	if collection {
		c.p, err = a.PrepareCollection(context.Background(), in)
	} else {
		c.p, err = a.PreparePayout(context.Background(), in)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func netParse(cidr string) (net.IP, []*net.IPNet, error) {
	ip, n, err := net.ParseCIDR(cidr)
	return ip, []*net.IPNet{n}, err
}
