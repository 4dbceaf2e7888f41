package rails

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"
)

func TestKeccak256Vectors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
		{"abc", "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"},
		// 200 bytes: more than one block of 136.
		{strings.Repeat("a", 200), ""},
	} {
		got := hex.EncodeToString(depositKeccak256([]byte(tc.in)))
		if tc.want != "" && got != tc.want {
			t.Errorf("keccak256(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// A multi-block input must differ from its one-block prefix and be
	// stable; the block boundary is where padding bugs hide.
	if bytes.Equal(depositKeccak256(bytes.Repeat([]byte{1}, 136)), depositKeccak256(bytes.Repeat([]byte{1}, 135))) {
		t.Fatal("block boundary ignored")
	}
}

// The test vectors of EIP-55 itself.
func TestEIP55Vectors(t *testing.T) {
	for _, want := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		raw, _ := hex.DecodeString(strings.ToLower(want[2:]))
		if got := eip55(raw); got != want {
			t.Errorf("eip55 = %s, want %s", got, want)
		}
	}
}

func TestCRC16XModem(t *testing.T) {
	if got := crc16XModem([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16 = %#x, want 0x31c3", got)
	}
}

// decodeBase58 is an independent decoder, for checking the encoder.
func decodeBase58(t *testing.T, s string) []byte {
	t.Helper()
	n := new(big.Int)
	for _, c := range s {
		i := strings.IndexRune(base58Alphabet, c)
		if i < 0 {
			t.Fatalf("%q: %q is not base58", s, c)
		}
		n.Mul(n, big.NewInt(58))
		n.Add(n, big.NewInt(int64(i)))
	}
	b := n.Bytes()
	for _, c := range s {
		if c != '1' {
			break
		}
		b = append([]byte{0}, b...)
	}
	return b
}

func TestBase58KnownValue(t *testing.T) {
	// Bitcoin's genesis address: version 0 and a hash160.
	payload, _ := hex.DecodeString("0062e907b15cbf27d5425399ebf6f0fb50ebb88f18")
	if got := depositBase58Check(payload); got != "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa" {
		t.Fatalf("base58check = %s", got)
	}
}

// Every generated address is valid for its chain, checked by decoding it,
// and stable per seed.
func TestDepositAddressFormats(t *testing.T) {
	seeds := [][]byte{[]byte("org_a\x00x"), []byte("org_b\x00x"), {}, bytes.Repeat([]byte{0xff}, 300)}
	for _, chain := range []string{"ethereum", "polygon", "base", "bsc", "tron", "solana", "stellar"} {
		seen := map[string]bool{}
		for _, seed := range seeds {
			addr, err := DepositAddress(chain, seed)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := DepositAddress(chain, seed)
			if again != addr {
				t.Fatalf("%s: not deterministic", chain)
			}
			if seen[addr] {
				t.Fatalf("%s: two seeds gave %s", chain, addr)
			}
			seen[addr] = true
			switch chain {
			case "tron":
				b := decodeBase58(t, addr)
				sum1 := sha256.Sum256(b[:21])
				sum2 := sha256.Sum256(sum1[:])
				if len(addr) != 34 || addr[0] != 'T' || len(b) != 25 || b[0] != 0x41 || !bytes.Equal(sum2[:4], b[21:]) {
					t.Fatalf("tron address %s (%x) invalid", addr, b)
				}
			case "solana":
				if b := decodeBase58(t, addr); len(b) != 32 || len(addr) < 32 || len(addr) > 44 {
					t.Fatalf("solana address %s decodes to %d bytes", addr, len(b))
				}
			case "stellar":
				b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(addr)
				if err != nil || len(addr) != 56 || addr[0] != 'G' || len(b) != 35 || b[0] != 6<<3 {
					t.Fatalf("stellar address %s invalid: %v", addr, err)
				}
				if sum := crc16XModem(b[:33]); byte(sum) != b[33] || byte(sum>>8) != b[34] {
					t.Fatalf("stellar address %s: bad checksum", addr)
				}
			default:
				raw, err := hex.DecodeString(strings.ToLower(addr[2:]))
				if err != nil || len(addr) != 42 || addr[:2] != "0x" || eip55(raw) != addr {
					t.Fatalf("EVM address %s invalid", addr)
				}
				if strings.ToLower(addr) == addr || strings.ToUpper(addr[2:]) == addr[2:] {
					t.Logf("EVM address %s has one case only (possible, rare)", addr)
				}
			}
		}
	}
	if _, err := DepositAddress("bitcoin", nil); err == nil {
		t.Fatal("an unsupported chain got an address")
	}
}

func TestDepositTagsAndReferences(t *testing.T) {
	if DepositTag("solana", []byte("x")) != "" {
		t.Fatal("solana got a tag")
	}
	tag := DepositTag("stellar", []byte("x"))
	if len(tag) != 10 || tag != DepositTag("stellar", []byte("x")) || tag == DepositTag("stellar", []byte("y")) {
		t.Fatalf("stellar tag %q", tag)
	}
	if s := SandboxSessionID([]byte("x")); len(s) != 30 || strings.Trim(s, "0123456789") != "" {
		t.Fatalf("session id %q", s)
	}
	if h := SandboxTxHash("ethereum", []byte("x")); len(h) != 66 || h[:2] != "0x" {
		t.Fatalf("evm hash %q", h)
	}
	if h := SandboxTxHash("solana", []byte("x")); len(decodeBase58(t, h)) != 64 {
		t.Fatalf("solana signature %q", h)
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
	for _, m := range c.Networks() {
		if _, ok := c.DepositNetwork(m.Currency, m.Chain); ok {
			if _, err := DepositAddress(m.Chain, []byte("seed")); err != nil {
				t.Fatalf("%s: %v", m.Code, err)
			}
		}
	}
	if id, ok := ParseChain("SoLaNa"); !ok || id != "solana" || ChainName(id) != "Solana" {
		t.Fatalf("ParseChain = %q %v", id, ok)
	}
}
