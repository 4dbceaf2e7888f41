package ledger

import (
	"fmt"
	"sync"
	"testing"

	"payments/ledger/kv"
)

// The filter's one promise: a key added is never reported absent, whatever
// the segments it grew through and whoever reads meanwhile. Its cost: few
// false positives, about 1.5 bytes a key.
func TestLookupFilterNeverForgetsAKey(t *testing.T) {
	f := newLookupFilter()
	key := func(i int) []byte { return kv.NewKey('p', subLookup, 'r').Str(fmt.Sprintf("org_1\x00ref-%d", i)) }
	const added = 3*filterFirstCapacity + 1 // three segments
	if f.absent(key(0)) {
		t.Fatal("an incomplete filter answered")
	}
	f.phase.Store(filterOn)

	var readers sync.WaitGroup
	done := make(chan struct{})
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_ = f.absent(key(r)) // racing the adds: any answer, no data race
			}
		}()
	}
	for i := 0; i < added; i++ {
		f.add(key(i))
	}
	close(done)
	readers.Wait()

	for i := 0; i < added; i++ {
		if f.absent(key(i)) {
			t.Fatalf("key %d added, reported absent", i)
		}
	}
	falsePositives := 0
	const fresh = 100_000
	for i := added; i < added+fresh; i++ {
		if !f.absent(key(i)) {
			falsePositives++
		}
	}
	t.Logf("%d keys in %d segments, %d bytes: %.2f %% false positives", added, len(*f.segments.Load()), f.bytes(), 100*float64(falsePositives)/fresh)
	if rate := float64(falsePositives) / fresh; rate > 0.02 {
		t.Errorf("false positive rate %.4f over %d segments, want under 2%%", rate, len(*f.segments.Load()))
	}
	capacity := 0
	for _, seg := range *f.segments.Load() {
		capacity += seg.capacity
	}
	if perKey := float64(f.bytes()) / float64(capacity); perKey > 1.6 {
		t.Errorf("%.2f bytes a key of capacity", perKey)
	}
}

// Past its memory bound the filter retires rather than grow: lookups read
// the store again, and nothing it held is ever reported absent.
func TestLookupFilterRetiresPastItsBound(t *testing.T) {
	f := newLookupFilter()
	f.maxBytes = 3 * len((*f.segments.Load())[0].words) * 8 // room for the first two segments
	f.phase.Store(filterOn)
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%d", i)) }
	const within = 3 * filterFirstCapacity // what the first two segments take
	for i := 0; i < within; i++ {
		f.add(key(i))
	}
	if f.phase.Load() != filterOn {
		t.Fatal("retired within its bound")
	}
	for i := within; i < within+10; i++ {
		f.add(key(i))
	}
	if f.phase.Load() != filterRetired {
		t.Fatalf("%d bytes held past a bound of %d, still answering", f.bytes(), f.maxBytes)
	}
	if f.bytes() > f.maxBytes {
		t.Fatalf("%d bytes held, bound %d", f.bytes(), f.maxBytes)
	}
	for i := 0; i < within+10; i += 997 {
		if f.absent(key(i)) {
			t.Fatalf("key %d reported absent by a retired filter", i)
		}
	}
}

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
	f := newLookupFilter()
	f.prefixes = fresh.prefixes
	if err := f.fill(restarted.kv, func() bool { return false }, 7); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		k := payoutKind.lookupKey(indexReference, refKey("org_a", fmt.Sprintf("ref-%d", i)))
		if f.absent(k) || fresh.absent(k) {
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

	stopped := newLookupFilter()
	stopped.prefixes = fresh.prefixes
	if err := stopped.fill(restarted.kv, func() bool { return true }, 7); err == nil || stopped.phase.Load() == filterOn {
		t.Fatal("a stopped fill turned the filter on")
	}
	// A retired filter never answers again, even once a fill ends.
	retired := newLookupFilter()
	retired.prefixes = fresh.prefixes
	restarted.st.Views().RetireLookupFilter()
	retired.phase.Store(filterRetired)
	if err := retired.fill(restarted.kv, func() bool { return false }, 7); err == nil || retired.absent([]byte("anything")) {
		t.Fatal("a retired filter answered")
	}
	if restarted.LookupFilterOn() {
		t.Fatal("the state's filter is on after RetireLookupFilter")
	}
	if _, ok := restarted.PayoutByReference("org_a", "ref-5"); !ok {
		t.Fatal("with the filter retired, a reference in the store is not found")
	}
}
