package ledger

import (
	"bytes"
	"errors"
	"testing"
)

func decidedPayoutCmd(id, ref string, amount Minor, attempt string) *Decided {
	return &Decided{Attempt: attempt, Op: &CreatePayout{
		At: 10, ID: id, OrgID: "org_a", ExternalReference: ref, MethodType: MethodMobileMoney, Fee: 10,
		Spec: PayoutSpec{Currency: "GHS", Amount: amount, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
	}}
}

// Under a reference, a refusal decided from the state is as final as a
// creation: every later attempt gets it, whatever the balance does.
func TestDecidedRefusalIsFinal(t *testing.T) {
	s := newConversionState(t) // org_a holds 1,000.00 GHS
	steps := []struct {
		name     string
		cmd      Command
		wantCode Code // "" created
		replayed bool
	}{
		{"more than the balance is refused", decidedPayoutCmd("pay_1", "r1", 200_000, "req_1"), CodeInsufficientFunds, false},
		{"the same request again gets the same refusal", decidedPayoutCmd("pay_2", "r1", 200_000, "req_2"), CodeInsufficientFunds, true},
		{"even once the balance covers it", &FundBalance{At: 11, OrgID: "org_a", Currency: "GHS", Amount: 500_000, ExternalReference: "f2"}, "", false},
		{"a late copy of the first attempt is refused again", decidedPayoutCmd("pay_3", "r1", 200_000, "req_1"), CodeInsufficientFunds, true},
		{"another request under the refused reference is a duplicate", decidedPayoutCmd("pay_4", "r1", 100, "req_3"), CodeDuplicate, false},
		{"a new reference is free", decidedPayoutCmd("pay_5", "r2", 200_000, "req_4"), "", false},
		{"a validation error records nothing", decidedPayoutCmd("col_6", "r3", 100, "req_5"), CodeValidation, false},
		{"so its reference is still free", decidedPayoutCmd("pay_7", "r3", 100, "req_6"), "", false},
	}
	for _, st := range steps {
		r := s.Apply(st.cmd)
		var code Code
		if r.Err != nil {
			code = r.Err.Code
		}
		if code != st.wantCode || r.Replayed != st.replayed {
			t.Fatalf("%s: got %v (replayed %v), want %q (replayed %v)", st.name, r.Err, r.Replayed, st.wantCode, st.replayed)
		}
		if code == CodeInsufficientFunds && (r.Err.Required != 200_010 || r.Err.Available != 100_000) {
			t.Fatalf("%s: details %+v, want the first refusal's", st.name, r.Err)
		}
	}
	if got, ok := s.PayoutByReference("org_a", "r1"); ok {
		t.Fatalf("the refused reference made payout %s", got.ID)
	}
	ref, ok := s.Refusal("org_a", RefusedPayout, "r1")
	if !ok || ref.ID != "pay_1" || ref.Attempt != "req_1" || ref.Err.Code != CodeInsufficientFunds {
		t.Fatalf("refusal of r1: %+v %v", ref, ok)
	}
	if _, ok := s.Refusal("org_b", RefusedPayout, "r1"); ok {
		t.Fatal("another organization sees the refusal")
	}
	if _, ok := s.Refusal("org_a", RefusedPayout, "r3"); ok {
		t.Fatal("a validation error was recorded")
	}
	checkState(t, s)

	// A restarted node, and one restored from a snapshot, answer alike.
	restored := restoreSame(t, s)
	if r := restored.Apply(decidedPayoutCmd("pay_8", "r1", 200_000, "req_7")); r.Err == nil || r.Err.Code != CodeInsufficientFunds || !r.Replayed {
		t.Fatalf("after a restore: %v %v", r.Err, r.Replayed)
	}
}

// A create relayed twice by its request's attempt is answered as its
// creation; another attempt under the reference is a replay.
func TestDecidedAttempt(t *testing.T) {
	s := newConversionState(t)
	first := s.Apply(decidedPayoutCmd("pay_1", "r1", 1_000, "req_a"))
	if first.Err != nil || first.Replayed || first.Payout.Attempt != "req_a" {
		t.Fatalf("create: %+v", first)
	}
	if p, _ := s.Payout("pay_1"); p.Attempt != "req_a" {
		t.Fatalf("stored attempt %q", p.Attempt)
	}
	again := s.Apply(decidedPayoutCmd("pay_2", "r1", 1_000, "req_a"))
	if again.Err != nil || again.Replayed || again.Payout.ID != "pay_1" {
		t.Fatalf("the same attempt again: %+v %v", again.Err, again.Replayed)
	}
	other := s.Apply(decidedPayoutCmd("pay_3", "r1", 1_000, "req_b"))
	if other.Err != nil || !other.Replayed || other.Payout.ID != "pay_1" {
		t.Fatalf("a retry: %+v %v", other.Err, other.Replayed)
	}
	none := s.Apply(decidedPayoutCmd("pay_4", "r2", 1_000, ""))
	if none.Err != nil || none.Payout.Attempt != "" {
		t.Fatalf("without an attempt: %+v", none)
	}
	if r := s.Apply(decidedPayoutCmd("pay_5", "r2", 1_000, "")); !r.Replayed {
		t.Fatal("an attempt-less retry is not a replay")
	}
	checkState(t, s)
}

// Spend caps and cross-currency payouts are decided the same way.
func TestDecidedWrapsChargesAndFX(t *testing.T) {
	s := newFXPayoutState(t)
	fx := fxPayoutCmd("pay_1", "fx1", 10)
	fx.FromAmount, fx.ToAmount, fx.Spec.Amount = 10_000_000, 154_440_000, 154_440_000
	if r := s.Apply(&Decided{Attempt: "req_1", Op: fx.Op()}); r.Err == nil || r.Err.Code != CodeInsufficientFunds {
		t.Fatalf("fx payout past the balance: %v", r.Err)
	}
	again := fxPayoutCmd("pay_2", "fx1", 10)
	again.FromAmount, again.ToAmount, again.Spec.Amount = 10_000_000, 154_440_000, 154_440_000
	again.Rate = "15.5" // priced again: the request is the same
	if r := s.Apply(&Decided{Attempt: "req_2", Op: again.Op()}); r.Err == nil || r.Err.Code != CodeInsufficientFunds || !r.Replayed {
		t.Fatalf("fx retry: %v %v", r.Err, r.Replayed)
	}
	charged := Charges.Charged("key_gone", 100, fxPayoutCmd("pay_3", "fx2", 10).Op())
	if r := s.Apply(&Decided{Attempt: "req_3", Op: charged}); r.Err == nil || !errors.Is(r.Err, &Error{Code: CodeUnauthorized}) {
		t.Fatalf("charge by an unknown key: %v", r.Err)
	}
	if _, ok := s.Refusal("org_a", RefusedPayout, "fx2"); !ok {
		t.Fatal("the charge's refusal was not recorded")
	}
	checkState(t, s)
}

func TestDecidedCommandRoundTrip(t *testing.T) {
	cmds := []Command{
		decidedPayoutCmd("pay_1", "r1", 100, "req_1"),
		&Decided{Op: fxPayoutCmd("pay_2", "r2", 10).Op()},
		&Decided{Attempt: "req_3", Op: Charges.Charged("key_a", 5, fxPayoutCmd("pay_3", "r3", 10).Op())},
		&Decided{Op: Charges.Charged("key_a", 5, mobileOrder("ord_1", "r4", "col_1", 10))},
		&Decided{Op: executeQuote(1, "o", "qte_1", "conv_1", "r5")},
	}
	enc := EncodeBatch(nil, cmds)
	got, err := DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(EncodeBatch(nil, got), enc) {
		t.Fatalf("round trip differs: %+v", got)
	}
	bad := EncodeBatch(nil, []Command{&Decided{Op: &FundBalance{OrgID: "o"}}})
	if _, err := DecodeBatch(bad); err == nil {
		t.Fatal("a decided funding decoded")
	}
	bad = EncodeBatch(nil, []Command{&Decided{Op: executeQuote(1, "o", "qte_1", "conv_1", "")}})
	if _, err := DecodeBatch(bad); err == nil {
		t.Fatal("a decided execution without a reference decoded")
	}
}

// Orders and conversions under a reference are decided too: each kind of
// resource has references of its own.
func TestDecidedOrdersAndConversions(t *testing.T) {
	s := newConversionState(t)
	mustApply(t, s, Conversions.CreateQuote(5, "qte_1", "org_a", "GHS", 500_000, "USD", 32_000, "0.064"))
	exec := func(conv string) *Decided {
		return &Decided{Op: executeQuote(6, "org_a", "qte_1", conv, "x1")}
	}
	if r := s.Apply(exec("conv_1")); r.Err == nil || r.Err.Code != CodeInsufficientFunds {
		t.Fatalf("conversion past the balance: %v", r.Err)
	}
	mustApply(t, s, &FundBalance{At: 7, OrgID: "org_a", Currency: "GHS", Amount: 900_000, ExternalReference: "f2"})
	if r := s.Apply(exec("conv_2")); r.Err == nil || r.Err.Code != CodeInsufficientFunds || !r.Replayed {
		t.Fatalf("a late copy of the execution: %v %v", r.Err, r.Replayed)
	}
	if _, ok := s.Refusal("org_a", Conversions.Refused, "x1"); !ok {
		t.Fatal("the conversion's refusal was not recorded")
	}
	if _, ok := s.Refusal("org_a", RefusedPayout, "x1"); ok {
		t.Fatal("a conversion's refusal names a payout reference")
	}
	// A payout may still use the reference a conversion was refused under.
	if r := s.Apply(decidedPayoutCmd("pay_1", "x1", 100, "")); r.Err != nil {
		t.Fatalf("payout under a conversion's refused reference: %v", r.Err)
	}
	order := mobileOrder("ord_1", "o1", "col_1", 8)
	if r := s.Apply(&Decided{Op: order}); r.Err != nil {
		t.Fatalf("order: %v", r.Err)
	}
	if r := s.Apply(&Decided{Op: executeQuote(6, "org_a", "qte_1", "conv_3", "")}); r.Err == nil || r.Err.Code != CodeValidation {
		t.Fatalf("an execution without a reference: %v", r.Err)
	}
	checkState(t, s)
}
