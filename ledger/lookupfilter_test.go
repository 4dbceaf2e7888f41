package ledger

import (
	"fmt"
	"testing"

	"payments/ledger/kv"
)

// A filled filter finds every reference the state store held, read in
// chunks; Apply finds its own keys within a batch; and
// a reference new to the store reads as not found through it.
func TestLookupFilterFilledFromTheStore(t *testing.T) {
	s := newConversionState(t)
	mustApply(t, s, &FundBalance{At: 3, OrgID: "org_a", Currency: "GHS", Amount: 1_000_000, ExternalReference: "seed"})
	payout := func(i int) *CreatePayout {
		return &CreatePayout{At: 2, ID: fmt.Sprintf("pay_ghs_%04d", i), OrgID: "org_a", ExternalReference: fmt.Sprintf("ref-%d", i),
			Spec:       PayoutSpec{Currency: "GHS", Amount: 100, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
			MethodType: MethodMobileMoney, Fee: 1}
	}
	for i := 0; i < 40; i++ {
		if r := s.Apply(payout(i)); r.Err != nil {
			t.Fatal(r.Err)
		}
	}

	restarted, err := loadTestState(t, s.store)
	if err != nil {
		t.Fatal(err)
	}
	fresh := restarted.st.Views().v.lookups
	if fresh == s.st.Views().v.lookups {
		t.Fatal("a loaded state shares its filter")
	}
	// loadTestState filled it with the production chunk; fill another in
	// chunks of 7 keys, so that the scan resumes many times.
	f := kv.NewLookupFilter()
	f.AddPrefix(kv.NewKey(payoutKind.tag, subLookup))
	if err := f.Fill(restarted.kv, func() bool { return false }, 7); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		k := payoutKind.lookupKey(indexReference, refKey("org_a", fmt.Sprintf("ref-%d", i)))
		if f.Absent(k) || fresh.Absent(k) {
			t.Fatalf("ref-%d is in the store, the filter says absent", i)
		}
		if p, ok := restarted.PayoutByReference("org_a", fmt.Sprintf("ref-%d", i)); !ok || p.ID != payout(i).ID {
			t.Fatalf("ref-%d: %v %v", i, p.ID, ok)
		}
	}
	if _, ok := restarted.PayoutByReference("org_a", "ref-new"); ok {
		t.Fatal("a new reference found")
	}
	// A reference reused after the restart is a duplicate, not a second payout.
	again := payout(3)
	again.ID = "pay_ghs_9999"
	if r := restarted.Apply(again); r.Err != nil || !r.Replayed || r.Payout.ID != payout(3).ID {
		t.Fatalf("a reference from before the restart, sent again: %+v", r)
	}
	// Within one batch, Apply finds its own new key: the batch's pending
	// lookups are read before the filter is asked.
	first, second := payout(100), payout(100)
	second.ID = "pay_ghs_0101"
	res := restarted.applyBatch(first, second)
	if res[0].Err != nil || res[1].Err != nil || !res[1].Replayed || res[1].Payout.ID != first.ID {
		t.Fatalf("same reference twice in one batch: %+v, %+v", res[0], res[1])
	}

	stopped := kv.NewLookupFilter()
	stopped.AddPrefix(kv.NewKey(payoutKind.tag, subLookup))
	if err := stopped.Fill(restarted.kv, func() bool { return true }, 7); err == nil || stopped.On() {
		t.Fatal("a stopped fill turned the filter on")
	}
	// A retired filter never answers again, even once a fill ends.
	retired := kv.NewLookupFilter()
	retired.AddPrefix(kv.NewKey(payoutKind.tag, subLookup))
	restarted.st.Views().RetireLookupFilter()
	retired.Retire()
	if err := retired.Fill(restarted.kv, func() bool { return false }, 7); err == nil || retired.Absent([]byte("anything")) {
		t.Fatal("a retired filter answered")
	}
	if restarted.LookupFilterOn() {
		t.Fatal("the state's filter is on after RetireLookupFilter")
	}
	if _, ok := restarted.PayoutByReference("org_a", "ref-5"); !ok {
		t.Fatal("with the filter retired, a reference in the store is not found")
	}
}
