package raft

import (
	"crypto/sha256"
	"fmt"
	"syscall"
	"testing"

	hraft "github.com/hashicorp/raft"

	"payments/ledger"
	"payments/ledger/keycontrols"
	"payments/wal"
)

// BenchmarkFSMPayouts applies payouts through the FSM as a loaded leader
// does: each ApplyBatch hands it 4 log entries of 75 commands — 100 new
// payouts, each charged to the key that asked for it as the API proposes
// them, the payouts of the call before marked processing, and those of the
// call before that settled — over 64 organizations, on a state store on
// disk. ns/op is the wall time per payout from the first ApplyBatch until
// the last batch is committed; cpu-ns/payout is the whole process's CPU
// time, Pebble's flushes and compactions included.
func BenchmarkFSMPayouts(b *testing.B) {
	f := openTestFSM(b, b.TempDir(), wal.Options{})
	var index uint64
	entry := func(cmds []ledger.Command) *hraft.Log {
		index++
		return &hraft.Log{Index: index, Type: hraft.LogCommand, Data: ledger.EncodeBatch(nil, cmds)}
	}
	apply := func(logs []*hraft.Log) {
		for i, r := range f.ApplyBatch(logs) {
			for _, res := range r.([]ledger.Result) {
				if res.Err != nil {
					b.Fatalf("entry %d: %v", logs[i].Index, res.Err)
				}
			}
		}
	}
	const orgs = 64
	org := func(i int) string { return fmt.Sprintf("org_%08d", i%orgs) }
	for i := range orgs {
		hash := sha256.Sum256([]byte(org(i)))
		apply([]*hraft.Log{entry([]ledger.Command{
			&ledger.CreateOrganization{At: 1, ID: org(i), Name: org(i), Key: ledger.CreateAPIKey{At: 1, ID: fmt.Sprintf("key_%08d", i), OrgID: org(i), Hash: string(hash[:])}},
			&ledger.FundBalance{At: 1, OrgID: org(i), Currency: "GHS", Amount: ledger.AmountMax, ExternalReference: "seed"},
		})})
	}
	f.waitIdle()

	// The log, encoded before the clock starts: the proposer's work, not
	// the FSM's.
	const per, perEntry = 100, 75
	id := func(i int) string { return fmt.Sprintf("pay_ghs_%07d%013d", 1_000_000+i/20_000, i) }
	var batches [][]*hraft.Log
	for batch := 0; batch*per < b.N+2*per; batch++ {
		var cmds []ledger.Command
		for j := range per {
			i := batch*per + j
			if i < b.N {
				cmds = append(cmds, &keycontrols.Charged{
					Charge: keycontrols.Charge{KeyID: fmt.Sprintf("key_%08d", i%orgs), USD: 100, Period: ledger.SpendPeriod{Day: 20000, Month: 24000}},
					Op: &ledger.CreatePayout{At: 2, ID: id(i), OrgID: org(i), ExternalReference: id(i),
						Spec:       ledger.PayoutSpec{Currency: "GHS", Amount: 1000, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
						MethodType: ledger.MethodMobileMoney, Fee: 10},
				})
			}
			if k := i - per; k >= 0 && k < b.N {
				cmds = append(cmds, &ledger.MarkPayoutProcessing{At: 3, ID: id(k), ProviderReference: "sbx_" + id(k)})
			}
			if k := i - 2*per; k >= 0 && k < b.N {
				cmds = append(cmds, &ledger.SettlePayout{At: 4, ID: id(k), Completed: true})
			}
		}
		var logs []*hraft.Log
		for len(cmds) > 0 {
			n := min(perEntry, len(cmds))
			logs = append(logs, entry(cmds[:n]))
			cmds = cmds[n:]
		}
		batches = append(batches, logs)
	}

	cpu0 := processCPU()
	b.ReportAllocs()
	b.ResetTimer()
	for _, logs := range batches {
		apply(logs)
	}
	f.waitIdle()
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/payout")
}

// processCPU is the process's CPU time so far, user and system, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
