package ledger

import "testing"

// A from.amount fixes everything that moves: principal + fee is exactly it,
// with the fee the method's fee of the principal, or one minor unit more
// where the fee's rounding skips the total.
func TestSplitPayoutDebit(t *testing.T) {
	cases := []struct {
		name          string
		methodType    MethodType
		total         Minor
		principal     Minor
		fee           Minor
		feeIsExactFee bool
	}{
		{"mobile money 1%: 101.00 is 100.00 and 1.00", MethodMobileMoney, 10100, 10000, 100, true},
		{"mobile money 1%: 100.00 is 99.01 and 0.99", MethodMobileMoney, 10000, 9901, 99, true},
		{"bank 0.5%: 1005.00 is 1000.00 and 5.00", MethodBankTransfer, 100500, 100000, 500, true},
		{"crypto 0.2%: 1.00 is 1.00 and no fee", MethodCrypto, 100, 100, 0, true},
		{"one minor unit", MethodMobileMoney, 1, 1, 0, true},
		{"a skipped total: the fee takes the odd unit", MethodMobileMoney, 151, 149, 2, false},
		{"the largest amount, no overflow", MethodMobileMoney, AmountMax, 990099009900990, 9900990099010, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, f := splitPayoutDebit(c.methodType, c.total)
			if p != c.principal || f != c.fee {
				t.Fatalf("splitPayoutDebit(%s, %d) = %d + %d, want %d + %d", c.methodType, c.total, p, f, c.principal, c.fee)
			}
			if p+f != c.total {
				t.Fatalf("principal + fee = %d, want the total %d", p+f, c.total)
			}
			if exact := f == payoutFee(c.methodType, p); exact != c.feeIsExactFee {
				t.Fatalf("fee %d against payoutFee(%d) = %d: exact %v, want %v", f, p, payoutFee(c.methodType, p), exact, c.feeIsExactFee)
			}
		})
	}
	// Every total up to 100.00 splits exactly, and no larger principal fits.
	for _, mt := range []MethodType{MethodMobileMoney, MethodBankTransfer, MethodCrypto} {
		for total := Minor(1); total <= 10_000; total++ {
			p, f := splitPayoutDebit(mt, total)
			if p+f != total || f < payoutFee(mt, p) || f > payoutFee(mt, p)+1 {
				t.Fatalf("%s %d: %d + %d", mt, total, p, f)
			}
			if p+1+payoutFee(mt, p+1) <= total {
				t.Fatalf("%s %d: principal %d is not the largest", mt, total, p)
			}
		}
	}
}
