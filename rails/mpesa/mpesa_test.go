package mpesa_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"payments/rails/mpesa"
	"payments/rails/mpesa/mpesafake"
	"payments/rails/provider"
)

func kes(id, msisdn string, minor int64) provider.Instruction {
	return provider.Instruction{ID: id, Method: "ke_mpesa", Currency: "KES", AmountMinor: minor, Exponent: 2, AccountNumber: msisdn, Narration: "Order #42 & co"}
}

func TestSTKCollectionCompletesThroughCallback(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	c := newCaller(t, r.adapter, kes("col_1", "254708374149", 150_00), true)
	out, err := c.submit(r.ctx)
	if err != nil || out.State != provider.StatePending || !strings.HasPrefix(out.ProviderRef, "ws_CO_") {
		t.Fatalf("submit: %+v %v", out, err)
	}
	n := c.onCallback(r.ctx, r.Callback())
	if n.Authenticated || !n.Collection || n.Outcome.ProviderRef != out.ProviderRef {
		t.Fatalf("notification %+v", n)
	}
	if c.settled == nil || c.settled.State != provider.StateCompleted {
		t.Fatalf("settled %+v", c.settled)
	}
	if m := r.fake.Movements(); len(m) != 1 || m[0].Amount != 150 {
		t.Fatalf("movements %+v", m)
	}
	if r.fake.Count(mpesafake.OpSTKPush) != 1 || r.fake.Count(mpesafake.OpSTKQuery) != 1 {
		t.Fatalf("requests %+v", r.fake.Requests())
	}
	r.noCallback()
}

func TestSTKCollectionFails(t *testing.T) {
	cases := []struct {
		name      string
		behaviour mpesafake.Behaviour
		wantCode  string
		wantWords string
	}{
		{"cancelled", mpesafake.Cancel, "1032", "cancelled by user"},
		{"insufficient", mpesafake.Insufficient, "(1)", "insufficient"},
		{"wrong pin", mpesafake.WrongPIN, "2001", "initiator information"},
		{"unreachable", mpesafake.Unreachable, "1037", "cannot be reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, mpesafake.Options{})
			r.fake.SetPayer("254708000001", tc.behaviour)
			c := newCaller(t, r.adapter, kes("col_"+tc.name, "254708000001", 100_00), true)
			c.mustSubmit(r.ctx)
			c.onCallback(r.ctx, r.Callback())
			if c.settled == nil || c.settled.State != provider.StateFailed || !strings.Contains(c.settled.Message, tc.wantCode) || !strings.Contains(c.settled.Message, tc.wantWords) {
				t.Fatalf("settled %+v", c.settled)
			}
			r.noMoneyMoved()
		})
	}
}

func TestSTKExpiresUnanswered(t *testing.T) {
	r := newRig(t, mpesafake.Options{DefaultPayer: mpesafake.Hold, STKExpiry: time.Minute})
	c := newCaller(t, r.adapter, kes("col_exp", "254708374149", 100_00), true)
	c.mustSubmit(r.ctx)
	out, err := r.adapter.CollectionStatus(r.ctx, c.in, c.p)
	if err != nil || out.State != provider.StatePending {
		t.Fatalf("while waiting: %+v %v", out, err)
	}
	r.Clock.Advance(time.Minute)
	out, err = r.adapter.CollectionStatus(r.ctx, c.in, c.p)
	if err != nil || out.State != provider.StateFailed || !strings.Contains(out.Message, "1037") {
		t.Fatalf("after expiry: %+v %v", out, err)
	}
	c.settle(out)
	c.onCallback(r.ctx, r.Callback())
	if c.settles != 1 {
		t.Fatalf("settled %d times", c.settles)
	}
}

func TestCentsAreRefused(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	in := kes("pay_cents", "254708374149", 100_50)
	for name, prepare := range map[string]func() (provider.Prepared, error){
		"payout":     func() (provider.Prepared, error) { return r.adapter.PreparePayout(r.ctx, in) },
		"collection": func() (provider.Prepared, error) { return r.adapter.PrepareCollection(r.ctx, in) },
	} {
		_, err := prepare()
		if !errors.Is(err, mpesa.ErrFractionalAmount) || !errors.Is(err, provider.ErrRejected) || !strings.Contains(err.Error(), "100.50 KES") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// Submit refuses too, for a Prepared made before a rule changed.
	if _, err := r.adapter.SubmitPayout(r.ctx, in, provider.Prepared{Key: "k"}); !errors.Is(err, mpesa.ErrFractionalAmount) {
		t.Fatalf("submit: %v", err)
	}
	if n := len(r.fake.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestB2CPayoutCompletesThroughResultCallback(t *testing.T) {
	r := newRig(t, mpesafake.Options{B2CBalance: 1000})
	c := newCaller(t, r.adapter, kes("pay_1", "254708374149", 250_00), false)
	out, err := c.submit(r.ctx)
	if err != nil || out.State != provider.StateProcessing || !strings.HasPrefix(out.ProviderRef, "AG_") {
		t.Fatalf("submit: %+v %v", out, err)
	}
	n := c.onCallback(r.ctx, r.Callback())
	if !n.Authenticated || n.Collection {
		t.Fatalf("notification %+v", n)
	}
	if c.settled == nil || c.settled.State != provider.StateCompleted || len(c.settled.ProviderRef) != 10 {
		t.Fatalf("settled %+v", c.settled)
	}
	if r.fake.B2CBalance() != 750 || len(r.fake.Movements()) != 1 {
		t.Fatalf("balance %d, movements %+v", r.fake.B2CBalance(), r.fake.Movements())
	}
	if !r.adapter.SendOnce(provider.Payouts) || !r.adapter.SendOnce(provider.Collections) {
		t.Fatal("the adapter must declare SendOnce")
	}
}

func TestSecurityCredentialIsVerified(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	otherKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	other := mpesafake.New(mpesafake.Options{Key: otherKey}) // another key pair
	cases := []struct {
		name string
		edit func(*mpesa.Config)
	}{
		{"wrong initiator password", func(c *mpesa.Config) { c.InitiatorPassword = provider.NewSecret("not-the-password") }},
		{"another certificate", func(c *mpesa.Config) { c.Certificate = other.CertificatePEM() }},
		{"another initiator", func(c *mpesa.Config) { c.InitiatorName = "someone" }},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := r.newAdapter(tc.edit)
			c := newCaller(t, a, kes("pay_cred_"+string(rune('a'+i)), "254708374149", 100_00), false)
			c.mustSubmit(r.ctx)
			c.onCallback(r.ctx, r.Callback())
			if c.settled == nil || c.settled.State != provider.StateFailed || !strings.Contains(c.settled.Message, "2001") {
				t.Fatalf("settled %+v", c.settled)
			}
		})
	}
	if len(r.fake.Movements()) != 0 {
		t.Fatal("money moved on a bad credential")
	}
	// The right one, for contrast: the fake decrypts it and pays.
	c := newCaller(t, r.adapter, kes("pay_cred_ok", "254708374149", 100_00), false)
	c.mustSubmit(r.ctx)
	c.onCallback(r.ctx, r.Callback())
	if c.settled == nil || c.settled.State != provider.StateCompleted {
		t.Fatalf("settled %+v", c.settled)
	}
}

func TestB2CFailures(t *testing.T) {
	cases := []struct {
		name     string
		balance  int64
		payee    mpesafake.Behaviour
		minor    int64
		wantCode string
	}{
		{"insufficient balance", 50, 0, 100_00, "(1)"},
		{"unregistered recipient", 0, mpesafake.Unregistered, 100_00, "2040"},
		{"under the minimum", 0, 0, 5_00, "(2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, mpesafake.Options{B2CBalance: tc.balance})
			if tc.payee != 0 {
				r.fake.SetPayer("254708000002", tc.payee)
			}
			c := newCaller(t, r.adapter, kes("pay_f", "254708000002", tc.minor), false)
			c.mustSubmit(r.ctx)
			c.onCallback(r.ctx, r.Callback())
			if c.settled == nil || c.settled.State != provider.StateFailed || !strings.Contains(c.settled.Message, tc.wantCode) {
				t.Fatalf("settled %+v", c.settled)
			}
			r.noMoneyMoved()
		})
	}
}

// An ambiguous B2C (the money moved, the answer was lost) is never sent
// again: this process refuses, the caller only asks the status, and the
// result and status callbacks settle it once.
func TestB2CNeverResentAfterLostResponse(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	c := newCaller(t, r.adapter, kes("pay_lost", "254708374149", 300_00), false)
	c.submitLost(r, mpesafake.OpB2C)
	if n := r.fake.Count(mpesafake.OpB2C); n != 1 {
		t.Fatalf("%d B2C requests, want 1", n)
	}
	out, err := r.adapter.PayoutStatus(r.ctx, c.in, c.p)
	if err != nil || out.State != provider.StateUnknown || out.CheckAfter <= 0 {
		t.Fatalf("status: %+v %v", out, err)
	}
	// Two callbacks come: the payment's result and the status answer, in
	// either order; both say completed and it settles once.
	for range 2 {
		n := c.onCallback(r.ctx, r.Callback())
		if !n.Authenticated || n.Outcome.State != provider.StateCompleted {
			t.Fatalf("notification %+v", n)
		}
	}
	if c.settles != 1 || len(r.fake.Movements()) != 1 {
		t.Fatalf("settled %d times, %d movements", c.settles, len(r.fake.Movements()))
	}
	// A process that breaks the rule (a new leader that re-sends) still
	// moves nothing twice: Daraja refuses the duplicate, read as taken.
	other := r.newAdapter(func(*mpesa.Config) {})
	again, err := other.SubmitPayout(r.ctx, c.in, c.p)
	if err != nil || again.Message != "already submitted" {
		t.Fatalf("re-send from another process: %+v %v", again, err)
	}
	if len(r.fake.Movements()) != 1 {
		t.Fatal("money moved twice")
	}
	r.noCallback()
}

// A 5xx after sending is ambiguous too: nothing is re-sent, the status
// query finds nothing and settles nothing; the payout waits.
func TestB2CServerErrorWaits(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	r.fake.FailNext(mpesafake.OpB2C, mpesafake.Fault{Status: http.StatusServiceUnavailable})
	c := newCaller(t, r.adapter, kes("pay_5xx", "254708374149", 300_00), false)
	if _, err := c.submit(r.ctx); !errors.Is(err, provider.ErrUnknownOutcome) {
		t.Fatalf("err %v", err)
	}
	if _, err := r.adapter.SubmitPayout(r.ctx, c.in, c.p); !errors.Is(err, provider.ErrUnknownOutcome) {
		t.Fatalf("second submit: %v", err)
	}
	if _, err := r.adapter.PayoutStatus(r.ctx, c.in, c.p); err != nil {
		t.Fatal(err)
	}
	n := c.onCallback(r.ctx, r.Callback())
	if n.Outcome.State != provider.StateUnknown || c.settled != nil {
		t.Fatalf("notification %+v, settled %+v", n, c.settled)
	}
	if r.fake.Count(mpesafake.OpB2C) != 1 || len(r.fake.Movements()) != 0 {
		t.Fatal("re-sent or moved")
	}
}

func TestB2CQueueTimeoutFails(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	r.fake.FailNext(mpesafake.OpB2C, mpesafake.Fault{QueueTimeout: true})
	c := newCaller(t, r.adapter, kes("pay_q", "254708374149", 100_00), false)
	if out, err := c.submit(r.ctx); err != nil || out.State != provider.StateProcessing {
		t.Fatalf("submit %+v %v", out, err)
	}
	n := c.onCallback(r.ctx, r.Callback())
	if !n.Authenticated || c.settled == nil || c.settled.State != provider.StateFailed || !strings.Contains(c.settled.Message, "queue") {
		t.Fatalf("notification %+v, settled %+v", n, c.settled)
	}
	r.noMoneyMoved()
}

func TestLostSTKResponse(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	c := newCaller(t, r.adapter, kes("col_lost", "254708374149", 100_00), true)
	c.submitLost(r, mpesafake.OpSTKPush)
	out, err := r.adapter.CollectionStatus(r.ctx, c.in, c.p)
	if err != nil || out.State != provider.StateUnknown {
		t.Fatalf("status without a CheckoutRequestID: %+v %v", out, err)
	}
	// The callback names the CheckoutRequestID; the caller commits it and
	// the query confirms.
	c.onCallback(r.ctx, r.Callback())
	if c.settled == nil || c.settled.State != provider.StateCompleted || c.in.ProviderRef == "" {
		t.Fatalf("settled %+v", c.settled)
	}
	if r.fake.Count(mpesafake.OpSTKPush) != 1 || len(r.fake.Movements()) != 1 {
		t.Fatal("prompted or paid twice")
	}
}

func TestUnknownCheckoutIsNotFound(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	in := kes("col_x", "254708374149", 100_00)
	in.ProviderRef = "ws_CO_000000000000000001"
	p, _ := r.adapter.PrepareCollection(r.ctx, in)
	if _, err := r.adapter.CollectionStatus(r.ctx, in, p); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("err %v", err)
	}
}

func TestTokenExpiryMidRun(t *testing.T) {
	r := newRig(t, mpesafake.Options{TokenLifetime: 10 * time.Minute})
	c := newCaller(t, r.adapter, kes("col_tok", "254708374149", 100_00), true)
	c.mustSubmit(r.ctx)
	r.fake.ExpireTokens()
	if out, err := r.adapter.CollectionStatus(r.ctx, c.in, c.p); err != nil || out.State != provider.StateCompleted {
		t.Fatalf("after revocation: %+v %v", out, err)
	}
	if n := r.fake.Count(mpesafake.OpToken); n != 2 {
		t.Fatalf("%d token requests", n)
	}
	r.Clock.Advance(9*time.Minute + 30*time.Second)
	before := len(r.fake.Requests())
	// A payout right at the refresh point: a new token first, no 401, one
	// B2C request.
	p := newCaller(t, r.adapter, kes("pay_tok", "254708374149", 100_00), false)
	p.mustSubmit(r.ctx)
	for _, q := range r.fake.Requests()[before:] {
		if q.Status == http.StatusUnauthorized {
			t.Fatalf("a 401: %+v", q)
		}
	}
	if r.fake.Count(mpesafake.OpToken) != 3 || r.fake.Count(mpesafake.OpB2C) != 1 {
		t.Fatalf("requests %+v", r.fake.Requests())
	}
	// A B2C refused at the gateway for its token is sent again once with
	// a new one: the gateway did nothing with the first.
	r.fake.ExpireTokens()
	q := newCaller(t, r.adapter, kes("pay_tok2", "254708374149", 100_00), false)
	q.mustSubmit(r.ctx)
	if r.fake.Count(mpesafake.OpB2C) != 3 {
		t.Fatalf("%d B2C requests, want 3 (one refused for its token)", r.fake.Count(mpesafake.OpB2C))
	}
	r.fake.Callbacks()
	if len(r.fake.Movements()) != 3 {
		t.Fatalf("movements %+v", r.fake.Movements())
	}
}

func TestRateLimited(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	r.fake.FailNext(mpesafake.OpSTKPush, mpesafake.Fault{Status: http.StatusTooManyRequests, RetryAfter: 3 * time.Second})
	in := kes("col_429", "254708374149", 100_00)
	p, _ := r.adapter.PrepareCollection(r.ctx, in)
	_, err := r.adapter.SubmitCollection(r.ctx, in, p)
	var pe *provider.Error
	if !errors.Is(err, provider.ErrRateLimited) || !errors.As(err, &pe) || pe.RetryAfter != 3*time.Second {
		t.Fatalf("err %v", err)
	}
	// Nothing was done: the same Prepared may be sent again.
	if out, err := r.adapter.SubmitCollection(r.ctx, in, p); err != nil || out.State != provider.StatePending {
		t.Fatalf("retry: %+v %v", out, err)
	}
	r.fake.Callbacks()
	if len(r.fake.Movements()) != 1 {
		t.Fatal("want one movement")
	}
}

func TestDuplicateCallbacksSettleOnce(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	pc := newCaller(t, r.adapter, kes("pay_dup", "254708374149", 100_00), false)
	pc.mustSubmit(r.ctx)
	first := r.Callback()
	if !r.fake.ResendB2CResult(pc.p.Key) {
		t.Fatal("nothing to resend")
	}
	second := r.Callback()
	n1, n2 := pc.onCallback(r.ctx, first), pc.onCallback(r.ctx, second)
	if n1 != n2 || pc.settles != 1 {
		t.Fatalf("%+v %+v, settled %d", n1, n2, pc.settles)
	}
	cc := newCaller(t, r.adapter, kes("col_dup", "254708374149", 100_00), true)
	out := cc.mustSubmit(r.ctx)
	cc.onCallback(r.ctx, r.Callback())
	r.fake.ResendSTKResult(out.ProviderRef)
	cc.onCallback(r.ctx, r.Callback())
	if cc.settles != 1 || len(r.fake.Movements()) != 2 {
		t.Fatalf("settled %d, movements %d", cc.settles, len(r.fake.Movements()))
	}
}

func TestForgedCallbacksAreRefused(t *testing.T) {
	r := newRig(t, mpesafake.Options{})
	c := newCaller(t, r.adapter, kes("pay_forge", "254708374149", 100_00), false)
	c.mustSubmit(r.ctx)
	real := r.Callback()
	other := newCaller(t, r.adapter, kes("pay_other", "254708374149", 100_00), false)
	cases := []struct {
		name string
		edit func(*provider.Callback)
	}{
		{"no query", func(cb *provider.Callback) { cb.Query = "" }},
		{"tampered token", func(cb *provider.Callback) { cb.Query = strings.Replace(cb.Query, "t=", "t=x", 1) }},
		{"another key with this token", func(cb *provider.Callback) {
			cb.Query = strings.Replace(cb.Query, "k="+c.p.Key, "k="+other.p.Key, 1)
		}},
		{"a timeout dressed as a result", func(cb *provider.Callback) { cb.Query = strings.Replace(cb.Query, "e=b2c&", "e=b2ctimeout&", 1) }},
		{"garbage body", func(cb *provider.Callback) { cb.Body = []byte("{") }},
	}
	for _, tc := range cases {
		cb := real
		tc.edit(&cb)
		if _, err := r.adapter.HandleCallback(r.ctx, cb); !errors.Is(err, mpesa.ErrBadCallback) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// Restricted to Safaricom's addresses, loopback is refused.
	_, safaricom, _ := netParse("196.201.214.0/24")
	strict := r.newAdapter(func(cfg *mpesa.Config) { cfg.CallbackNets = safaricom })
	if _, err := strict.HandleCallback(r.ctx, real); !errors.Is(err, mpesa.ErrBadCallback) {
		t.Errorf("an address outside the allowed networks: %v", err)
	}
	if n, err := r.adapter.HandleCallback(r.ctx, real); err != nil || !n.Authenticated {
		t.Fatalf("the real one: %+v %v", n, err)
	}
}
