package orders

import "testing"

// isPayoutID must agree with PayoutID on every input, the ones
// an order makes and the ones it never does.
func TestIsPayoutID(t *testing.T) {
	orders := []string{"ord_abc123", "ord_", "abc", "", "ord_ord_x", "ORD_abc"}
	currencies := []string{"GHS", "ghs", "USDT", "", "KES", "ÉUR", "gHs"}
	ids := []string{"pay_ghs_abc123", "pay_usdt_abc123", "pay_ghs_", "pay_", "pay", "", "pay_ghs_ord_x", "pay_ghsabc123",
		"pay_ghs_ord_abc123", "pay_éur_abc123", "pay_kes_abc", "pay__abc123", "pay_ghs_abc1234"}
	for _, o := range orders {
		for _, c := range currencies {
			want := PayoutID(o, c)
			for _, id := range append(ids, want, want+"x", want[:len(want)-1]) {
				if got := isPayoutID(id, o, c); got != (id == want) {
					t.Errorf("isPayoutID(%q, %q, %q) = %v, want %v", id, o, c, got, id == want)
				}
			}
		}
	}
}
