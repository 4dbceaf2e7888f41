package app

import (
	"strings"
	"testing"
	"time"

	"payments/ledger"
	"payments/ledger/paymentlinks"
	"payments/rails"
)

// newLink creates a GHS link of amount that takes every method.
func (ta *testApp) newLink(t *testing.T, amount ledger.Minor) paymentlinks.Link {
	t.Helper()
	return *paymentlinks.LinkOf(applied(t, ta.CreatePaymentLink(ta.caller(), PaymentLinkRequest{Spec: linkSpec(amount, everyMethod)})))
}

func TestOpenCheckoutSession(t *testing.T) {
	ta := startApp(t, Config{})
	usdc, err := ta.Rate("USDC", "GHS")
	if err != nil {
		t.Fatal(err)
	}
	inUSDC, convErr := rails.ConvertTo(usdc, 25000)
	if convErr != nil {
		t.Fatal(convErr)
	}
	bankOnlyLink := paymentlinks.LinkOf(ta.CreatePaymentLink(ta.caller(), PaymentLinkRequest{Spec: linkSpec(25000, bankOnly)}).Result)
	for _, tc := range []struct {
		name  string
		in    CheckoutSessionRequest // LinkID "": a new link of 250.00 GHS
		code  ledger.Code
		field string
		check func(t *testing.T, s *paymentlinks.Session, res *ledger.Result)
	}{
		{name: "mobile money: the charge and its fee", in: CheckoutSessionRequest{Method: paymentlinks.MobileMoney, Code: "gh_mtn", PayerNumber: "233241234567"},
			check: func(t *testing.T, s *paymentlinks.Session, res *ledger.Result) {
				c := res.Collection
				switch {
				case s.Status != paymentlinks.SessionProcessing || s.MethodCode != "gh_mtn" || s.PayerNumber != "233241234567":
					t.Fatalf("session %+v", s)
				case c == nil || c.ID != s.CollectionID || !strings.HasPrefix(c.ID, "col_") || c.Status != ledger.CollectionPending:
					t.Fatalf("charge %+v of session %s", c, s.CollectionID)
				case c.Spec.Amount != 25000 || c.Fee != collectionFee(t, "gh_mtn", 25000):
					t.Fatalf("charge of %d, fee %d", c.Spec.Amount, c.Fee)
				}
			}},
		{name: "bank transfer: the pooled account", in: CheckoutSessionRequest{Method: paymentlinks.BankTransfer},
			check: func(t *testing.T, s *paymentlinks.Session, _ *ledger.Result) {
				if s.Status != paymentlinks.SessionAwaitingTransfer || s.DepositBank != pooledBankName || s.DepositAccount != pooledAccountNumber("GHS") ||
					s.OriginCurrency != "GHS" || s.OriginAmount != 25000 || s.Rate != "1" {
					t.Fatalf("session %+v", s)
				}
			}},
		{name: "stablecoins: an address of the chain, the amount at the all-in rate", in: CheckoutSessionRequest{Method: paymentlinks.Crypto, Code: "usdc_base"},
			check: func(t *testing.T, s *paymentlinks.Session, _ *ledger.Result) {
				if s.OriginCurrency != "USDC" || s.OriginAmount != inUSDC || s.Rate != usdc.String() || s.DestAmount != 25000 || s.Chain != "base" {
					t.Fatalf("session %+v, want %d USDC at %s", s, inUSDC, usdc)
				}
				if err := rails.ValidateAddress("base", s.DepositAccount); err != nil {
					t.Fatalf("address %q: %v", s.DepositAccount, err)
				}
			}},
		{name: "a wallet that is not mobile money", in: CheckoutSessionRequest{Method: paymentlinks.MobileMoney, Code: "usdc_base", PayerNumber: "233241234567"}, code: ledger.CodeValidation, field: "code"},
		{name: "a network that is not a stablecoin's", in: CheckoutSessionRequest{Method: paymentlinks.Crypto, Code: "gh_mtn"}, code: ledger.CodeValidation, field: "code"},
		{name: "a method the link does not take", in: CheckoutSessionRequest{LinkID: bankOnlyLink.ID, Method: paymentlinks.Crypto, Code: "usdc_base"}, code: ledger.CodeValidation, field: "method"},
		{name: "no such link", in: CheckoutSessionRequest{LinkID: "pl_doesnotexist", Method: paymentlinks.BankTransfer}, code: ledger.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.LinkID == "" {
				tc.in.LinkID = ta.newLink(t, 25000).ID
			}
			before := ta.sys.Now().UnixMilli()
			r := ta.OpenCheckoutSession(ta.caller(), tc.in)
			wantRefusal(t, r, tc.code, tc.field)
			if tc.code != "" {
				return
			}
			s := paymentlinks.SessionOf(r.Result)
			if !strings.HasPrefix(s.ID, "cs_") || s.LinkID != tc.in.LinkID || s.CreatedAt < before ||
				s.ExpiresAt != s.CreatedAt+paymentlinks.Lifetime(tc.in.Method) {
				t.Fatalf("session %+v opened after %d", s, before)
			}
			tc.check(t, s, &r.Result)
		})
	}
}

// A payer's attempt opens one session, however often it is sent.
func TestOpenCheckoutSessionOncePerAttempt(t *testing.T) {
	ta := startApp(t, Config{})
	link := ta.newLink(t, 1000)
	open := func(attempt string) *ledger.Result {
		t.Helper()
		r := ta.OpenCheckoutSession(ta.caller(), CheckoutSessionRequest{LinkID: link.ID, Method: paymentlinks.BankTransfer, Attempt: attempt})
		wantRefusal(t, r, "", "")
		return &r.Result
	}
	first := open("attempt-0000000001")
	again := open("attempt-0000000001")
	if first.Replayed || !again.Replayed || paymentlinks.SessionOf(*again).ID != paymentlinks.SessionOf(*first).ID {
		t.Fatalf("first %s (replayed %v), again %s (replayed %v)", paymentlinks.SessionOf(*first).ID, first.Replayed, paymentlinks.SessionOf(*again).ID, again.Replayed)
	}
	other := open("attempt-0000000002")
	if other.Replayed || paymentlinks.SessionOf(*other).ID == paymentlinks.SessionOf(*first).ID {
		t.Fatalf("another attempt got %s (replayed %v)", paymentlinks.SessionOf(*other).ID, other.Replayed)
	}
	// The first attempt's session was replaced; sending it again still
	// names it, and opens nothing.
	if late := open("attempt-0000000001"); !late.Replayed || paymentlinks.SessionOf(*late).Status != paymentlinks.SessionFailed {
		t.Fatalf("late copy: %+v", late)
	}
	if n := len(paymentlinks.LinkSessions(ta.Reader(), ta.org, link.ID)); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}

func TestOpenCheckoutSessionWithoutProvider(t *testing.T) {
	ta := startApp(t, Config{NoProvider: true})
	link := ta.newLink(t, 1000)
	r := ta.OpenCheckoutSession(ta.caller(), CheckoutSessionRequest{LinkID: link.ID, Method: paymentlinks.BankTransfer})
	wantRefusal(t, r, ledger.CodeUnavailable, "")
}

// openSession opens a session on a new link of amount GHS minor units.
func (ta *testApp) openSession(t *testing.T, amount ledger.Minor, in CheckoutSessionRequest) paymentlinks.Session {
	t.Helper()
	in.LinkID = ta.newLink(t, amount).ID
	return *paymentlinks.SessionOf(applied(t, ta.OpenCheckoutSession(ta.caller(), in)))
}

func TestSimulateCheckoutDeposit(t *testing.T) {
	ta := startApp(t, Config{})
	bank := ta.openSession(t, 1000, CheckoutSessionRequest{Method: paymentlinks.BankTransfer})
	coin := ta.openSession(t, 1000, CheckoutSessionRequest{Method: paymentlinks.Crypto, Code: "usdc_base"})
	momo := ta.openSession(t, 1000, CheckoutSessionRequest{Method: paymentlinks.MobileMoney, Code: "gh_mtn", PayerNumber: "233241234567"})
	for _, tc := range []struct {
		name     string
		in       CheckoutDepositRequest
		code     ledger.Code
		field    string
		paid     ledger.Minor // in the session's origin currency
		replayed bool
	}{
		{name: "half, in the session's currency", in: CheckoutDepositRequest{SessionID: bank.ID, Amount: ptr("5"), ExternalReference: "dep-1"}, paid: 500},
		{name: "the same deposit again", in: CheckoutDepositRequest{SessionID: bank.ID, Amount: ptr("5"), ExternalReference: "dep-1"}, paid: 500, replayed: true},
		{name: "the reference for another deposit", in: CheckoutDepositRequest{SessionID: bank.ID, Amount: ptr("4"), ExternalReference: "dep-1"}, code: ledger.CodeConflict},
		{name: "what remains", in: CheckoutDepositRequest{SessionID: bank.ID, ExternalReference: "dep-2"}, paid: 500},
		{name: "a stablecoin's decimals", in: CheckoutDepositRequest{SessionID: coin.ID, Amount: ptr("0.000001"), ExternalReference: "dep-3"}, code: ledger.CodeValidation, field: "amount"},
		{name: "more decimals than the stablecoin has", in: CheckoutDepositRequest{SessionID: coin.ID, Amount: ptr("1.0000001"), ExternalReference: "dep-4"}, code: ledger.CodeValidation, field: "amount"},
		{name: "a mobile money session", in: CheckoutDepositRequest{SessionID: momo.ID, ExternalReference: "dep-5"}, code: ledger.CodeBadRequest},
		{name: "no such session", in: CheckoutDepositRequest{SessionID: "cs_doesnotexist", ExternalReference: "dep-6"}, code: ledger.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ta.SimulateCheckoutDeposit(ta.caller(), tc.in)
			wantRefusal(t, r.Reply, tc.code, tc.field)
			if tc.code != "" {
				return
			}
			d := paymentlinks.DepositOf(r.Result)
			if d.SessionID != tc.in.SessionID || d.Amount != tc.paid || r.Result.Replayed != tc.replayed || r.Session.ID != tc.in.SessionID {
				t.Fatalf("deposit %+v (replayed %v) into %s", d, r.Result.Replayed, r.Session.ID)
			}
			if col, ok := ta.Reader().Collection(d.CollectionID); !ok || col.Status != ledger.CollectionCompleted {
				t.Fatalf("collection %s: %+v", d.CollectionID, col)
			}
		})
	}
	if l, _ := paymentlinks.GetLink(ta.Reader(), ta.org, bank.LinkID); l.Status != paymentlinks.LinkPaid {
		t.Fatalf("link %s is %v after its deposits", l.ID, l.Status)
	}
}

func TestSimulateCheckoutDepositOnProduction(t *testing.T) {
	ta := startApp(t, Config{Live: true})
	r := ta.SimulateCheckoutDeposit(ta.caller(), CheckoutDepositRequest{SessionID: "cs_x", ExternalReference: "dep-1"})
	wantRefusal(t, r.Reply, ledger.CodeNotFound, "")
	if e := ta.StartCheckoutDeposit(ta.caller(), CheckoutDepositRequest{SessionID: "cs_x"}); e == nil || e.Code != ledger.CodeNotFound {
		t.Fatalf("started on production: %v", e)
	}
}

// The hosted checkout's test mode: a deposit is on its way at once, lands
// after the sandbox's settlement time, and is sent once however often it
// is asked for meanwhile.
func TestStartCheckoutDeposit(t *testing.T) {
	clock := &handClock{}
	ta := startApp(t, Config{Clock: clock, SandboxSettlement: 3 * time.Second})
	sess := ta.openSession(t, 1000, CheckoutSessionRequest{Method: paymentlinks.BankTransfer})
	half := "5"
	for range 2 { // a double click
		if e := ta.StartCheckoutDeposit(ta.caller(), CheckoutDepositRequest{SessionID: sess.ID, Amount: &half}); e != nil {
			t.Fatal(e)
		}
		if !ta.CheckoutDepositOnItsWay(sess.ID) {
			t.Fatal("the deposit is not on its way")
		}
	}
	if got := clock.fire(); len(got) != 1 || got[0] != 3*time.Second {
		t.Fatalf("timers %v, want one of the settlement time", got)
	}
	if ta.CheckoutDepositOnItsWay(sess.ID) {
		t.Fatal("the deposit landed and is still on its way")
	}
	after, _ := paymentlinks.GetSession(ta.Reader(), ta.org, sess.ID)
	if after.OriginReceived != 500 || after.Status.Terminal() {
		t.Fatalf("session received %d, %v; want 500 of 1000, open", after.OriginReceived, after.Status)
	}

	// The rest, then nothing more: the session has ended.
	if e := ta.StartCheckoutDeposit(ta.caller(), CheckoutDepositRequest{SessionID: sess.ID}); e != nil {
		t.Fatal(e)
	}
	clock.fire()
	if l, _ := paymentlinks.GetLink(ta.Reader(), ta.org, sess.LinkID); l.Status != paymentlinks.LinkPaid || l.TotalReceived != 1000 {
		t.Fatalf("link %v with %d received", l.Status, l.TotalReceived)
	}
	for _, tc := range []struct {
		name string
		in   CheckoutDepositRequest
		code ledger.Code
	}{
		{name: "an ended session", in: CheckoutDepositRequest{SessionID: sess.ID}, code: ledger.CodeBadRequest},
		{name: "an amount not in the session's currency's precision", in: CheckoutDepositRequest{SessionID: sess.ID, Amount: ptr("1.001")}, code: ledger.CodeValidation},
		{name: "no such session", in: CheckoutDepositRequest{SessionID: "cs_doesnotexist"}, code: ledger.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if e := ta.StartCheckoutDeposit(ta.caller(), tc.in); e == nil || e.Code != tc.code {
				t.Fatalf("got %v, want %s", e, tc.code)
			}
			if len(clock.fire()) != 0 {
				t.Fatal("a refused deposit was sent")
			}
		})
	}
}

func ptr(s string) *string { return &s }

// collectionFee is what the default catalogue charges to collect amount
// by method.
func collectionFee(t *testing.T, method string, amount ledger.Minor) ledger.Minor {
	t.Helper()
	m, ok := rails.DefaultCatalogue().Method(method)
	if !ok {
		t.Fatalf("no method %s", method)
	}
	fees, ok := m.Fees(rails.Collection)
	if !ok {
		t.Fatalf("%s collects without a fee schedule", method)
	}
	return fees.Fee(amount)
}
