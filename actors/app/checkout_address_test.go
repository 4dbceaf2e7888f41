package app

import (
	"testing"

	"payments/rails"
)

// A stablecoin checkout session quotes a real address of its network's
// chain: one the chain's own checksum rules accept, and one per session.
func TestCheckoutDepositAddressesAreValid(t *testing.T) {
	for _, m := range rails.DefaultCatalogue().Networks() {
		a, err := sandboxDepositAddress(m.Chain, "cs_one")
		if err != nil {
			t.Fatalf("%s: %v", m.Code, err)
		}
		if err := rails.ValidateAddress(m.Chain, a); err != nil {
			t.Errorf("%s: session address %s is not valid on %s: %v", m.Code, a, m.Chain, err)
		}
		if b, _ := sandboxDepositAddress(m.Chain, "cs_two"); b == a {
			t.Errorf("%s: two sessions share address %s", m.Code, a)
		}
	}
}
