package rails

import (
	"bytes"
	"strings"
	"testing"
)

// Every generated address passes ValidateAddress for its chain, is stable
// per seed, and differs between seeds.
func TestDepositAddressesValidate(t *testing.T) {
	seeds := [][]byte{[]byte("organization 1\x00"), []byte("organization 2\x00"), {}, bytes.Repeat([]byte{0xff}, 300)}
	for _, chain := range []string{"ethereum", "base", "tron", "solana", "stellar"} {
		seen := map[string]bool{}
		for _, seed := range seeds {
			addr, err := DepositAddress(chain, seed)
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateAddress(chain, addr); err != nil {
				t.Fatalf("%s address %s: %v", chain, addr, err)
			}
			if again, _ := DepositAddress(chain, seed); again != addr {
				t.Fatalf("%s: not deterministic", chain)
			}
			if seen[addr] {
				t.Fatalf("%s: two seeds gave %s", chain, addr)
			}
			seen[addr] = true
		}
	}
	if _, err := DepositAddress("bitcoin", nil); err == nil {
		t.Fatal("a chain without a generator got an address")
	}
}

func TestDepositTagsAndReferences(t *testing.T) {
	tag := DepositTag([]byte("x"))
	if len(tag) != 10 || tag != DepositTag([]byte("x")) || tag == DepositTag([]byte("y")) {
		t.Fatalf("tag %q", tag)
	}
	if err := ValidateTag("stellar", tag); err != nil {
		t.Fatal(err)
	}
	if s := SandboxSessionID([]byte("x")); len(s) != 30 || strings.Trim(s, "0123456789") != "" {
		t.Fatalf("session id %q", s)
	}
	if h := SandboxTxHash("ethereum", []byte("x")); len(h) != 66 || h[:2] != "0x" {
		t.Fatalf("evm hash %q", h)
	}
	if b, ok := base58Decode(SandboxTxHash("solana", []byte("x"))); !ok || len(b) != 64 {
		t.Fatalf("solana signature decodes to %d bytes", len(b))
	}
	if h := SandboxTxHash("tron", []byte("x")); len(h) != 64 {
		t.Fatalf("tron hash %q", h)
	}
}

func TestDepositCatalogue(t *testing.T) {
	c := DefaultCatalogue()
	if bank, ok := c.VirtualAccountBank("NGN"); !ok || bank != "Sandbox Bank Nigeria" {
		t.Fatalf("NGN bank = %q %v", bank, ok)
	}
	if _, ok := c.VirtualAccountBank("UGX"); ok {
		t.Fatal("UGX has no bank rail, yet has virtual accounts")
	}
	if got := strings.Join(c.VirtualAccountCurrencies(), ","); got != "GHS,KES,NGN,ZAR" {
		t.Fatalf("virtual account currencies = %s", got)
	}
	if m, ok := c.DepositNetwork("USDC", "solana"); !ok || m.Code != "usdc_solana" {
		t.Fatalf("USDC on solana = %+v %v", m, ok)
	}
	if _, ok := c.DepositNetwork("USDC", "tron"); ok {
		t.Fatal("USDC on tron is not in the catalogue")
	}
	// Every network that takes collections takes deposits to a generated
	// address.
	for _, m := range c.Networks() {
		if !m.Collections || m.Status != "operational" {
			continue
		}
		if _, ok := c.DepositNetwork(m.Currency, m.Chain); !ok {
			t.Fatalf("%s takes collections but no deposits", m.Code)
		}
	}
	if ch, ok := c.ParseChain("SoLaNa"); !ok || ch.Code != "solana" || ChainName(ch.Code) != "Solana" {
		t.Fatalf("ParseChain = %+v %v", ch, ok)
	}
	if _, ok := c.ParseChain("Dogecoin"); ok {
		t.Fatal("an unknown chain parsed")
	}
}
