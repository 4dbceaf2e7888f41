package rails

import (
	"testing"

	"payments/ledger"
	"payments/ledger/orders"
)

// Every network in the catalogue gets deposit addresses that the chain's
// own address rules accept (checksums and all), and no two orders share
// one.
func TestSandboxDepositAddresses(t *testing.T) {
	for _, m := range DefaultCatalogue().Networks() {
		seen := map[string]bool{}
		for range 50 {
			in, err := SandboxDepositInstructions(m, "Org", "")
			if err != nil {
				t.Fatalf("%s: %v", m.Code, err)
			}
			if in.Type != orders.InstructionsCrypto || in.Chain != ChainName(m.Chain) || seen[in.Address] {
				t.Fatalf("%s: %+v (repeated: %v)", m.Code, in, seen[in.Address])
			}
			seen[in.Address] = true
			if err := ValidateAddress(m.Chain, in.Address); err != nil {
				t.Fatalf("%s: %s: %v", m.Code, in.Address, err)
			}
			if m.Chain == "stellar" {
				if err := ValidateTag(m.Chain, in.Tag); err != nil || len(in.Tag) != 10 || in.Tag[0] == '0' {
					t.Fatalf("stellar memo %q: %v", in.Tag, err)
				}
			} else if in.Tag != "" {
				t.Fatalf("%s: a memo on a chain without memos: %q", m.Code, in.Tag)
			}
		}
	}
}

func TestSandboxDepositBankAndMobile(t *testing.T) {
	c := DefaultCatalogue()
	bank, _ := c.Method("ng_nip")
	in, err := SandboxDepositInstructions(bank, "Golden Org", "")
	if err != nil || in.Type != orders.InstructionsVirtualAccount || len(in.AccountNumber) != 10 ||
		in.AccountNumber[:2] != "98" || in.AccountName != "Golden Org" || in.Bank == "" {
		t.Fatalf("virtual account %+v %v", in, err)
	}
	mm, _ := c.Method("gh_mtn")
	in, err = SandboxDepositInstructions(mm, "Golden Org", "233241234567")
	if err != nil || in.Type != orders.InstructionsMobileMoney || in.AccountNumber != "233241234567" {
		t.Fatalf("mobile money %+v %v", in, err)
	}
	if _, err := SandboxDepositInstructions(Method{Code: "x", Type: ledger.MethodCrypto, Chain: "nochain"}, "", ""); err == nil {
		t.Fatal("an unknown chain got an address")
	}
}
