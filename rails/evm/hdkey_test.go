package evm

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"testing"
)

// BIP-32's first test vector: the chain m/0'/1/2'/2/1000000000, each key
// serialized, and the public derivation of a non-hardened child from an xpub
// alone.
func TestBIP32Vector1(t *testing.T) {
	seed, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
	master, err := NewMasterKey(seed)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name       string
		child      uint32
		xpub, xprv string
	}{
		{"m", 0, "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
			"xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"},
		{"m/0'", HardenedOffset, "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw",
			"xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7"},
		{"m/0'/1", 1, "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ",
			"xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs"},
		{"m/0'/1/2'", HardenedOffset + 2, "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5",
			"xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM"},
	}
	key := master
	for i, s := range steps {
		if i > 0 {
			if key, err = key.Child(s.child); err != nil {
				t.Fatal(err)
			}
		}
		if got := key.String(); got != s.xprv {
			t.Fatalf("%s xprv = %s, want %s", s.name, got, s.xprv)
		}
		if got := key.Neuter().String(); got != s.xpub {
			t.Fatalf("%s xpub = %s, want %s", s.name, got, s.xpub)
		}
		parsed, err := ParseExtendedKey(s.xpub)
		if err != nil || parsed.String() != s.xpub || parsed.IsPrivate() {
			t.Fatalf("%s: parse xpub: %v", s.name, err)
		}
		parsed, err = ParseExtendedKey(s.xprv)
		if err != nil || parsed.String() != s.xprv || !parsed.IsPrivate() {
			t.Fatalf("%s: parse xprv: %v", s.name, err)
		}
	}
	// m/0'/1 derived from m/0' as an xpub alone equals the private path's.
	pub, _ := ParseExtendedKey(steps[1].xpub)
	child, err := pub.Child(1)
	if err != nil || child.String() != steps[2].xpub {
		t.Fatalf("public derivation = %v, %v; want %s", child, err, steps[2].xpub)
	}
	if _, err := pub.Child(HardenedOffset); err == nil {
		t.Fatal("an xpub derived a hardened child")
	}
}

// The development node's well-known accounts are m/44'/60'/0'/0/i of its
// mnemonic: the account-level xpub alone derives the same addresses.
func TestDepositAddressesFromXpub(t *testing.T) {
	seed := pbkdf2Seed(t, "test test test test test test test test test test test junk")
	master, err := NewMasterKey(seed)
	if err != nil {
		t.Fatal(err)
	}
	account, err := master.Derive(44+HardenedOffset, 60+HardenedOffset, HardenedOffset)
	if err != nil {
		t.Fatal(err)
	}
	xpub, err := ParseExtendedKey(account.Neuter().String())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := newDepositTree(xpub)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}
	for i, w := range want {
		got, err := tree.address(uint32(i))
		if err != nil || got.Hex() != w {
			t.Fatalf("index %d: %s, %v; want %s", i, got.Hex(), err, w)
		}
	}
	if _, err := tree.address(HardenedOffset); err == nil {
		t.Fatal("a hardened index was derived from the xpub")
	}
	// A depth-4 xpub (m/44'/60'/0'/0) derives the same addresses.
	change, _ := account.Child(0)
	tree4, err := newDepositTree(change.Neuter())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tree4.address(1); got.Hex() != want[1] {
		t.Fatalf("depth-4 xpub: %s", got.Hex())
	}
	if _, err := newDepositTree(master.Neuter()); err == nil || !strings.Contains(err.Error(), "depth") {
		t.Fatalf("a master xpub was accepted: %v", err)
	}
}

func pbkdf2Seed(t *testing.T, mnemonic string) []byte {
	t.Helper()
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seed
}
