package ledger

import (
	"testing"

	"payments/wal"
)

// snapshotKV is the harness's state store with Snapshot, as package raft
// gives it: what Pinned needs.
type snapshotKV struct {
	KVReader
	store *wal.StateStore
}

func (kv snapshotKV) Snapshot() (KVReader, func(), error) {
	sn, err := kv.store.NewSnapshot()
	if err != nil {
		return nil, nil, err
	}
	return KVOf(sn), sn.Close, nil
}

// A pinned Reader sees balances as of its moment: a conversion committed
// after it was pinned, which moves two accounts in one command, shows in
// neither of them, by every account read.
func TestPinnedReaderBalancesAreOneMoment(t *testing.T) {
	s := newConversionState(t)
	s.Apply(&FundBalance{At: 3, OrgID: "org_a", Currency: "USD", Amount: 1, ExternalReference: "f2"})
	live := NewReader(snapshotKV{s.kv, s.store}, s.st.Views())
	before := live.Accounts("org_a")
	if len(before) != 2 {
		t.Fatalf("%d accounts", len(before))
	}
	p, release := live.Pinned()
	defer release()
	s.Apply(quoteCmd("qte_1", 10, 10_000, 634))
	if r := s.Apply(executeQuote(11, "org_a", "qte_1", "conv_1", "")); r.Err != nil {
		t.Fatal(r.Err)
	}
	for i, a := range p.Accounts("org_a") {
		if a.Total != before[i].Total {
			t.Errorf("pinned Accounts: %s total %d, want %d as when pinned", a.Currency, a.Total, before[i].Total)
		}
		if got, _ := p.Account(a.Number); got.Total != before[i].Total {
			t.Errorf("pinned Account: %s total %d, want %d", a.Currency, got.Total, before[i].Total)
		}
		if got, _ := p.AccountFor("org_a", a.Currency); got.Total != before[i].Total {
			t.Errorf("pinned AccountFor: %s total %d, want %d", a.Currency, got.Total, before[i].Total)
		}
		if now, _ := live.Account(a.Number); now.Total == before[i].Total {
			t.Errorf("live Account: %s total unchanged by the conversion", a.Currency)
		}
	}
	// System accounts are not merchant accounts, pinned or not.
	for _, a := range p.Accounts("org_a") {
		if a.Purpose != PurposeMerchant {
			t.Errorf("account %s of purpose %v", a.Number, a.Purpose)
		}
	}
}
