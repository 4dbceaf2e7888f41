package money

import (
	"strings"
	"testing"

	"payments/http/core"
)

// Deposits name the stack's networks: test networks on the sandbox.
func TestDepositNetworksPerStack(t *testing.T) {
	for _, live := range []bool{false, true} {
		for _, asset := range depositAssets(core.New(core.Config{Live: live})) {
			for _, ch := range asset.Chains {
				test := strings.Contains(ch.Network, "Testnet") || strings.Contains(ch.Network, "Sepolia") || strings.Contains(ch.Network, "Devnet")
				if test == live {
					t.Errorf("live=%v: %s on %s", live, ch.Code, ch.Network)
				}
			}
		}
	}
}
