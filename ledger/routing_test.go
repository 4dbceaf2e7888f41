package ledger

import (
	"bytes"
	"testing"

	"payments/ledger/kv"
)

// A payout that names its bank carries the routing number through every
// codec, in kinds of its own; one that does not encodes as it always has.
func TestPayoutRoutingNumberAppended(t *testing.T) {
	spec := PayoutSpec{Currency: "GHS", Amount: 10_000, AmountSide: SideTo, Method: "gh_ghipss", AccountNumber: "1234567890"}
	routed := spec
	routed.RoutingNumber = "040100"
	plain := &CreatePayout{At: 1, ID: "pay_ghs_1", OrgID: "org_a", ExternalReference: "p1", Spec: spec, MethodType: MethodBankTransfer, Fee: 50}
	named := *plain
	named.Spec = routed
	fx := (&TestFXPayout{At: 1, ID: "pay_ghs_2", OrgID: "org_a", ExternalReference: "p2", Spec: routed, MethodType: MethodBankTransfer,
		Fee: 5, FromCurrency: "USD", FromAmount: 1_000, ToAmount: 10_000, Rate: "10"}).Op()
	tests := []struct {
		name string
		cmd  Command
		kind Kind
	}{
		{"without: kind 5", plain, KindCreatePayout},
		{"with: kind 13", &named, KindCreatePayoutRouted},
		{"cross-currency with: kind 14", fx, KindCreateFXPayoutRouted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := EncodeBatch(nil, []Command{tt.cmd})
			dec, err := DecodeBatch(enc)
			if err != nil {
				t.Fatal(err)
			}
			if tt.cmd.Kind() != tt.kind || dec[0].Kind() != tt.kind {
				t.Fatalf("kind %d, decoded %d, want %d", tt.cmd.Kind(), dec[0].Kind(), tt.kind)
			}
			if !bytes.Equal(EncodeBatch(nil, dec), enc) {
				t.Fatal("re-encoding changed it")
			}
		})
	}
	// Without one, the command is kind 5's bytes and nothing after: the
	// routed encoding is it with the routing number appended.
	var e Encoder
	e.Str("040100")
	if a, b := EncodeBatch(nil, []Command{plain}), EncodeBatch(nil, []Command{&named}); !bytes.Equal(append(a[3:], e.Bytes()...), b[3:]) {
		t.Fatalf("routed command %x is not the plain one %x with the routing number appended", b, a)
	}

	// The stored record and the events' subjects.
	p := Payout{ID: "pay_ghs_1", OrgID: "org_a", Spec: routed, MethodType: MethodBankTransfer, Fee: 50, ExternalReference: "p1"}
	for _, withFX := range []bool{false, true} {
		if withFX {
			p.FX = &PayoutFX{PayoutID: p.ID, OrgID: p.OrgID, FromCurrency: "USD", FromAmount: 1_000, Rate: "10"}
		}
		var rec Encoder
		encodeStoredPayout(&rec, &p)
		rd := kv.NewDecoder(rec.Bytes())
		if got := decodeStoredPayout(&rd); got.Spec != p.Spec || got.Attempt != "" {
			t.Fatalf("stored record reads %+v", got.Spec)
		}
		var ev Encoder
		encodeEvent(&ev, &Event{Seq: 1, OrgID: "org_a", Type: EventPayoutCompleted, ResourceID: p.ID, Subject: p})
		d := kv.NewDecoder(ev.Bytes())
		got := decodeEvent(&d)
		if d.Err() != nil || got.Subject.(Payout).Spec != p.Spec || len(d.Rest()) != 0 {
			t.Fatalf("event subject reads %+v (%v)", got.Subject, d.Err())
		}
	}
	var withNone, format1 Encoder
	unrouted := Payout{ID: "pay_ghs_1", OrgID: "org_a", Spec: spec}
	encodeStoredPayout(&withNone, &unrouted)
	encodeByFields(&format1, &unrouted)
	format1.Bool(false)
	if !bytes.Equal(withNone.Bytes(), format1.Bytes()) {
		t.Fatal("a payout without a routing number is no longer format 1's bytes")
	}
}

// Applied, the routing number is the payout's; a retry that names another
// bank is another request.
func TestRoutedPayoutApplies(t *testing.T) {
	s := newOrgTestState(t)
	s.Apply(&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"})
	spec := PayoutSpec{Currency: "GHS", Amount: 10_000, AmountSide: SideTo, Method: "gh_ghipss", AccountNumber: "1234567890", RoutingNumber: "040100"}
	res := s.Apply(&Decided{Attempt: "a1", Op: &CreatePayout{At: 3, ID: "pay_ghs_1", OrgID: "org_a", ExternalReference: "p1", Spec: spec, MethodType: MethodBankTransfer, Fee: 50}})
	if res.Err != nil || res.Payout.Spec.RoutingNumber != "040100" {
		t.Fatalf("applied: %v %+v", res.Err, res.Payout)
	}
	if p, ok := s.PayoutByReference("org_a", "p1"); !ok || p.Spec.RoutingNumber != "040100" {
		t.Fatalf("read back: %+v", p.Spec)
	}
	other := spec
	other.RoutingNumber = "130100"
	if res := s.Apply(&CreatePayout{At: 4, ID: "pay_ghs_2", OrgID: "org_a", ExternalReference: "p1", Spec: other, MethodType: MethodBankTransfer, Fee: 50}); res.Err == nil || res.Err.Code != CodeDuplicate {
		t.Fatalf("another bank under the reference: %v, want duplicate", res.Err)
	}
}
