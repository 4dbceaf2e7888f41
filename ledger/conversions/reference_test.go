package conversions

import (
	"bytes"
	"errors"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

// An execution with an externalReference is idempotent like a payout: the
// same reference and quote answer the original conversion (Replayed), a
// different quote under it is a duplicate naming it, and nothing moves
// either way — in the batch that made it, once it is in the state store,
// and after a restart.
func TestExecuteQuoteReference(t *testing.T) {
	s := newLedger(t)
	for _, id := range []string{"qte_1", "qte_2", "qte_3"} {
		if r := s.Apply(quoteCmd(id, 10, 1_000, 63)); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	exec := func(quote, conv, ref string) *ExecuteQuote {
		return &ExecuteQuote{At: 20, OrgID: "org_a", QuoteID: quote, ConversionID: conv, ExternalReference: ref}
	}
	// The first execution and a retry in the same log entry: the retry
	// finds the reference among the batch's pending lookups.
	rs := s.ApplyBatch(exec("qte_1", "conv_1", "fx-1"), exec("qte_1", "conv_1b", "fx-1"), exec("qte_2", "conv_1c", "fx-1"))
	if rs[0].Err != nil || rs[0].Replayed || Of(rs[0]).ExternalReference != "fx-1" {
		t.Fatalf("first: %+v", rs[0])
	}
	if rs[1].Err != nil || !rs[1].Replayed || Of(rs[1]).ID != "conv_1" {
		t.Fatalf("retry in the batch: %+v", rs[1])
	}
	if !errors.Is(rs[2].Err, ledger.ErrDuplicate) || rs[2].Err.ExistingID != "conv_1" {
		t.Fatalf("another quote in the batch: %+v", rs[2])
	}

	check := func(t *testing.T, s *ledgertest.State) {
		t.Helper()
		cases := []struct {
			name     string
			cmd      *ExecuteQuote
			replayed bool
			want     error
			existing string
		}{
			{"same reference, same quote", exec("qte_1", "conv_9", "fx-1"), true, nil, ""},
			{"same reference, another quote", exec("qte_2", "conv_9", "fx-1"), false, ledger.ErrDuplicate, "conv_1"},
			{"same reference, an unknown quote", exec("qte_none", "conv_9", "fx-1"), false, ledger.ErrNotFound, ""},
			{"another reference, the executed quote", exec("qte_1", "conv_9", "fx-2"), false, &ledger.Error{Code: ledger.CodeBadRequest}, "conv_1"},
			{"no reference, the executed quote", exec("qte_1", "conv_9", ""), false, &ledger.Error{Code: ledger.CodeBadRequest}, "conv_1"},
			{"another organization's reference space", &ExecuteQuote{At: 20, OrgID: "org_b", QuoteID: "qte_1", ConversionID: "conv_9", ExternalReference: "fx-1"}, false, ledger.ErrNotFound, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ledgertest.ApplyAnswered(t, s, tc.cmd)
				switch {
				case tc.want == nil && (r.Err != nil || r.Replayed != tc.replayed || Of(r).ID != "conv_1" || Of(r).ExternalReference != "fx-1"):
					t.Fatalf("got %+v, want conv_1 replayed", r)
				case tc.want != nil && (!errors.Is(r.Err, tc.want) || r.Err.ExistingID != tc.existing):
					t.Fatalf("got %v, want %v naming %q", r.Err, tc.want, tc.existing)
				}
			})
		}
		if c, ok := ByReference(s.Reader, "org_a", "fx-1"); !ok || c.ID != "conv_1" || c.QuoteID != "qte_1" {
			t.Fatalf("by reference: %+v %v", c, ok)
		}
		if _, ok := ByReference(s.Reader, "org_b", "fx-1"); ok {
			t.Fatal("another organization's reference found")
		}
		if c, _ := Get(s.Reader, "org_a", "conv_1"); c.ExternalReference != "fx-1" {
			t.Fatalf("stored conversion %+v", c)
		}
	}
	// The conversion closed when it was made: it is only in the state
	// store now, found through its lookup key.
	if n := feature.Of(s.Ledger()).conversions.InMemory(); n != 0 {
		t.Fatalf("%d conversions in memory", n)
	}
	t.Run("from the state store", func(t *testing.T) { check(t, s) })

	// A fresh reference still executes; another quote under it after that
	// is a duplicate too.
	if r := s.Apply(exec("qte_3", "conv_3", "fx-3")); r.Err != nil || r.Replayed || Of(r).ExternalReference != "fx-3" {
		t.Fatalf("fresh reference: %+v", r)
	}

	restarted, cold := s.RestartCold()
	t.Run("after a restart", func(t *testing.T) { check(t, restarted) })
	// Before the lookup filter fills, the state store answers alone.
	if c, ok := ByReference(cold, "org_a", "fx-3"); !ok || c.ID != "conv_3" {
		t.Fatalf("before the filter fills: %+v %v", c, ok)
	}
	if err := restarted.Check(); err != nil {
		t.Fatal(err)
	}
}

// The conversion.completed event carries the reference: its subject is
// the conversion with its reference, and a conversion without one keeps
// the original subject layout.
func TestConversionEventCarriesReference(t *testing.T) {
	s := newLedger(t)
	s.Apply(quoteCmd("qte_1", 10, 1_000, 63))
	s.Apply(quoteCmd("qte_2", 10, 1_000, 63))
	s.Apply(&ExecuteQuote{At: 20, OrgID: "org_a", QuoteID: "qte_1", ConversionID: "conv_1", ExternalReference: "fx-1"})
	s.Apply(&ExecuteQuote{At: 20, OrgID: "org_a", QuoteID: "qte_2", ConversionID: "conv_2"})
	refs := map[string]string{}
	kinds := map[string]ledger.SubjectKind{}
	for _, ev := range s.Events("org_a", ledger.EventFilter{}, ledger.CursorStart, 100).Items {
		if ev.Type != ledger.EventConversionCompleted {
			continue
		}
		c := ev.Subject.(Conversion)
		refs[c.ID], kinds[c.ID] = c.ExternalReference, c.SubjectKind()
	}
	if refs["conv_1"] != "fx-1" || kinds["conv_1"] != SubjectRef || refs["conv_2"] != "" || kinds["conv_2"] != Subject {
		t.Fatalf("event subjects: %v %v", refs, kinds)
	}
}

// The command and record layouts are extended, never changed: an execution
// without a reference is still KindExecuteQuote, byte for byte as before;
// one with a reference is KindExecuteQuoteRef, that layout with the
// reference appended; a stored conversion without a reference is the
// format 1 record, and one with a reference has it appended.
func TestConversionReferenceCodecs(t *testing.T) {
	plain := &ExecuteQuote{At: 6, OrgID: "org_a", QuoteID: "qte_1", ConversionID: "conv_1"}
	withRef := *plain
	withRef.ExternalReference = "fx-1"
	// KindExecuteQuote's layout, written out by hand: a log entry of the
	// first build.
	old := ledgertest.CommandEntry(KindExecuteQuote).Varint(6).Str("org_a").Str("qte_1").Str("conv_1")
	if got := ledger.EncodeBatch(nil, []ledger.Command{plain}); !bytes.Equal(got, old) {
		t.Fatalf("an execution without a reference encodes as %x, want %x", got, old)
	}
	oldPlusRef := append(bytes.Clone(old), 4, 'f', 'x', '-', '1')
	oldPlusRef[2] = uint8(KindExecuteQuoteRef)
	if got := ledger.EncodeBatch(nil, []ledger.Command{&withRef}); !bytes.Equal(got, oldPlusRef) {
		t.Fatalf("an execution with a reference encodes as %x, want %x", got, oldPlusRef)
	}
	ledgertest.RoundTrip(t, plain, &withRef)

	conv := Conversion{ID: "conv_1", OrgID: "org_a", QuoteID: "qte_1", FromCurrency: "GHS", FromAmount: 5,
		ToCurrency: "USD", ToAmount: 1, Rate: "0.2", Status: Completed, CreatedAt: 1, CompletedAt: 1, UpdatedAt: 1}
	// The format 1 record, written out by hand.
	first := ledgertest.Layout(nil).Str(conv.ID).Str(conv.OrgID).Str(conv.QuoteID).Str(conv.FromAccount).Str(conv.FromCurrency).
		Varint(int64(conv.FromAmount)).Str(conv.ToAccount).Str(conv.ToCurrency).Varint(int64(conv.ToAmount)).
		Str(conv.Rate).Byte(uint8(conv.Status)).Str(conv.StatusMessage).
		Varint(conv.CreatedAt).Varint(conv.CompletedAt).Varint(conv.UpdatedAt)
	if stored := conversionKind.Encode(&conv); !bytes.Equal(first, stored) {
		t.Fatalf("a conversion without a reference is stored as %x, not as format 1 wrote it: %x", stored, first)
	}
	if got, err := conversionKind.Decode(first); err != nil || got != conv {
		t.Fatalf("a format 1 record read as %+v, %v", got, err)
	}
	conv.ExternalReference = "fx-1"
	stored := conversionKind.Encode(&conv)
	if !bytes.Equal(stored, append(bytes.Clone(first), 4, 'f', 'x', '-', '1')) {
		t.Fatalf("the reference is not appended: %x", stored)
	}
	if got, err := conversionKind.Decode(stored); err != nil || got != conv {
		t.Fatalf("read back as %+v, %v", got, err)
	}
}
