package rails

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"payments/ledger"
)

func base58Decode(t *testing.T, s string) []byte {
	t.Helper()
	n := new(big.Int)
	for _, c := range s {
		i := strings.IndexRune(base58Alphabet, c)
		if i < 0 {
			t.Fatalf("%q: %q is not base58", s, c)
		}
		n.Mul(n, big.NewInt(58)).Add(n, big.NewInt(int64(i)))
	}
	out := n.Bytes()
	for _, c := range s {
		if c != '1' {
			break
		}
		out = append([]byte{0}, out...)
	}
	return out
}

// Every network in the catalogue gets addresses that decode back with a
// valid checksum for its chain, and no two orders share one.
func TestSandboxDepositAddresses(t *testing.T) {
	eth := regexp.MustCompile(`^0x[0-9a-f]{40}$`)
	for _, m := range DefaultCatalogue().Networks() {
		seen := map[string]bool{}
		for range 50 {
			in, err := SandboxDepositInstructions(m, "Org", "")
			if err != nil {
				t.Fatalf("%s: %v", m.Code, err)
			}
			if in.Type != ledger.InstructionsCrypto || in.Chain == "" || seen[in.Address] {
				t.Fatalf("%s: %+v (repeated: %v)", m.Code, in, seen[in.Address])
			}
			seen[in.Address] = true
			switch m.Chain {
			case "tron":
				b := base58Decode(t, in.Address)
				s1 := sha256.Sum256(b[:21])
				s2 := sha256.Sum256(s1[:])
				if in.Address[0] != 'T' || len(b) != 25 || b[0] != 0x41 || !bytes.Equal(b[21:], s2[:4]) {
					t.Fatalf("tron address %s does not check", in.Address)
				}
			case "ethereum":
				if !eth.MatchString(in.Address) {
					t.Fatalf("ethereum address %s", in.Address)
				}
			case "solana":
				if b := base58Decode(t, in.Address); len(b) != 32 {
					t.Fatalf("solana address %s decodes to %d bytes", in.Address, len(b))
				}
			case "stellar":
				b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(in.Address)
				if err != nil || len(in.Address) != 56 || in.Address[0] != 'G' || len(b) != 35 ||
					binary.LittleEndian.Uint16(b[33:]) != crc16XModem(b[:33]) {
					t.Fatalf("stellar address %s does not check", in.Address)
				}
				if len(in.Tag) != 9 || in.Tag[0] == '0' {
					t.Fatalf("stellar memo %q", in.Tag)
				}
			default:
				t.Fatalf("no test for chain %s", m.Chain)
			}
		}
	}
	// The CRC of the Stellar StrKey is the standard CRC-16/XMODEM.
	if got := crc16XModem([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16 check value %#x", got)
	}
}

func TestSandboxDepositBankAndMobile(t *testing.T) {
	c := DefaultCatalogue()
	bank, _ := c.Method("ng_nip")
	in, err := SandboxDepositInstructions(bank, "Golden Org", "")
	if err != nil || in.Type != ledger.InstructionsVirtualAccount || len(in.AccountNumber) != 10 ||
		in.AccountNumber[:2] != "98" || in.AccountName != "Golden Org" || in.Bank == "" {
		t.Fatalf("virtual account %+v %v", in, err)
	}
	mm, _ := c.Method("gh_mtn")
	in, err = SandboxDepositInstructions(mm, "Golden Org", "233241234567")
	if err != nil || in.Type != ledger.InstructionsMobileMoney || in.AccountNumber != "233241234567" {
		t.Fatalf("mobile money %+v %v", in, err)
	}
	if _, err := SandboxDepositInstructions(Method{Code: "x", Type: "crypto", Chain: "nochain"}, "", ""); err == nil {
		t.Fatal("an unknown chain got an address")
	}
}
