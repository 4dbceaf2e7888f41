package ledger

import (
	"fmt"
	"testing"
)

// fxPayoutCmd pays out 150.00 GHS from the USD balance at 15.444: 9.72 USD
// (rounded up), fee 0.10 USD.
func fxPayoutCmd(id, ref string, at int64) *TestFXPayout {
	return &TestFXPayout{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec:       PayoutSpec{Currency: "GHS", Amount: 15_000, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
		MethodType: MethodMobileMoney, Fee: 10,
		FromCurrency: "USD", FromAmount: 972, ToAmount: 15_000, Rate: "15.444",
	}
}

func newFXPayoutState(t *testing.T) *testState {
	t.Helper()
	s := newConversionState(t)
	mustApply(t, s, &FundBalance{At: 3, OrgID: "org_a", Currency: "USD", Amount: 100_000, ExternalReference: "fu"})
	checkState(t, s)
	return s
}

func checkState(t *testing.T, s *testState) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func orgTotal(s *testState, org, cur string) Minor {
	a, _ := s.AccountFor(org, cur)
	return a.Total
}

func systemBalance(s *testState, p AccountPurpose, cur string) Minor {
	a, _ := s.st.accounts.get(systemAccountNumber(p, cur))
	return a.Total
}

// The debit is exactly from amount + fee in the from currency; the FX legs
// balance in each currency; completion settles the to amount from payouts
// clearing; a failure gives the from balance back exactly what it lost.
func TestFXPayoutLifecycle(t *testing.T) {
	for _, complete := range []bool{true, false} {
		t.Run(fmt.Sprintf("completed=%v", complete), func(t *testing.T) {
			s := newFXPayoutState(t)
			usd0, ghs0 := orgTotal(s, "org_a", "USD"), orgTotal(s, "org_a", "GHS")

			r := mustApply(t, s, fxPayoutCmd("pay_1", "r1", 10).Op())
			checkState(t, s)
			p := r.Payout
			if p.FX == nil || p.FX.Rate != "15.444" || p.FromCurrency() != "USD" || p.FromAmount() != 972 ||
				p.Spec.Amount != 15_000 || p.Spec.Currency != "GHS" || p.Fee != 10 || p.Debit() != 982 || p.Status != PayoutPending {
				t.Fatalf("payout %+v fx %+v", p, p.FX)
			}
			if got := orgTotal(s, "org_a", "USD"); got != usd0-982 {
				t.Fatalf("USD balance %d, want %d", got, usd0-982)
			}
			if got := orgTotal(s, "org_a", "GHS"); got != ghs0 {
				t.Fatalf("GHS balance moved: %d", got)
			}
			if systemBalance(s, PurposeFXClearing, "USD") != 972 || systemBalance(s, PurposeFXClearing, "GHS") != -15_000 ||
				systemBalance(s, PurposePayoutsClearing, "GHS") != 15_000 || systemBalance(s, PurposeFeeRevenue, "USD") != 10 {
				t.Fatal("FX legs or fee booked wrong", systemBalance(s, PurposeFXClearing, "USD"), systemBalance(s, PurposeFXClearing, "GHS"), systemBalance(s, PurposePayoutsClearing, "GHS"), systemBalance(s, PurposeFeeRevenue, "USD"))
			}
			// The payout is the same on every read.
			for _, got := range []Payout{mustPayout(t, s, "pay_1"), s.Payouts("org_a", PayoutFilter{}, CursorStart, 10).Items[0], s.openPayouts()[0]} {
				if got.FX == nil || *got.FX != *p.FX {
					t.Fatalf("read without its FX: %+v", got)
				}
			}
			if byRef, _ := s.PayoutByReference("org_a", "r1"); byRef.FX == nil {
				t.Fatal("by reference without FX")
			}

			// A replay is the same payout; another request is a duplicate,
			// as is a same-currency payout under the same reference.
			if r := s.Apply(fxPayoutCmd("pay_2", "r1", 11).Op()); r.Err != nil || !r.Replayed || r.Payout.ID != "pay_1" {
				t.Fatalf("replay: %+v", r)
			}
			other := fxPayoutCmd("pay_2", "r1", 11)
			other.Spec.Amount, other.ToAmount = 15_001, 15_001
			applyRejected(t, s, other.Op(), ErrDuplicate)
			applyRejected(t, s, &CreatePayout{At: 11, ID: "pay_2", OrgID: "org_a", ExternalReference: "r1",
				Spec: fxPayoutCmd("", "", 0).Spec, MethodType: MethodMobileMoney, Fee: 150}, ErrDuplicate)

			mustApply(t, s, &MarkPayoutProcessing{At: 12, ID: "pay_1", ProviderReference: "sbx"})
			checkState(t, s)
			r = mustApply(t, s, &SettlePayout{At: 13, ID: "pay_1", Completed: complete, Message: "m"})
			checkState(t, s)
			if r.Payout.FX == nil {
				t.Fatal("settled payout without FX")
			}
			if complete {
				if orgTotal(s, "org_a", "USD") != usd0-982 || systemBalance(s, PurposeRailSettlement, "GHS") != 15_000 ||
					systemBalance(s, PurposePayoutsClearing, "GHS") != 0 {
					t.Fatal("completion booked wrong")
				}
			} else {
				if got := orgTotal(s, "org_a", "USD"); got != usd0 {
					t.Fatalf("refund: USD balance %d, want %d", got, usd0)
				}
				for _, cur := range []string{"USD", "GHS"} {
					if systemBalance(s, PurposeFXClearing, cur) != 0 || systemBalance(s, PurposePayoutsClearing, cur) != 0 ||
						systemBalance(s, PurposeFeeRevenue, cur) != 0 {
						t.Fatalf("%s system accounts not reversed", cur)
					}
				}
			}
			// The settlement event carries the FX details, and survives a snapshot.
			evs := s.Events("org_a", EventFilter{}, CursorStart, 1).Items
			if len(evs) != 1 || KindOfSubject(evs[0].Subject) != SubjectFXPayout || evs[0].Subject.(Payout).FX.FromAmount != 972 {
				t.Fatalf("event %+v", evs)
			}
			rs := checkFXRoundTrip(t, s)
			if got := mustPayout(t, rs, "pay_1"); got.FX == nil || *got.FX != *p.FX {
				t.Fatalf("restored payout %+v", got)
			}
			if ev := rs.Events("org_a", EventFilter{}, CursorStart, 1).Items[0]; ev.Subject.(Payout).FX == nil {
				t.Fatal("restored event without FX")
			}
		})
	}
}

func mustPayout(t *testing.T, s *testState, id string) Payout {
	t.Helper()
	p, ok := s.Payout(id)
	if !ok {
		t.Fatalf("no payout %s", id)
	}
	return p
}

func checkFXRoundTrip(t *testing.T, s *testState) *testState {
	t.Helper()
	r := restoreSame(t, s)
	checkState(t, r)
	return r
}
