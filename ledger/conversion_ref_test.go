package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// An execution with an externalReference is idempotent like a payout: the
// same reference and quote answer the original conversion (Replayed), a
// different quote under it is a duplicate naming it, and nothing moves
// either way — in the batch that made it, once it is in the state store,
// and after a restart.
func TestExecuteQuoteReference(t *testing.T) {
	s := newConversionState(t)
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
	rs := s.applyBatch(exec("qte_1", "conv_1", "fx-1"), exec("qte_1", "conv_1b", "fx-1"), exec("qte_2", "conv_1c", "fx-1"))
	if rs[0].Err != nil || rs[0].Replayed || rs[0].Conversion.ExternalReference != "fx-1" {
		t.Fatalf("first: %+v", rs[0])
	}
	if rs[1].Err != nil || !rs[1].Replayed || rs[1].Conversion.ID != "conv_1" {
		t.Fatalf("retry in the batch: %+v", rs[1])
	}
	if !errors.Is(rs[2].Err, ErrDuplicate) || rs[2].Err.ExistingID != "conv_1" {
		t.Fatalf("another quote in the batch: %+v", rs[2])
	}

	check := func(t *testing.T, s *testState) {
		t.Helper()
		cases := []struct {
			name     string
			cmd      *ExecuteQuote
			replayed bool
			want     error
			existing string
		}{
			{"same reference, same quote", exec("qte_1", "conv_9", "fx-1"), true, nil, ""},
			{"same reference, another quote", exec("qte_2", "conv_9", "fx-1"), false, ErrDuplicate, "conv_1"},
			{"same reference, an unknown quote", exec("qte_none", "conv_9", "fx-1"), false, ErrNotFound, ""},
			{"another reference, the executed quote", exec("qte_1", "conv_9", "fx-2"), false, &Error{Code: CodeBadRequest}, "conv_1"},
			{"no reference, the executed quote", exec("qte_1", "conv_9", ""), false, &Error{Code: CodeBadRequest}, "conv_1"},
			{"another organization's reference space", &ExecuteQuote{At: 20, OrgID: "org_b", QuoteID: "qte_1", ConversionID: "conv_9", ExternalReference: "fx-1"}, false, ErrNotFound, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := encodeSnapshot(t, s)
				events := s.EventCount()
				r := s.Apply(tc.cmd)
				switch {
				case tc.want == nil && (r.Err != nil || r.Replayed != tc.replayed || r.Conversion.ID != "conv_1" || r.Conversion.ExternalReference != "fx-1"):
					t.Fatalf("got %+v, want conv_1 replayed", r)
				case tc.want != nil && (!errors.Is(r.Err, tc.want) || r.Err.ExistingID != tc.existing):
					t.Fatalf("got %v, want %v naming %q", r.Err, tc.want, tc.existing)
				}
				if s.EventCount() != events {
					t.Fatal("an answered retry emitted an event")
				}
				if !bytes.Equal(encodeSnapshot(t, s), before) {
					t.Fatal("an answered retry changed the state")
				}
			})
		}
		if c, ok := s.ConversionByReference("org_a", "fx-1"); !ok || c.ID != "conv_1" || c.QuoteID != "qte_1" {
			t.Fatalf("by reference: %+v %v", c, ok)
		}
		if _, ok := s.ConversionByReference("org_b", "fx-1"); ok {
			t.Fatal("another organization's reference found")
		}
		if c, _ := s.Conversion("org_a", "conv_1"); c.ExternalReference != "fx-1" {
			t.Fatalf("stored conversion %+v", c)
		}
	}
	// The conversion closed when it was made: it is only in the state
	// store now, found through its lookup key.
	if n := len(s.st.fx.conversions.rows); n != 0 {
		t.Fatalf("%d conversions in memory", n)
	}
	t.Run("from the state store", func(t *testing.T) { check(t, s) })

	// A fresh reference still executes; another quote under it after that
	// is a duplicate too.
	if r := s.Apply(exec("qte_3", "conv_3", "fx-3")); r.Err != nil || r.Replayed || r.Conversion.ExternalReference != "fx-3" {
		t.Fatalf("fresh reference: %+v", r)
	}

	restarted, cold := restartCold(t, s)
	t.Run("after a restart", func(t *testing.T) { check(t, restarted) })
	// Before the lookup filter fills, the state store answers alone.
	if c, ok := cold.ConversionByReference("org_a", "fx-3"); !ok || c.ID != "conv_3" {
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
	s := newConversionState(t)
	s.Apply(quoteCmd("qte_1", 10, 1_000, 63))
	s.Apply(quoteCmd("qte_2", 10, 1_000, 63))
	s.Apply(&ExecuteQuote{At: 20, OrgID: "org_a", QuoteID: "qte_1", ConversionID: "conv_1", ExternalReference: "fx-1"})
	s.Apply(&ExecuteQuote{At: 20, OrgID: "org_a", QuoteID: "qte_2", ConversionID: "conv_2"})
	refs := map[string]string{}
	kinds := map[string]SubjectKind{}
	for _, ev := range s.Events("org_a", EventFilter{}, CursorStart, 100).Items {
		if ev.Type != EventConversionCompleted {
			continue
		}
		c := ev.Subject.(Conversion)
		refs[c.ID], kinds[c.ID] = c.ExternalReference, c.SubjectKind()
	}
	if refs["conv_1"] != "fx-1" || kinds["conv_1"] != SubjectConversionRef || refs["conv_2"] != "" || kinds["conv_2"] != SubjectConversion {
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
	var old Encoder
	old.u8(batchVersion)
	old.uvarint(1)
	old.u8(uint8(KindExecuteQuote))
	old.varint(6)
	old.str("org_a")
	old.str("qte_1")
	old.str("conv_1")
	if got := EncodeBatch(nil, []Command{plain}); !bytes.Equal(got, old.buf) {
		t.Fatalf("an execution without a reference encodes as %x, want %x", got, old.buf)
	}
	oldPlusRef := append(bytes.Clone(old.buf), 4, 'f', 'x', '-', '1')
	oldPlusRef[2] = uint8(KindExecuteQuoteRef)
	if got := EncodeBatch(nil, []Command{&withRef}); !bytes.Equal(got, oldPlusRef) {
		t.Fatalf("an execution with a reference encodes as %x, want %x", got, oldPlusRef)
	}
	for _, c := range []*ExecuteQuote{plain, &withRef} {
		dec, err := DecodeBatch(EncodeBatch(nil, []Command{c}))
		if err != nil || fmt.Sprintf("%+v", dec[0]) != fmt.Sprintf("%+v", c) {
			t.Fatalf("%+v decoded as %+v, %v", c, dec, err)
		}
	}

	conv := Conversion{ID: "conv_1", OrgID: "org_a", QuoteID: "qte_1", FromCurrency: "GHS", FromAmount: 5,
		ToCurrency: "USD", ToAmount: 1, Rate: "0.2", Status: ConversionCompleted, CreatedAt: 1, CompletedAt: 1, UpdatedAt: 1}
	var first, stored Encoder
	encodeByFields(&first, &conv)
	encodeStoredConversion(&stored, &conv)
	if !bytes.Equal(first.buf, stored.buf) {
		t.Fatal("a conversion without a reference is not stored as format 1 wrote it")
	}
	d := Decoder{buf: first.buf}
	if got := decodeStoredConversion(&d); d.err != nil || len(d.buf) != 0 || got != conv {
		t.Fatalf("a format 1 record read as %+v, %v", got, d.err)
	}
	conv.ExternalReference = "fx-1"
	stored.buf = stored.buf[:0]
	encodeStoredConversion(&stored, &conv)
	if !bytes.Equal(stored.buf, append(bytes.Clone(first.buf), 4, 'f', 'x', '-', '1')) {
		t.Fatalf("the reference is not appended: %x", stored.buf)
	}
	d = Decoder{buf: stored.buf}
	if got := decodeStoredConversion(&d); d.err != nil || len(d.buf) != 0 || got != conv {
		t.Fatalf("read back as %+v, %v", got, d.err)
	}
}
