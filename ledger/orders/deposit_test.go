package orders

import (
	"bytes"
	"errors"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

// A deposit into an order under an externalReference is idempotent like
// the other deposit simulations: the same reference, order, amount and
// outcome answer the original deposit (Replayed) even once the order has
// moved on, anything else under the reference is a duplicate naming the
// order, and nothing moves either way — in the batch that made it, once
// the record is only in the state store, and after a restart.
func TestDepositReference(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(bankOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	f.Must(cryptoOrder("ord_2", "inv-2", 10), ledger.EventOrderAwaitingFunds)
	dep := func(order, col, ref string, amount ledger.Minor, outcome DepositOutcome) *DepositCommand {
		return &DepositCommand{At: 20, OrgID: "org_a", OrderID: order, CollectionID: col, Amount: amount,
			Outcome: outcome, ExternalReference: ref}
	}

	// The first deposit, its retry and a changed retry in one log entry:
	// the retries find the reference among the batch's pending lookups.
	events := f.S.EventCount()
	rs := f.S.ApplyBatch(dep("ord_1", "col_1", "dep-1", 0, DepositConfirmed),
		dep("ord_1", "col_1b", "dep-1", 0, DepositConfirmed),
		dep("ord_1", "col_1c", "dep-1", 501_00, DepositConfirmed))
	if rs[0].Err != nil || rs[0].Replayed || DepositOf(rs[0]) == nil || rs[0].Collection == nil || rs[0].Collection.ID != "col_1" {
		t.Fatalf("first: %+v", rs[0])
	}
	if d := *DepositOf(rs[0]); d.ID != "col_1" || d.OrderID != "ord_1" || d.Amount != 505_00 || d.Requested != 0 || d.Outcome != DepositConfirmed {
		t.Fatalf("recorded deposit %+v", d)
	}
	if rs[1].Err != nil || !rs[1].Replayed || DepositOf(rs[1]).ID != "col_1" || rs[1].Collection != nil || Of(rs[1]).ID != "ord_1" {
		t.Fatalf("retry in the batch: %+v", rs[1])
	}
	if !errors.Is(rs[2].Err, ledger.ErrDuplicate) || rs[2].Err.ExistingID != "ord_1" {
		t.Fatalf("changed retry in the batch: %+v", rs[2])
	}
	if n := f.S.EventCount() - events; n != 4 {
		t.Fatalf("the batch emitted %d events, want the one deposit's 4", n)
	}
	if err := f.S.Check(); err != nil {
		t.Fatal(err)
	}
	// A deposit the order refuses records nothing: its reference stays
	// free for a deposit that is made.
	f.Refuse(dep("ord_1", "col_x", "dep-2", 0, DepositConfirmed), &ledger.Error{Code: ledger.CodeBadRequest})
	if _, ok := DepositByReference(f.S.Reader, "org_a", "dep-2"); ok {
		t.Fatal("a refused deposit recorded its reference")
	}
	r := f.Must(dep("ord_2", "col_2", "dep-2", 0, DepositUnconfirmed), ledger.EventOrderAwaitingConfirm)
	if DepositOf(r).Amount != 101_000000 || DepositOf(r).Outcome != DepositUnconfirmed {
		t.Fatalf("unconfirmed deposit %+v", DepositOf(r))
	}
	f.Must(dep("ord_2", "col_3", "dep-3", 0, DepositConfirmed),
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing)

	check := func(t *testing.T, s *ledgertest.State) {
		t.Helper()
		cases := []struct {
			name     string
			cmd      *DepositCommand
			replayed string // the deposit answered, for a replay
			want     error
			existing string
		}{
			{"same reference and body, the order paid", dep("ord_1", "col_9", "dep-1", 0, DepositConfirmed), "col_1", nil, ""},
			{"same reference and body, unconfirmed since confirmed", dep("ord_2", "col_9", "dep-2", 0, DepositUnconfirmed), "col_2", nil, ""},
			{"same reference, another amount", dep("ord_1", "col_9", "dep-1", 500_00, DepositConfirmed), "", ledger.ErrDuplicate, "ord_1"},
			{"same reference, another outcome", dep("ord_1", "col_9", "dep-1", 0, DepositRejected), "", ledger.ErrDuplicate, "ord_1"},
			{"same reference, another order", dep("ord_2", "col_9", "dep-1", 0, DepositConfirmed), "", ledger.ErrDuplicate, "ord_1"},
			{"same reference, an unknown order", dep("ord_none", "col_9", "dep-1", 0, DepositConfirmed), "", ledger.ErrNotFound, ""},
			{"another organization", &DepositCommand{At: 20, OrgID: "org_b", OrderID: "ord_1", CollectionID: "col_9", Outcome: DepositConfirmed, ExternalReference: "dep-1"}, "", ledger.ErrNotFound, ""},
			{"another reference, the paid order", dep("ord_1", "col_9", "dep-9", 0, DepositConfirmed), "", &ledger.Error{Code: ledger.CodeBadRequest}, ""},
			{"no reference, the paid order", dep("ord_1", "col_9", "", 0, DepositConfirmed), "", &ledger.Error{Code: ledger.CodeBadRequest}, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ledgertest.ApplyAnswered(t, s, tc.cmd)
				switch {
				case tc.want == nil && (r.Err != nil || !r.Replayed || DepositOf(r) == nil || DepositOf(r).ID != tc.replayed ||
					DepositOf(r).ExternalReference != tc.cmd.ExternalReference || Of(r) == nil || Of(r).ID != tc.cmd.OrderID):
					t.Fatalf("got %+v, want %s replayed", r, tc.replayed)
				case tc.want != nil && (!errors.Is(r.Err, tc.want) || r.Err.ExistingID != tc.existing):
					t.Fatalf("got %v, want %v naming %q", r.Err, tc.want, tc.existing)
				}
			})
		}
		if d, ok := DepositByReference(s.Reader, "org_a", "dep-2"); !ok || d.ID != "col_2" || d.OrderID != "ord_2" || d.Amount != 101_000000 {
			t.Fatalf("by reference: %+v %v", d, ok)
		}
		if _, ok := DepositByReference(s.Reader, "org_b", "dep-1"); ok {
			t.Fatal("another organization's reference found")
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
	// The records never change: they left memory with their batches and
	// are found through their lookup keys in the state store.
	if n := feature.Of(f.S.Ledger()).deposits.InMemory(); n != 0 {
		t.Fatalf("%d order deposits in memory", n)
	}
	t.Run("from the state store", func(t *testing.T) { check(t, f.S) })

	restarted, cold := f.S.RestartCold()
	t.Run("after a restart", func(t *testing.T) { check(t, restarted) })
	// Before the lookup filter fills, the state store answers alone.
	if d, ok := DepositByReference(cold, "org_a", "dep-3"); !ok || d.ID != "col_3" {
		t.Fatalf("before the filter fills: %+v %v", d, ok)
	}
	checkRoundTrip(t, restarted)
}

// The command layout is extended, never changed: a deposit without a
// reference is still KindDeposit, byte for byte as before; one with
// a reference is KindDepositRef, that layout with the reference
// appended. The record reads back as written.
func TestDepositReferenceCodecs(t *testing.T) {
	plain := &DepositCommand{At: 6, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 7, Outcome: DepositRejected}
	withRef := *plain
	withRef.ExternalReference = "d-1"
	// KindDeposit's layout, written out by hand: a log entry of a
	// build from before the reference.
	old := ledgertest.CommandEntry(KindDeposit).Varint(6).Str("org_a").Str("ord_1").Str("col_1").Varint(7).Byte(uint8(DepositRejected))
	if got := ledger.EncodeBatch(nil, []ledger.Command{plain}); !bytes.Equal(got, old) {
		t.Fatalf("a deposit without a reference encodes as %x, want %x", got, old)
	}
	oldPlusRef := append(bytes.Clone(old), 3, 'd', '-', '1')
	oldPlusRef[2] = uint8(KindDepositRef)
	if got := ledger.EncodeBatch(nil, []ledger.Command{&withRef}); !bytes.Equal(got, oldPlusRef) {
		t.Fatalf("a deposit with a reference encodes as %x, want %x", got, oldPlusRef)
	}
	// Kind 34 with an empty reference is no entry any build writes (it
	// would re-encode as kind 33): refused, not read.
	emptyRef := append(bytes.Clone(old), 0)
	emptyRef[2] = uint8(KindDepositRef)
	if _, err := ledger.DecodeBatch(emptyRef); err == nil {
		t.Fatal("a deposit with an empty appended reference decoded")
	}
	ledgertest.RoundTrip(t, plain, &withRef)

	rec := Deposit{ID: "col_1", OrgID: "org_a", OrderID: "ord_1", ExternalReference: "d-1",
		Requested: 0, Outcome: DepositUnconfirmed, Amount: 5, CreatedAt: 9}
	if got, err := depositKind.Decode(depositKind.Encode(&rec)); err != nil || got != rec {
		t.Fatalf("record read back as %+v, %v", got, err)
	}
}
