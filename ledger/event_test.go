package ledger

import (
	"testing"
)

// Every change the contract names records its event in the same Apply, with
// the resource as it is after the change; a rejected or replayed command
// records none.
func TestEventsFollowChanges(t *testing.T) {
	s := newOrgTestState(t)
	payout := func(id, ref string, amount Minor) *CreatePayout {
		return &CreatePayout{At: 3, ID: id, OrgID: "org_a", ExternalReference: ref,
			Spec:       PayoutSpec{Currency: "GHS", Amount: amount, AmountSide: SideTo, Method: "gh_mtn"},
			MethodType: MethodMobileMoney, Fee: 1}
	}
	collection := func(id, ref string) *CreateCollection {
		return &CreateCollection{At: 5, ID: id, OrgID: "org_a", ExternalReference: ref,
			Spec: CollectionSpec{Currency: "GHS", Amount: 500, Method: "gh_mtn"}, MethodType: MethodMobileMoney, Fee: 8}
	}
	steps := []struct {
		cmd   Command
		types []string
	}{
		{&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 10_000, ExternalReference: "f1"}, []string{EventAccountCredited}},
		{&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 10_000, ExternalReference: "f1"}, nil}, // replay
		{payout("pay_1", "p1", 100), nil},
		{payout("pay_2", "p2", 100), nil},
		{payout("pay_3", "p3", 1_000_000), nil}, // insufficient funds
		{&SettlePayout{At: 4, ID: "pay_1", Completed: true}, []string{EventPayoutCompleted}},
		{&SettlePayout{At: 4, ID: "pay_2", Completed: false, Message: "rejected"}, []string{EventPayoutFailed}},
		{&SettlePayout{At: 4, ID: "pay_2", Completed: true}, nil}, // already failed
		{collection("col_1", "c1"), []string{EventCollectionPending}},
		{collection("col_2", "c2"), []string{EventCollectionPending}},
		{&SettleCollection{At: 6, ID: "col_1", Completed: true}, []string{EventCollectionCompleted, EventAccountCredited}},
		{&SettleCollection{At: 6, ID: "col_2", Completed: false}, []string{EventCollectionFailed}},
	}
	for i, st := range steps {
		before := s.EventCount()
		s.Apply(st.cmd)
		var got []string
		for seq := before + 1; seq <= s.EventCount(); seq++ {
			ev, _ := s.EventAt(seq)
			got = append(got, ev.Type)
			if ev.ID != EventID(seq) || ev.OrgID != "org_a" || ev.At == 0 {
				t.Errorf("step %d: event %+v", i, ev)
			}
		}
		if len(got) != len(st.types) {
			t.Fatalf("step %d (%T): events %v, want %v", i, st.cmd, got, st.types)
		}
		for j := range got {
			if got[j] != st.types[j] {
				t.Fatalf("step %d (%T): events %v, want %v", i, st.cmd, got, st.types)
			}
		}
	}
	// The subject is the resource after the change.
	ev, _ := s.EventAt(3)
	if p, ok := ev.Subject.(Payout); !ok || p.ID != "pay_2" || p.Status != PayoutFailed || p.StatusMessage != "rejected" {
		t.Fatalf("payout.failed subject = %+v", ev.Subject)
	}
	ev, _ = s.EventAt(7)
	if a, ok := ev.Subject.(Account); !ok || a.Total != 10_000-101+500-8 {
		t.Fatalf("account.credited subject = %+v", ev.Subject)
	}
	page := s.Events("org_a", EventFilter{Type: EventAccountCredited}, CursorStart, 10)
	if len(page.Items) != 2 || page.Items[0].Seq != 7 {
		t.Fatalf("filtered events = %+v", page.Items)
	}
	if _, ok := s.Event("org_b", page.Items[0].ID); ok {
		t.Fatal("another organization sees the event")
	}

	// The log survives a snapshot byte for byte.
	r := restoreSame(t, s)
	if ev, ok := r.EventAt(7); !ok || ev.Subject.(Account).Number == "" {
		t.Fatalf("restored event = %+v", ev)
	}
}
