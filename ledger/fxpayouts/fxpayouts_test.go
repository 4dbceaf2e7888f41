package fxpayouts

import (
	"errors"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

// createCmd pays out 150.00 GHS from the USD balance at 15.444: 9.72 USD
// (rounded up), fee 0.10 USD.
func createCmd(id, ref string, at int64) *Create {
	return &Create{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec:       ledger.PayoutSpec{Currency: "GHS", Amount: 15_000, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
		MethodType: ledger.MethodMobileMoney, Fee: 10,
		FromCurrency: "USD", FromAmount: 972, ToAmount: 15_000, Rate: "15.444",
	}
}

// newLedger is a ledger with two organizations, org_a holding 1,000.00
// GHS and 1,000.00 USD.
func newLedger(t *testing.T) *ledgertest.State {
	t.Helper()
	return ledgertest.TwoOrgs(t).With(
		&ledger.FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"},
		&ledger.FundBalance{At: 3, OrgID: "org_a", Currency: "USD", Amount: 100_000, ExternalReference: "fu"})
}

func checkState(t *testing.T, s *ledgertest.State) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func orgTotal(s *ledgertest.State, org, cur string) ledger.Minor {
	a, _ := s.AccountFor(org, cur)
	return a.Total
}

// Bad cross-currency payouts are refused and change nothing.
func TestCreateRules(t *testing.T) {
	s := newLedger(t)
	ledgertest.RefuseEdits(t, s, createCmd("pay_1", "r1", 10), []ledgertest.Edit[Create]{
		{Name: "bad id", Edit: func(c *Create) { c.ID = "col_1" }, Want: ledger.ErrValidation},
		{Name: "unknown org", Edit: func(c *Create) { c.OrgID = "org_x" }, Want: ledger.ErrNotFound},
		{Name: "unknown from currency", Edit: func(c *Create) { c.FromCurrency = "XYZ" }, Want: ledger.ErrValidation},
		{Name: "unknown to currency", Edit: func(c *Create) { c.Spec.Currency = "ghs" }, Want: ledger.ErrValidation},
		{Name: "same currency", Edit: func(c *Create) { c.FromCurrency = "GHS" }, Want: ledger.ErrValidation},
		{Name: "zero from", Edit: func(c *Create) { c.FromAmount = 0 }, Want: ledger.ErrValidation},
		{Name: "zero to", Edit: func(c *Create) { c.ToAmount, c.Spec.Amount = 0, 0 }, Want: ledger.ErrValidation},
		{Name: "negative fee", Edit: func(c *Create) { c.Fee = -1 }, Want: ledger.ErrValidation},
		{Name: "amount not its side", Edit: func(c *Create) { c.Spec.Amount = 14_999 }, Want: ledger.ErrValidation},
		{Name: "no side", Edit: func(c *Create) { c.Spec.AmountSide = 0 }, Want: ledger.ErrValidation},
		{Name: "bad rate", Edit: func(c *Create) { c.Rate = "1e3" }, Want: ledger.ErrValidation},
		{Name: "no reference", Edit: func(c *Create) { c.ExternalReference = "" }, Want: ledger.ErrValidation},
		// 1000.00 USD cover 999.00 but not its 1% fee: exactly nothing moves.
		{Name: "insufficient funds", Edit: func(c *Create) {
			c.FromAmount, c.Fee, c.ToAmount, c.Spec.Amount = 99_900, 999, 1_542_855, 1_542_855
		}, Want: ledger.ErrInsufficientFunds},
		{Name: "no from balance", Edit: func(c *Create) { c.OrgID = "org_b" }, Want: ledger.ErrInsufficientFunds},
	})
}

// from.amount fixed: the spec's amount is the from amount; the payout
// delivers ToAmount, and a replay compares the request as given.
func TestFromSide(t *testing.T) {
	s := newLedger(t)
	c := createCmd("pay_1", "r1", 10)
	c.Spec.AmountSide, c.Spec.Amount, c.FromAmount, c.ToAmount, c.Fee = ledger.SideFrom, 2000, 2000, 30_888, 20
	r := ledgertest.MustApply(t, s, c)
	checkState(t, s)
	if r.Payout.Spec.Amount != 30_888 || r.Payout.RequestedSpec().Amount != 2000 || orgTotal(s, "org_a", "USD") != 100_000-2020 {
		t.Fatalf("payout %+v", r.Payout)
	}
	// The same request priced at another rate later is still a replay.
	again := *c
	again.ID, again.ToAmount, again.Rate = "pay_2", 30_000, "15"
	if r := s.Apply(&again); !r.Replayed || r.Payout.ID != "pay_1" {
		t.Fatalf("replay %+v", r)
	}
}

// The create survives the log's codec; same-currency payouts keep kind 5.
func TestCommandRoundTrip(t *testing.T) {
	c := createCmd("pay_1", "r1", 10)
	c.Reservation = 7
	c.Spec.Metadata, c.Spec.ToKYC = `{"a":1}`, `{"accountName":"A"}`
	got, err := ledger.DecodeBatch(ledger.EncodeBatch(nil, []ledger.Command{c, &ledger.CreatePayout{At: 1, ID: "pay_2"}}))
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := got[0].(*Create); !ok || *d != *c || d.Kind() != 12 {
		t.Fatalf("round trip: %+v", got[0])
	}
	if got[1].Kind() != ledger.KindCreatePayout {
		t.Fatal("same-currency payout kind changed")
	}
	for _, name := range []string{"fx_payout_debit", "fx_payout_clearing", "fx_payout_reversal"} {
		if et, ok := ledger.ParseEntryType(name); !ok || et.String() != name || et.ReferenceType() != "payout" {
			t.Errorf("entry type %s: %v %v", name, et, ok)
		}
	}
}

// A payout's FX details are stored with it, and a refused command leaves
// the payout as it was.
func TestStoredWithItsPayout(t *testing.T) {
	s := newLedger(t)
	if r := s.Apply(createCmd("pay_1", "r1", 10)); r.Err != nil {
		t.Fatal(r.Err)
	}
	if p, ok := s.Payout("pay_1"); !ok || p.FX == nil || p.FX.FromCurrency != "USD" {
		t.Fatalf("payout without its FX details: %+v", p)
	}
	if !errors.Is(s.Apply(createCmd("pay_1", "r2", 11)).Err, ledger.ErrConflict) {
		t.Fatal("same id twice")
	}
}
