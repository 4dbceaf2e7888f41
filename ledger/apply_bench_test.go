package ledger

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

func benchState(b *testing.B, orgs int) *testState {
	s := newTestState(b)
	for i := 0; i < orgs; i++ {
		id := fmt.Sprintf("org_%08d", i)
		hash := sha256.Sum256([]byte(id))
		s.Apply(&CreateOrganization{At: 1, ID: id, Name: id, Key: CreateAPIKey{At: 1, ID: fmt.Sprintf("key_%08d", i), OrgID: id, Hash: string(hash[:])}})
		s.Apply(&FundBalance{At: 1, OrgID: id, Currency: "GHS", Amount: AmountMax, ExternalReference: "seed"})
	}
	return s
}

// BenchmarkApplyPayout measures a payout's whole life in the ledger:
// created (debit and fee), processing, completed: three commands, applied
// and committed to the state store in batches of 256, as the FSM does
// under load.
func BenchmarkApplyPayout(b *testing.B) {
	s := benchState(b, 64)
	cmds := make([]Command, 0, 3*b.N)
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("pay_ghs_%020d", i)
		cmds = append(cmds,
			&CreatePayout{At: 2, ID: id, OrgID: fmt.Sprintf("org_%08d", i%64), ExternalReference: id,
				Spec:       PayoutSpec{Currency: "GHS", Amount: 1000, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
				MethodType: MethodMobileMoney, Fee: 10},
			&MarkPayoutProcessing{At: 3, ID: id, ProviderReference: "sbx"},
			&SettlePayout{At: 4, ID: id, Completed: true})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for len(cmds) > 0 {
		n := min(256, len(cmds))
		for _, r := range s.applyBatch(cmds[:n]...) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		cmds = cmds[n:]
	}
}

// BenchmarkDecodeBatch measures decoding a log entry of 64 payouts.
func BenchmarkDecodeBatch(b *testing.B) {
	var cmds []Command
	for i := 0; i < 64; i++ {
		id := fmt.Sprintf("pay_ghs_%020d", i)
		cmds = append(cmds, &CreatePayout{At: 2, ID: id, OrgID: "org_00000001", ExternalReference: id,
			Spec:       PayoutSpec{Currency: "GHS", Amount: 1000, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
			MethodType: MethodMobileMoney, Fee: 10})
	}
	entry := EncodeBatch(nil, cmds)
	b.ReportAllocs()
	b.SetBytes(int64(len(entry)))
	for i := 0; i < b.N; i++ {
		if _, err := DecodeBatch(entry); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSustainedPayouts applies payouts as a loaded node does: each
// applied batch creates 100 payouts, marks the previous batch's processing
// and settles the batch before that, over 64 organizations, on a state
// store on disk. cpu-ns/payout is the whole process's CPU time, Pebble's
// flushes and compactions included.
func BenchmarkSustainedPayouts(b *testing.B) {
	s := newTestStateOn(b, b.TempDir())
	for i := 0; i < 64; i++ {
		id := fmt.Sprintf("org_%08d", i)
		hash := sha256.Sum256([]byte(id))
		s.Apply(&CreateOrganization{At: 1, ID: id, Name: id, Key: CreateAPIKey{At: 1, ID: fmt.Sprintf("key_%08d", i), OrgID: id, Hash: string(hash[:])}})
		s.Apply(&FundBalance{At: 1, OrgID: id, Currency: "GHS", Amount: AmountMax, ExternalReference: "seed"})
	}
	const per = 100
	id := func(i int) string { return fmt.Sprintf("pay_ghs_%07d%013d", 1_000_000+i/20_000, i) }
	cpu0 := processCPU()
	b.ResetTimer()
	b.ReportAllocs()
	for batch := 0; batch*per < b.N+2*per; batch++ {
		var cmds []Command
		for j := 0; j < per; j++ {
			i := batch*per + j
			if i < b.N {
				ref := id(i)
				cmds = append(cmds, &CreatePayout{At: 2, ID: id(i), OrgID: fmt.Sprintf("org_%08d", i%64), ExternalReference: ref,
					Spec:       PayoutSpec{Currency: "GHS", Amount: 1000, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
					MethodType: MethodMobileMoney, Fee: 10})
			}
			if k := i - per; k >= 0 && k < b.N {
				cmds = append(cmds, &MarkPayoutProcessing{At: 3, ID: id(k), ProviderReference: "sbx_" + id(k)})
			}
			if k := i - 2*per; k >= 0 && k < b.N {
				cmds = append(cmds, &SettlePayout{At: 4, ID: id(k), Completed: true})
			}
		}
		for _, r := range s.applyBatch(cmds...) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/payout")
	if testing.Verbose() && b.N > 1000 {
		b.Log(s.store.Metrics())
	}
}
