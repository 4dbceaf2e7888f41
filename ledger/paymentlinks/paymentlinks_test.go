package paymentlinks

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

type testState = ledgertest.State

// newLinkTestState is a ledger with organization org_a.
func newLinkTestState(t *testing.T) *testState {
	t.Helper()
	s := ledgertest.New(t)
	s.Org("org_a")
	return s
}

// applyChecked applies cmd, which must succeed, and checks the ledger's
// invariants after it.
var applyChecked = ledgertest.MustApplyChecked

func collectionFee(amount ledger.Minor) ledger.Minor {
	return ledger.FeeSchedule{BasisPoints: 150}.Fee(amount)
}

func plLinkSpec(amount ledger.Minor) LinkSpec {
	return LinkSpec{Email: "ama@example.com", Currency: "GHS", Amount: amount, Appearance: Appearance{
		Title: "Invoice 1", Methods: MethodSet(0).With(MobileMoney).With(BankTransfer).With(Crypto),
	}}
}

func plBankSession(id, link string, dest ledger.Minor) *CreateSession {
	return &CreateSession{At: 10, ID: id, OrgID: "org_a", LinkID: link, Method: BankTransfer,
		OriginCurrency: "GHS", OriginAmount: dest, DestAmount: dest, DepositAccount: "9900000001", DepositBank: "Sandbox Bank"}
}

func plMobileSession(id, link, col string, dest ledger.Minor) *CreateSession {
	return &CreateSession{At: 10, ID: id, OrgID: "org_a", LinkID: link, Method: MobileMoney,
		MethodCode: "gh_mtn", PayerNumber: "233241234567", OriginCurrency: "GHS", OriginAmount: dest, DestAmount: dest,
		CollectionID: col, MethodType: ledger.MethodMobileMoney, Fee: collectionFee(dest)}
}

func plDeposit(ref, session string, amount ledger.Minor, n string) *DepositCommand {
	return &DepositCommand{At: 20, OrgID: "org_a", SessionID: session, Amount: amount, ExternalReference: ref,
		DepositID: "vad_" + n, CollectionID: "col_d" + n}
}

func plBalance(s *testState, cur string) ledger.Minor {
	a, _ := s.AccountFor("org_a", cur)
	return a.Total
}

// Bad commands are refused with their code and change nothing.
func TestPaymentLinkRejectsBadInput(t *testing.T) {
	s := newLinkTestState(t)
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", CustomerReference: "inv-1", Spec: plLinkSpec(25_000)})
	applyChecked(t, s, plBankSession("cs_1", "pl_1", 25_000))
	applyChecked(t, s, mmSessionLinkSetup(s))
	noMethods := plLinkSpec(100)
	noMethods.Appearance.Methods = 0
	bankOnly := plLinkSpec(100)
	bankOnly.Appearance.Methods = MethodSet(0).With(BankTransfer)
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_bank", OrgID: "org_a", Spec: bankOnly})
	changed := plLinkSpec(25_001)
	for _, tc := range []struct {
		name string
		cmd  ledger.Command
		want error
	}{
		{"changed repeat", &CreateLink{At: 3, ID: "pl_2", OrgID: "org_a", CustomerReference: "inv-1", Spec: changed}, ledger.ErrDuplicate},
		{"no methods", &CreateLink{At: 3, ID: "pl_3", OrgID: "org_a", Spec: noMethods}, ledger.ErrValidation},
		{"zero amount", &CreateLink{At: 3, ID: "pl_3", OrgID: "org_a", Spec: plLinkSpec(0)}, ledger.ErrValidation},
		{"bad id", &CreateLink{At: 3, ID: "x_3", OrgID: "org_a", Spec: plLinkSpec(1)}, ledger.ErrValidation},
		{"unknown page", &CreateLink{At: 3, ID: "pl_3", OrgID: "org_a", ParentID: "pp_x", Spec: plLinkSpec(1)}, ledger.ErrNotFound},
		{"unknown link", plBankSession("cs_9", "pl_none", 1), ledger.ErrNotFound},
		{"stale price", plBankSession("cs_9", "pl_1", 1), ledger.ErrConflict},
		{"method not allowed", plMobileSession("cs_9", "pl_bank", "col_9", 100), ledger.ErrValidation},
		{"deposit unknown session", plDeposit("d1", "cs_none", 0, "1"), ledger.ErrNotFound},
		{"deposit into mobile money", plDeposit("d1", "cs_mm", 0, "1"), &ledger.Error{Code: ledger.CodeBadRequest}},
		{"deposit without reference", plDeposit("", "cs_1", 0, "1"), ledger.ErrValidation},
		{"update unknown link", &UpdateLink{At: 3, OrgID: "org_a", ID: "pl_none", Close: true}, ledger.ErrNotFound},
		{"update in the past", &UpdateLink{At: 3, OrgID: "org_a", ID: "pl_1", Set: AppearanceExpiresAt, Appearance: Appearance{ExpiresAt: 2}}, ledger.ErrValidation},
		{"another org's link", &UpdateLink{At: 3, OrgID: "org_b", ID: "pl_1", Close: true}, ledger.ErrNotFound},
	} {
		before := s.Dump()
		events := s.EventCount()
		r := s.Apply(tc.cmd)
		if !errors.Is(r.Err, tc.want) {
			t.Fatalf("%s: got %v, want %v", tc.name, r.Err, tc.want)
		}
		if !bytes.Equal(s.Dump(), before) || s.EventCount() != events {
			t.Fatalf("%s: a rejected command changed the state", tc.name)
		}
	}
	// A repeat with the same request returns the link.
	r := s.Apply(&CreateLink{At: 4, ID: "pl_4", OrgID: "org_a", CustomerReference: "inv-1", Spec: plLinkSpec(25_000)})
	if r.Err != nil || !r.Replayed || LinkOf(r).ID != "pl_1" {
		t.Fatalf("repeat: %+v", r)
	}
}

// mmSessionLinkSetup makes a link with a processing mobile money session
// cs_mm, for deposit refusals.
func mmSessionLinkSetup(s *testState) ledger.Command {
	s.Apply(&CreateLink{At: 2, ID: "pl_mm", OrgID: "org_a", Spec: plLinkSpec(500)})
	return plMobileSession("cs_mm", "pl_mm", "col_mm", 500)
}

// A bank-transfer session paid in two deposits: the first leaves the
// session open, the second overpays; the link is paid, the overpayment
// recorded, and the balance credited with exactly what arrived.
func TestBankTransferCheckout(t *testing.T) {
	s := newLinkTestState(t)
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", Spec: plLinkSpec(25_000)})
	applyChecked(t, s, plBankSession("cs_1", "pl_1", 25_000))
	ev := s.EventCount()
	r := applyChecked(t, s, plDeposit("d1", "cs_1", 10_000, "1"))
	if got := s.EventTypesSince(ev); !reflect.DeepEqual(got, []string{ledger.EventCollectionCompleted, ledger.EventAccountCredited}) {
		t.Fatalf("events %v", got)
	}
	if r.Collection.Type != "virtual_account" || r.Collection.Spec.Amount != 10_000 || r.Collection.Status != ledger.CollectionCompleted {
		t.Fatalf("collection %+v", r.Collection)
	}
	l, _ := GetLink(s.Reader, "org_a", "pl_1")
	sess, _ := GetSession(s.Reader, "org_a", "cs_1")
	if l.Status != LinkActive || l.Remaining() != 15_000 || sess.Status != SessionAwaitingTransfer || plBalance(s, "GHS") != 10_000 {
		t.Fatalf("after a partial deposit: link %+v session %+v", l, sess)
	}
	// The same reference replays; the same reference for another amount
	// conflicts.
	if r := s.Apply(plDeposit("d1", "cs_1", 10_000, "9")); !r.Replayed || DepositOf(r).ID != "vad_1" {
		t.Fatalf("replay: %+v", r)
	}
	if r := s.Apply(plDeposit("d1", "cs_1", 10_001, "9")); !errors.Is(r.Err, ledger.ErrConflict) {
		t.Fatalf("changed replay: %+v", r)
	}
	ev = s.EventCount()
	applyChecked(t, s, plDeposit("d2", "cs_1", 20_000, "2"))
	want := []string{ledger.EventCollectionCompleted, ledger.EventAccountCredited, EventSessionCompleted, EventLinkPaid}
	if got := s.EventTypesSince(ev); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	l, _ = GetLink(s.Reader, "org_a", "pl_1")
	sess, _ = GetSession(s.Reader, "org_a", "cs_1")
	if l.Status != LinkPaid || l.TotalReceived != 30_000 || l.Overpayment() != 5_000 || l.Remaining() != 0 {
		t.Fatalf("link %+v", l)
	}
	if sess.Status != SessionComplete || sess.Received != 30_000 || plBalance(s, "GHS") != 30_000 {
		t.Fatalf("session %+v balance %d", sess, plBalance(s, "GHS"))
	}
	// A paid link takes no more sessions, and its session no deposits.
	if r := s.Apply(plBankSession("cs_2", "pl_1", 0)); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeBadRequest}) {
		t.Fatalf("session on a paid link: %v", r.Err)
	}
	if r := s.Apply(plDeposit("d3", "cs_1", 0, "3")); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeBadRequest}) {
		t.Fatalf("deposit on a complete session: %v", r.Err)
	}
}

// A mobile money session charges the payer through a collection; its
// settlement settles the session and the link in the same Apply.
func TestMobileMoneyCheckout(t *testing.T) {
	s := newLinkTestState(t)
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", Spec: plLinkSpec(25_000)})
	r := applyChecked(t, s, plMobileSession("cs_1", "pl_1", "col_1", 25_000))
	if r.Collection == nil || r.Collection.Status != ledger.CollectionPending || r.Collection.Spec.Amount != 25_000 || SessionOf(r).Status != SessionProcessing {
		t.Fatalf("result %+v", r)
	}
	// A processing charge blocks a switch.
	if r := s.Apply(plBankSession("cs_2", "pl_1", 25_000)); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeBadRequest}) {
		t.Fatalf("switch during a charge: %v", r.Err)
	}
	// It fails: the session fails, the link stays active.
	applyChecked(t, s, &ledger.SettleCollection{At: 30, ID: "col_1", Completed: false, Message: "declined"})
	sess, _ := GetSession(s.Reader, "org_a", "cs_1")
	if sess.Status != SessionFailed || sess.StatusMessage != "declined" {
		t.Fatalf("session %+v", sess)
	}
	applyChecked(t, s, plMobileSession("cs_3", "pl_1", "col_3", 25_000))
	ev := s.EventCount()
	applyChecked(t, s, &ledger.SettleCollection{At: 40, ID: "col_3", Completed: true})
	want := []string{ledger.EventCollectionCompleted, EventSessionCompleted, EventLinkPaid, ledger.EventAccountCredited}
	if got := s.EventTypesSince(ev); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	l, _ := GetLink(s.Reader, "org_a", "pl_1")
	fee := collectionFee(25_000)
	if l.Status != LinkPaid || l.TotalReceived != 25_000 || plBalance(s, "GHS") != 25_000-fee {
		t.Fatalf("link %+v, balance %d", l, plBalance(s, "GHS"))
	}
	if got := LinkSessions(s.Reader, "org_a", "pl_1"); len(got) != 2 || got[0].ID != "cs_3" || got[0].Status != SessionComplete || got[1].ID != "cs_1" {
		t.Fatalf("sessions newest first: %+v", got)
	}
}

// A stablecoin session for a link in another currency: instalments in the
// coin credit exactly the link amount in the link currency.
func TestCryptoCheckoutConverts(t *testing.T) {
	s := newLinkTestState(t)
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", Spec: plLinkSpec(25_000)})
	// 250.00 GHS at 15.444 GHS per USDT: 16.187516 USDT (rounded up).
	cmd := &CreateSession{At: 10, ID: "cs_1", OrgID: "org_a", LinkID: "pl_1", Method: Crypto,
		MethodCode: "usdt_tron", Chain: "tron", OriginCurrency: "USDT", OriginAmount: 16_187_516, DestAmount: 25_000,
		Rate: "15.444", DepositAccount: "Tsandbox"}
	applyChecked(t, s, cmd)
	applyChecked(t, s, plDeposit("d1", "cs_1", 6_000_000, "1"))
	applyChecked(t, s, plDeposit("d2", "cs_1", 0, "2")) // the rest
	l, _ := GetLink(s.Reader, "org_a", "pl_1")
	sess, _ := GetSession(s.Reader, "org_a", "cs_1")
	if l.Status != LinkPaid || l.TotalReceived != 25_000 || plBalance(s, "GHS") != 25_000 || sess.OriginReceived != 16_187_516 {
		t.Fatalf("link %+v session %+v balance %d", l, sess, plBalance(s, "GHS"))
	}
	if _, ok := s.AccountFor("org_a", "USDT"); ok {
		t.Fatal("a USDT balance was opened: the link credits its own currency")
	}
	// An asset the link does not accept is refused.
	only := plLinkSpec(100)
	only.Appearance.CryptoAssets, only.Appearance.CryptoAssetsSet = "USDC", true
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_2", OrgID: "org_a", Spec: only})
	bad := *cmd
	bad.ID, bad.LinkID, bad.DestAmount = "cs_2", "pl_2", 100
	if r := s.Apply(&bad); !errors.Is(r.Err, ledger.ErrValidation) {
		t.Fatalf("unaccepted asset: %v", r.Err)
	}
}

// Sessions and links expire on the organization's clock: advancing it
// expires them at once, with their events.
func TestCheckoutExpiry(t *testing.T) {
	s := newLinkTestState(t)
	spec := plLinkSpec(25_000)
	spec.Appearance.ExpiresAt = 2 + 3_600_000 // an hour after creation
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", Spec: plLinkSpec(25_000)})
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_2", OrgID: "org_a", Spec: spec})
	applyChecked(t, s, plMobileSession("cs_1", "pl_1", "col_1", 25_000))
	applyChecked(t, s, plBankSession("cs_2", "pl_2", 25_000))
	if s.ExpiryDue(10 + LifetimeMobileMoney - 1) {
		t.Fatal("due before the deadline")
	}
	// Five minutes pass on the organization's clock.
	ev := s.EventCount()
	applyChecked(t, s, &ledger.AdvanceClock{At: 11, OrgID: "org_a", Millis: LifetimeMobileMoney})
	if got := s.EventTypesSince(ev); !reflect.DeepEqual(got, []string{EventSessionExpired}) {
		t.Fatalf("events %v", got)
	}
	if c, _ := GetSession(s.Reader, "org_a", "cs_1"); c.Status != SessionExpired {
		t.Fatalf("mobile money session %+v", c)
	}
	if c, _ := GetSession(s.Reader, "org_a", "cs_2"); c.Status != SessionAwaitingTransfer {
		t.Fatalf("bank session expired early: %+v", c)
	}
	// The approval arrives late: the money is credited and counted on the
	// link, which is paid by it.
	applyChecked(t, s, &ledger.SettleCollection{At: 12, ID: "col_1", Completed: true})
	if l, _ := GetLink(s.Reader, "org_a", "pl_1"); l.Status != LinkPaid {
		t.Fatalf("late approval: %+v", l)
	}
	// An hour passes: the session on pl_2 expires (its 30 minutes came
	// first), then the link. Deadlines expire in the order they fall.
	ev = s.EventCount()
	applyChecked(t, s, &ledger.AdvanceClock{At: 13, OrgID: "org_a", Millis: 3_600_000})
	if got := s.EventTypesSince(ev); !reflect.DeepEqual(got, []string{EventSessionExpired, EventLinkExpired}) {
		t.Fatalf("events %v", got)
	}
	if s.ExpiryDue(13) {
		t.Fatal("still due after expiring")
	}
	if r := s.Apply(plDeposit("d1", "cs_2", 0, "1")); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeBadRequest}) {
		t.Fatalf("deposit into an expired session: %v", r.Err)
	}
}

// Opening a session fails the open one (the payer switched); closing the
// link fails the rest.
func TestCheckoutSwitchAndClose(t *testing.T) {
	s := newLinkTestState(t)
	applyChecked(t, s, &CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", Spec: plLinkSpec(25_000)})
	applyChecked(t, s, plBankSession("cs_1", "pl_1", 25_000))
	applyChecked(t, s, plBankSession("cs_2", "pl_1", 25_000))
	if c, _ := GetSession(s.Reader, "org_a", "cs_1"); c.Status != SessionFailed {
		t.Fatalf("switched session %+v", c)
	}
	r := applyChecked(t, s, &UpdateLink{At: 3, OrgID: "org_a", ID: "pl_1", Close: true})
	if LinkOf(r).Status != LinkClosed {
		t.Fatalf("closed %+v", LinkOf(r))
	}
	if c, _ := GetSession(s.Reader, "org_a", "cs_2"); c.Status != SessionFailed {
		t.Fatalf("session of a closed link %+v", c)
	}
	if r := s.Apply(&UpdateLink{At: 3, OrgID: "org_a", ID: "pl_1", Set: AppearanceRedirectURL}); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeBadRequest}) {
		t.Fatalf("update of a closed link: %v", r.Err)
	}
}

// A page spawns child links that inherit it; a paid child counts on the
// page; a closed page spawns none.
func TestPaymentPageChildren(t *testing.T) {
	s := newLinkTestState(t)
	app := plLinkSpec(0).Appearance
	applyChecked(t, s, &CreatePage{At: 2, ID: "pp_1", OrgID: "org_a", Currency: "GHS", Appearance: app})
	r := applyChecked(t, s, &CreateLink{At: 3, ID: "pl_1", OrgID: "org_a", ParentID: "pp_1",
		Spec: LinkSpec{Email: "kofi@example.com", Amount: 5_000}})
	l := LinkOf(r)
	if l.Spec.Currency != "GHS" || l.Current.Title != app.Title || l.ParentID != "pp_1" {
		t.Fatalf("child %+v", l)
	}
	if r := s.Apply(&CreateLink{At: 3, ID: "pl_2", OrgID: "org_a", ParentID: "pp_1",
		Spec: LinkSpec{Email: "kofi@example.com"}}); !errors.Is(r.Err, ledger.ErrValidation) {
		t.Fatalf("open-amount page without an amount: %v", r.Err)
	}
	applyChecked(t, s, plBankSession("cs_1", "pl_1", 5_000))
	applyChecked(t, s, plDeposit("d1", "cs_1", 0, "1"))
	p, _ := GetPage(s.Reader, "org_a", "pp_1")
	if p.PaymentCount != 1 || p.TotalCollected != 5_000 {
		t.Fatalf("page %+v", p)
	}
	if got := Links(s.Reader, "org_a", LinkFilter{ParentID: "pp_1"}, ledger.CursorStart, 10); len(got.Items) != 1 {
		t.Fatalf("children %+v", got)
	}
	applyChecked(t, s, &UpdatePage{At: 4, OrgID: "org_a", ID: "pp_1", Close: true})
	if r := s.Apply(&CreateLink{At: 5, ID: "pl_3", OrgID: "org_a", ParentID: "pp_1",
		Spec: LinkSpec{Email: "kofi@example.com", Amount: 1}}); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeBadRequest}) {
		t.Fatalf("child of a closed page: %v", r.Err)
	}
}

// The feature's records survive a snapshot with their indexes, and its
// commands survive the log codec.
func TestPaymentLinkSnapshotAndCodec(t *testing.T) {
	s := newLinkTestState(t)
	spec := plLinkSpec(25_000)
	spec.Appearance.CryptoAssets, spec.Appearance.CryptoAssetsSet = "USDT,USDC", true
	spec.Appearance.Metadata, spec.Appearance.Branding, spec.Appearance.ExpiresAt = `{"a":1}`, `{"accentColor":"#fff"}`, 99_999_999
	cmds := []ledger.Command{
		&CreatePage{At: 2, ID: "pp_1", OrgID: "org_a", Currency: "GHS", Amount: 700, Appearance: spec.Appearance},
		&CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", CustomerReference: "inv-1", Spec: spec},
		&UpdateLink{At: 3, OrgID: "org_a", ID: "pl_1", Set: AppearanceRedirectURL | AppearanceBranding, Appearance: Appearance{RedirectURL: "https://x.example"}},
		&UpdatePage{At: 3, OrgID: "org_a", ID: "pp_1", Set: AppearanceMethods, Appearance: Appearance{Methods: MethodSet(0).With(Crypto)}},
		plMobileSession("cs_1", "pl_1", "col_1", 25_000),
		&ledger.SettleCollection{At: 5, ID: "col_1", Completed: false},
		plBankSession("cs_2", "pl_1", 25_000),
		plDeposit("d1", "cs_2", 100, "1"),
	}
	var log [][]byte
	for _, c := range cmds {
		applyChecked(t, s, c)
		log = append(log, ledger.EncodeBatch(nil, []ledger.Command{c}))
	}
	replay := newLinkTestState(t)
	for i, entry := range log {
		got, err := ledger.DecodeBatch(entry)
		if err != nil || !reflect.DeepEqual(got[0], cmds[i]) {
			t.Fatalf("command %d round trip: %v %#v", i, err, got)
		}
		replay.Apply(got[0])
	}
	snap := s.Dump()
	if !bytes.Equal(replay.Dump(), snap) {
		t.Fatal("replaying the log gave another state")
	}
	r := s.Restored() // fails unless the restored copy dumps as snap
	// The derived indexes came back: references replay, sessions list.
	if res := r.Apply(&CreateLink{At: 9, ID: "pl_9", OrgID: "org_a", CustomerReference: "inv-1", Spec: spec}); !res.Replayed {
		t.Fatalf("customerReference after restore: %+v", res)
	}
	if res := r.Apply(plDeposit("d1", "cs_2", 100, "7")); !res.Replayed {
		t.Fatalf("deposit reference after restore: %+v", res)
	}
	if got := LinkSessions(r.Reader, "org_a", "pl_1"); len(got) != 2 || got[0].ID != "cs_2" {
		t.Fatalf("sessions after restore: %+v", got)
	}
	if !r.ExpiryDue(1 << 40) {
		t.Fatal("open session not tracked after restore")
	}
}

// A link's times are on its organization's clock: after an advance of N it
// is created N later than the leader's time (the kernel's
// TestAdvanceShiftsEveryResourceTime, for links).
func TestLinkTimesFollowTheOrgClock(t *testing.T) {
	const hour = 3600 * 1000
	const at = 100 * hour
	for _, offset := range []int64{0, 5 * hour, 30 * 24 * hour} {
		s := newLinkTestState(t)
		if offset > 0 {
			applyChecked(t, s, &ledger.AdvanceClock{At: 2, OrgID: "org_a", Millis: offset})
		}
		applyChecked(t, s, &CreateLink{At: at, ID: "pl_1", OrgID: "org_a", Spec: plLinkSpec(25_000)})
		l, ok := GetLink(s.Reader, "org_a", "pl_1")
		if !ok || l.CreatedAt != at+offset || l.UpdatedAt != at+offset {
			t.Errorf("offset %dh: link %+v, want created and updated at %d", offset/hour, l, at+offset)
		}
	}
}
