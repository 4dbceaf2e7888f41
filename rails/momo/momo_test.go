package momo_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"payments/rails/momo/momofake"
	"payments/rails/provider"
)

func payout(id, msisdn string, minor int64) provider.Instruction {
	return provider.Instruction{ID: id, Method: "gh_mtn", Currency: "EUR", AmountMinor: minor, Exponent: 2, AccountNumber: msisdn, Narration: "Invoice 42, O'Brien"}
}

func TestPayoutCompletesThroughCallback(t *testing.T) {
	r := newRig(t, momofake.Options{})
	s := newSettler()
	in := payout("pay_1", "233241234567", 1250)
	p, err := r.adapter.PreparePayout(r.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.adapter.SubmitPayout(r.ctx, in, p)
	if err != nil || out.State != provider.StateProcessing {
		t.Fatalf("submit: %+v, %v", out, err)
	}
	s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
	got := s.settled[p.Key]
	if got.State != provider.StateCompleted || got.ProviderRef == "" {
		t.Fatalf("settled %+v", got)
	}
	r.noCallback()
	if m := r.fake.Movements(); len(m) != 1 || m[0].AmountMinor != 1250 || m[0].ReferenceID != p.Key {
		t.Fatalf("movements %+v", m)
	}
	if n := r.fake.Count(momofake.OpTransfer); n != 1 {
		t.Fatalf("%d transfer requests", n)
	}
	req := r.fake.Requests()
	for _, q := range req {
		if q.Op == momofake.OpTransfer && (!strings.Contains(string(q.Body), `"amount":"12.5"`) || !strings.Contains(q.CallbackURL, "ref="+p.Key)) {
			t.Fatalf("transfer request %s, callback %s", q.Body, q.CallbackURL)
		}
	}
}

func TestCollectionCompletesThroughCallback(t *testing.T) {
	for _, method := range []string{http.MethodPut, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			r := newRig(t, momofake.Options{CallbackMethod: method})
			s := newSettler()
			in := payout("col_1", "233241234567", 500)
			p, _ := r.adapter.PrepareCollection(r.ctx, in)
			out, err := r.adapter.SubmitCollection(r.ctx, in, p)
			if err != nil || out.State != provider.StatePending {
				t.Fatalf("submit: %+v, %v", out, err)
			}
			n := s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
			if !n.Collection || n.Outcome.State != provider.StateCompleted {
				t.Fatalf("notification %+v", n)
			}
			if got := s.settled[p.Key]; got.State != provider.StateCompleted {
				t.Fatalf("settled %+v", got)
			}
			if cbs := r.fake.Callbacks(); len(cbs) != 1 || cbs[0].Method != method {
				t.Fatalf("callbacks %+v", cbs)
			}
			if got := r.fake.Balance(momofake.Collection); got != 500 {
				t.Fatalf("collection account holds %d", got)
			}
		})
	}
}

func TestCollectionFails(t *testing.T) {
	cases := []struct {
		name      string
		behaviour momofake.Behaviour
		msisdn    string
		wantMsg   string
	}{
		{"declined", momofake.Decline, "233240000001", "APPROVAL_REJECTED"},
		{"no account", momofake.Unknown, "233240000002", "PAYER_NOT_FOUND"},
		{"sandbox failing number", 0, "46733123450", "INTERNAL_PROCESSING_ERROR"},
		{"sandbox rejecting number", 0, "46733123451", "APPROVAL_REJECTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, momofake.Options{})
			if c.behaviour != 0 {
				r.fake.SetPayer(c.msisdn, c.behaviour)
			}
			s := newSettler()
			in := payout("col_"+c.name, c.msisdn, 500)
			p := r.submit(in, true)
			s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
			got := s.settled[p.Key]
			if got.State != provider.StateFailed || !strings.Contains(got.Message, c.wantMsg) {
				t.Fatalf("settled %+v, want failed with %s", got, c.wantMsg)
			}
			r.noMoneyMoved()
		})
	}
}

func TestCollectionExpires(t *testing.T) {
	r := newRig(t, momofake.Options{RequestToPayExpiry: 2 * time.Minute})
	r.fake.SetPayer("233240000003", momofake.Ignore)
	s := newSettler()
	in := payout("col_exp", "233240000003", 500)
	p := r.submit(in, true)
	out, err := r.adapter.CollectionStatus(r.ctx, in, p)
	if err != nil || out.State != provider.StatePending || out.CheckAfter <= 0 {
		t.Fatalf("before expiry: %+v, %v", out, err)
	}
	r.Clock.Advance(2 * time.Minute)
	out, err = r.adapter.CollectionStatus(r.ctx, in, p)
	if err != nil || out.State != provider.StateFailed || !strings.Contains(out.Message, "EXPIRED") {
		t.Fatalf("after expiry: %+v, %v", out, err)
	}
	s.settle(p.Key, out)
	// The expiry's callback still comes, once; settling again is a no-op.
	s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
	if s.count[p.Key] != 1 {
		t.Fatalf("settled %d times", s.count[p.Key])
	}
	r.noCallback()
}

func TestCollectionApprovedLater(t *testing.T) {
	r := newRig(t, momofake.Options{DefaultPayer: momofake.Hold})
	s := newSettler()
	in := payout("col_hold", "233240000004", 700)
	p := r.submit(in, true)
	if !r.fake.Decide(p.Key, true) {
		t.Fatal("nothing to approve")
	}
	s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
	if s.settled[p.Key].State != provider.StateCompleted {
		t.Fatalf("settled %+v", s.settled[p.Key])
	}
}

func TestTokenExpiryMidRun(t *testing.T) {
	r := newRig(t, momofake.Options{TokenLifetime: 10 * time.Minute})
	in := payout("pay_tok", "233241234567", 100)
	p := r.submit(in, false)
	// The provider revokes the token early: the next call gets a 401,
	// takes a new token and is answered.
	r.fake.ExpireTokens()
	if out, err := r.adapter.PayoutStatus(r.ctx, in, p); err != nil || out.State != provider.StateCompleted {
		t.Fatalf("status after revocation: %+v, %v", out, err)
	}
	if n := r.fake.Count(momofake.OpToken); n != 2 {
		t.Fatalf("%d token requests, want 2", n)
	}
	// Time passes to within a minute of expiry: the adapter replaces the
	// token before using it, with no 401 on the way.
	r.Clock.Advance(9*time.Minute + 30*time.Second)
	before := len(r.fake.Requests())
	if _, err := r.adapter.PayoutStatus(r.ctx, in, p); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.fake.Requests()[before:] {
		if q.Status == http.StatusUnauthorized {
			t.Fatalf("a 401 although the token was due for refresh: %+v", q)
		}
	}
	if n := r.fake.Count(momofake.OpToken); n != 3 {
		t.Fatalf("%d token requests, want 3", n)
	}
	if len(r.fake.Movements()) != 1 {
		t.Fatal("the retried request moved money again")
	}
}

func TestRateLimited(t *testing.T) {
	r := newRig(t, momofake.Options{})
	r.fake.FailNext(momofake.OpTransfer, momofake.Fault{Status: http.StatusTooManyRequests, RetryAfter: 7 * time.Second})
	in := payout("pay_429", "233241234567", 100)
	p, _ := r.adapter.PreparePayout(r.ctx, in)
	_, err := r.adapter.SubmitPayout(r.ctx, in, p)
	var pe *provider.Error
	if !errors.Is(err, provider.ErrRateLimited) || !errors.As(err, &pe) || pe.RetryAfter != 7*time.Second {
		t.Fatalf("err %v", err)
	}
	if len(r.fake.Movements()) != 0 {
		t.Fatal("money moved on a 429")
	}
	r.resubmitMovesOnce(in, p)
}

func TestLostResponseAfterMoneyMoved(t *testing.T) {
	r := newRig(t, momofake.Options{})
	r.fake.FailNext(momofake.OpTransfer, momofake.Fault{DropAfterApply: true})
	s := newSettler()
	in := payout("pay_lost", "233241234567", 2500)
	p, _ := r.adapter.PreparePayout(r.ctx, in)
	if _, err := r.adapter.SubmitPayout(r.ctx, in, p); !errors.Is(err, provider.ErrUnknownOutcome) {
		t.Fatalf("err %v, want unknown outcome", err)
	}
	out, err := r.adapter.PayoutStatus(r.ctx, in, p)
	if err != nil || out.State != provider.StateCompleted {
		t.Fatalf("status: %+v %v", out, err)
	}
	// A new leader re-sends the committed Prepared: MoMo answers 409,
	// which is "already taken", never a second transfer.
	again, err := r.adapter.SubmitPayout(r.ctx, in, p)
	if err != nil || again.State != provider.StateProcessing || again.Message != "already submitted" {
		t.Fatalf("re-submit: %+v %v", again, err)
	}
	s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
	r.noCallback()
	if m := r.fake.Movements(); len(m) != 1 {
		t.Fatalf("money moved %d times", len(m))
	}
	var statuses []int
	for _, q := range r.fake.Requests() {
		if q.Op == momofake.OpTransfer {
			if q.ReferenceID != p.Key {
				t.Fatalf("a transfer with another reference %s", q.ReferenceID)
			}
			statuses = append(statuses, q.Status)
		}
	}
	if len(statuses) != 2 || statuses[0] != 0 || statuses[1] != http.StatusConflict {
		t.Fatalf("transfer answers %v, want [dropped 409]", statuses)
	}
}

func TestLostRequestIsResentSafely(t *testing.T) {
	r := newRig(t, momofake.Options{})
	r.fake.FailNext(momofake.OpTransfer, momofake.Fault{DropBeforeApply: true})
	in := payout("pay_lostreq", "233241234567", 100)
	p, _ := r.adapter.PreparePayout(r.ctx, in)
	if _, err := r.adapter.SubmitPayout(r.ctx, in, p); !errors.Is(err, provider.ErrUnknownOutcome) {
		t.Fatalf("err %v", err)
	}
	if _, err := r.adapter.PayoutStatus(r.ctx, in, p); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("status err %v, want not found", err)
	}
	r.resubmitMovesOnce(in, p)
}

func TestUnknownReferenceIsNotFound(t *testing.T) {
	r := newRig(t, momofake.Options{})
	in := payout("pay_never", "233241234567", 100)
	p, _ := r.adapter.PreparePayout(r.ctx, in)
	if _, err := r.adapter.PayoutStatus(r.ctx, in, p); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("payout status: %v", err)
	}
	cp, _ := r.adapter.PrepareCollection(r.ctx, in)
	if _, err := r.adapter.CollectionStatus(r.ctx, in, cp); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("collection status: %v", err)
	}
}

func TestDuplicateCallbacksSettleOnce(t *testing.T) {
	r := newRig(t, momofake.Options{})
	s := newSettler()
	in := payout("pay_dup", "233241234567", 100)
	p := r.submit(in, false)
	first := r.Callback()
	if !r.fake.Resend(p.Key) {
		t.Fatal("no callback to resend")
	}
	second := r.Callback()
	n1 := s.onCallback(t, r.ctx, r.adapter, first, in, p)
	n2 := s.onCallback(t, r.ctx, r.adapter, second, in, p)
	if n1 != n2 {
		t.Fatalf("the same callback read twice differs: %+v %+v", n1, n2)
	}
	if s.count[p.Key] != 1 || len(r.fake.Movements()) != 1 {
		t.Fatalf("settled %d times, %d movements", s.count[p.Key], len(r.fake.Movements()))
	}
}

func TestCallbackWithoutQueryFindsItsKey(t *testing.T) {
	r := newRig(t, momofake.Options{})
	in := payout("pay_noq", "233241234567", 100)
	p := r.submit(in, false)
	cb := r.Callback()
	cb.Query = ""
	n, err := r.adapter.HandleCallback(r.ctx, cb)
	if err != nil || n.Key != p.Key || n.Collection || n.Authenticated {
		t.Fatalf("%+v %v", n, err)
	}
	if _, err := r.adapter.HandleCallback(r.ctx, provider.Callback{Body: []byte("not json")}); err == nil {
		t.Fatal("a garbage callback was read")
	}
}

func TestInsufficientDisbursementBalance(t *testing.T) {
	r := newRig(t, momofake.Options{DisbursementBalanceMinor: 99})
	s := newSettler()
	in := payout("pay_poor", "233241234567", 100)
	p := r.submit(in, false)
	s.onCallback(t, r.ctx, r.adapter, r.Callback(), in, p)
	if got := s.settled[p.Key]; got.State != provider.StateFailed || !strings.Contains(got.Message, "NOT_ENOUGH_FUNDS") {
		t.Fatalf("settled %+v", got)
	}
	if r.fake.Balance(momofake.Disbursement) != 99 {
		t.Fatal("the balance changed")
	}
}

func TestNameAndBalances(t *testing.T) {
	r := newRig(t, momofake.Options{DisbursementBalanceMinor: 123456})
	r.fake.SetName("233241234567", "Ama Mensah")
	name, err := r.adapter.LookupName(r.ctx, "gh_mtn", "233241234567")
	if err != nil || name != "Ama Mensah" {
		t.Fatalf("%q %v", name, err)
	}
	r.fake.SetPayer("233240000009", momofake.Unknown)
	if _, err := r.adapter.LookupName(r.ctx, "gh_mtn", "233240000009"); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("unknown holder: %v", err)
	}
	if _, err := r.adapter.LookupName(r.ctx, "gh_mtn", "+233 24"); !errors.Is(err, provider.ErrRejected) || strings.Contains(err.Error(), "+233 24") {
		t.Fatalf("malformed number: %v", err)
	}
	bals, err := r.adapter.Balances(r.ctx)
	if err != nil || len(bals) != 2 {
		t.Fatalf("%+v %v", bals, err)
	}
	for _, b := range bals {
		if b.Account == "disbursement" && (b.AmountMinor != 123456 || b.Currency != "EUR" || b.Exponent != 2) {
			t.Fatalf("%+v", b)
		}
	}
}

func TestWrongCredentialsAreAuthenticationErrors(t *testing.T) {
	r := newRig(t, momofake.Options{})
	o := r.fake.Options()
	o.Disbursement.APIKey = "wrong-key-do-not-print"
	bad := newAdapter(t, r, o)
	in := payout("pay_auth", "233241234567", 100)
	p, _ := bad.PreparePayout(r.ctx, in)
	_, err := bad.SubmitPayout(r.ctx, in, p)
	if !errors.Is(err, provider.ErrAuthentication) || strings.Contains(err.Error(), "wrong-key") {
		t.Fatalf("err %v", err)
	}
	if r.fake.Count(momofake.OpTransfer) != 0 {
		t.Fatal("a transfer was sent without a token")
	}
}
