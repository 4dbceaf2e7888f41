package ledger

import (
	"bytes"
	"testing"

	"payments/ledger/kv"
)

// Method types are frozen: each is stored as the string it was stored as
// before the type existed, so every command and record encodes byte for
// byte as it did, and it reads back as the same type; the API names are
// the reference's.
func TestMethodTypesFrozen(t *testing.T) {
	tests := []struct {
		t       MethodType
		stored  string
		apiName string
	}{
		{MethodTypeNone, "", ""},
		{MethodMobileMoney, "mobile_money", "mobile_money"},
		{MethodBankTransfer, "bank", "bank_transfer"},
		{MethodCrypto, "crypto", "crypto"},
		{MethodWallet, "wallet", "wallet"},
		{methodVirtualAccount, "virtual_account", "bank_transfer"},
	}
	for _, tt := range tests {
		if tt.t.String() != tt.stored || tt.t.APIName() != tt.apiName {
			t.Errorf("%d: stored %q, API %q; want %q, %q", tt.t, tt.t.String(), tt.t.APIName(), tt.stored, tt.apiName)
		}
		var as, typed Encoder
		as.Str(tt.stored)
		encodeMethodType(&typed, tt.t)
		if !bytes.Equal(as.Bytes(), typed.Bytes()) {
			t.Errorf("%s encodes as %x, the string it replaces as %x", tt.stored, typed.Bytes(), as.Bytes())
		}
		d := kv.NewDecoder(typed.Bytes())
		if got := decodeMethodType(&d); got != tt.t || d.Err() != nil || len(d.Rest()) != 0 {
			t.Errorf("%q decodes as %d (%v)", tt.stored, got, d.Err())
		}
		if got, ok := MethodTypeOf(tt.stored); !ok || got != tt.t {
			t.Errorf("MethodTypeOf(%q) = %d, %v", tt.stored, got, ok)
		}
		if got, ok := ParseMethodType(tt.apiName); tt.t.Valid() && (!ok || got != tt.t) {
			t.Errorf("ParseMethodType(%q) = %d, %v", tt.apiName, got, ok)
		}
	}
	var e Encoder
	e.Str("cash")
	d := kv.NewDecoder(e.Bytes())
	if decodeMethodType(&d); d.Err() == nil {
		t.Fatal("an unknown method type decoded")
	}
}

// A fee schedule's split of a total is exact: principal + fee is the
// total, the fee the schedule's on the principal (or one minor unit more
// where rounding skips the total), and no larger principal fits.
func TestFeeScheduleSplit(t *testing.T) {
	for _, bps := range []int64{0, 20, 50, 100, 150, 10_000} {
		s := FeeSchedule{BasisPoints: bps}
		for total := Minor(1); total <= 5_000; total++ {
			p, f := s.Split(total)
			if p+f != total || f < s.Fee(p) || f > s.Fee(p)+1 || p+1+s.Fee(p+1) <= total {
				t.Fatalf("%d bps: %d splits as %d + %d", bps, total, p, f)
			}
		}
	}
}
