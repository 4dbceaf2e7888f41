package rails

import (
	"errors"
	"strings"
	"testing"
)

// Real addresses: the EIP-55 specification's examples and token contracts,
// Tron's USDT contract and well-known accounts, Solana's system and token
// programs and mints, Stellar's SEP-23 example and the USDC issuer.
var knownGoodAddresses = []struct {
	chain, address string
}{
	{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
	{"ethereum", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"},
	{"ethereum", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"},
	{"ethereum", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"},
	{"ethereum", "0xdAC17F958D2ee523a2206206994597C13D831ec7"}, // USDT
	{"ethereum", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"}, // USDC
	{"ethereum", "0x52908400098527886e0f7030069857d2e4169ee7"}, // all lower case: no checksum to check
	{"ethereum", "0x52908400098527886E0F7030069857D2E4169EE7"}, // all upper case
	{"base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},     // USDC on Base
	{"tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},             // USDT
	{"tron", "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"},
	{"tron", "TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8"}, // USDC
	{"solana", "11111111111111111111111111111111"}, // system program: 32 zero bytes
	{"solana", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"},
	{"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},              // USDC mint
	{"solana", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"},              // USDT mint
	{"stellar", "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN"}, // USDC issuer
	{"stellar", "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7"}, // SEP-23
}

func TestValidateAddressKnownGood(t *testing.T) {
	for _, tt := range knownGoodAddresses {
		if err := ValidateAddress(tt.chain, tt.address); err != nil {
			t.Errorf("%s %s: %v", tt.chain, tt.address, err)
		}
	}
}

func TestValidateAddressRejects(t *testing.T) {
	tests := []struct {
		name, chain, address, reason string
	}{
		{"evm case flipped", "ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "EIP-55 checksum"},
		{"evm case flipped early", "ethereum", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "EIP-55 checksum"},
		{"evm digit changed, mixed case", "ethereum", "0xdAC17F958D2ee523a2206206994597C13D831ec8", "EIP-55 checksum"},
		{"evm short", "ethereum", "0xdAC17F958D2ee523a2206206994597C13D831ec", "40 hexadecimal"},
		{"evm no prefix", "ethereum", "dAC17F958D2ee523a2206206994597C13D831ec7ab", "must be 0x"},
		{"evm non-hex", "base", "0xgAC17F958D2ee523a2206206994597C13D831ec7", "40 hexadecimal"},
		{"evm zero address", "ethereum", "0x0000000000000000000000000000000000000000", "zero address"},
		{"tron checksum", "tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", "checksum"},
		{"tron swapped characters", "tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLjt6", "checksum"},
		{"tron not base58", "tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60", "base58 alphabet"},
		{"tron wrong prefix", "tron", "1R7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "starting with T"},
		{"tron an ethereum address", "tron", "0xdAC17F958D2ee523a2206206994597C13D831ec7", "starting with T"},
		{"tron bitcoin address", "tron", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "starting with T"},
		{"solana too long", "solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vv", "32 to 44"},
		{"solana 33 bytes", "solana", "JJEfe6DcPM2ziB2vfUWDV6aHVerXRGkv3TcyvJUNGHZz", "decodes to 33 bytes"},
		{"solana 31 bytes", "solana", "tVojvhToWjQ8Xvo4UPx2Xz9eRy7auyYMmZBjc2XfN", "decodes to 31 bytes"},
		{"solana not base58", "solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1O", "base58 alphabet"},
		{"solana short", "solana", "EPjFWdd5AufqSSqeM2qN1xzybap", "32 to 44"},
		{"stellar checksum", "stellar", "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVM", "CRC16"},
		{"stellar character changed", "stellar", "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RF34K4KZVN", "CRC16"},
		{"stellar lower case", "stellar", strings.ToLower("GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN"), "starting with G"},
		{"stellar short", "stellar", "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN", "56 characters"},
		{"stellar not base32", "stellar", "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN1", "base32"},
		{"stellar secret seed", "stellar", "SBU2RRGLXH3E5CQHTD3ODLDF2BWDCYUSSBLLZ5GNW7JXHDIYKXZWHOKR", "secret seed"},
		{"stellar muxed", "stellar", "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAACJUQ", "muxed"},
		{"empty", "solana", "", "is empty"},
		{"spaces", "tron", " TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "spaces"},
		{"huge", "ethereum", "0x" + strings.Repeat("a", 500), "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateAddress(tt.chain, tt.address)
			var ae *AddressError
			if !errors.As(err, &ae) || !strings.Contains(ae.Reason, tt.reason) {
				t.Fatalf("got %v, want an address error containing %q", err, tt.reason)
			}
		})
	}
}

func TestValidateAddressUnknownChain(t *testing.T) {
	if err := ValidateAddress("dogecoin", "D8vFz4p1L37jdg47HXKtSHA5uYLYxbGgPD"); !errors.Is(err, ErrUnknownChain) {
		t.Fatalf("got %v, want ErrUnknownChain", err)
	}
}

// Every single-character substitution of a checksummed address is caught:
// base58check's four bytes and StrKey's CRC16 (which catches every burst of
// up to 16 bits, and one base32 character is 5) leave no typo through.
func TestChecksumsCatchEveryTypo(t *testing.T) {
	alphabets := map[string]string{"tron": base58Alphabet, "stellar": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"}
	for _, tt := range knownGoodAddresses {
		alphabet, ok := alphabets[tt.chain]
		if !ok {
			continue
		}
		for i := 1; i < len(tt.address); i++ {
			for j := 0; j < len(alphabet); j++ {
				if alphabet[j] == tt.address[i] {
					continue
				}
				typo := tt.address[:i] + string(alphabet[j]) + tt.address[i+1:]
				if ValidateAddress(tt.chain, typo) == nil {
					t.Fatalf("%s: typo %s accepted", tt.chain, typo)
				}
			}
		}
	}
}

// Flipping the case of any letter of an EIP-55 address breaks its checksum.
func TestEIP55CatchesEveryCaseFlip(t *testing.T) {
	for _, tt := range knownGoodAddresses[:6] {
		if got := EVMChecksumAddress(strings.ToLower(tt.address)); got != tt.address {
			t.Errorf("checksum of %s: %s", tt.address, got)
		}
		for i := 2; i < len(tt.address); i++ {
			c := tt.address[i]
			var flipped byte
			switch {
			case c >= 'a' && c <= 'f':
				flipped = c - 'a' + 'A'
			case c >= 'A' && c <= 'F':
				flipped = c - 'A' + 'a'
			default:
				continue
			}
			typo := tt.address[:i] + string(flipped) + tt.address[i+1:]
			if ValidateAddress("ethereum", typo) == nil {
				t.Fatalf("case flip %s accepted", typo)
			}
		}
	}
}

// The encoders produce what the validators accept, and decode back to the
// same key.
func TestAddressEncoders(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i * 7)
	}
	var account [20]byte
	copy(account[:], key[:20])
	for chain, a := range map[string]string{
		"tron": TronAddress(account), "solana": SolanaAddress(key), "stellar": StellarAddress(key),
	} {
		if err := ValidateAddress(chain, a); err != nil {
			t.Errorf("%s %s: %v", chain, a, err)
		}
	}
	if got, want := SolanaAddress([32]byte{}), "11111111111111111111111111111111"; got != want {
		t.Errorf("zero key: %s, want %s", got, want)
	}
}

func TestValidateTag(t *testing.T) {
	if err := ValidateTag("stellar", "invoice 1042"); err != nil {
		t.Error(err)
	}
	if err := ValidateTag("stellar", strings.Repeat("x", 29)); err == nil {
		t.Error("a 29-byte memo was accepted")
	}
	if err := ValidateTag("tron", "1"); err == nil {
		t.Error("a tag on tron was accepted")
	}
}

// Any string: no panic, and what is accepted is canonical, so decoding and
// encoding it again gives it back (an address has one spelling).
func FuzzValidateAddress(f *testing.F) {
	for _, tt := range knownGoodAddresses {
		f.Add(tt.address)
	}
	f.Add("0x0000000000000000000000000000000000000000")
	f.Add("1111111111111111111111111111111111111111111")
	f.Add("SBU2RRGLXH3E5CQHTD3ODLDF2BWDCYUSSBLLZ5GNW7JXHDIYKXZWHOKR")
	f.Fuzz(func(t *testing.T, a string) {
		for chain := range addressRules {
			err := ValidateAddress(chain, a)
			if err != nil {
				var ae *AddressError
				if !errors.As(err, &ae) || ae.Reason == "" {
					t.Fatalf("%s %q: error without a reason: %v", chain, a, err)
				}
				continue
			}
			switch chain {
			case "ethereum", "base":
				lower := strings.ToLower(a[2:])
				if a[2:] != lower && a[2:] != strings.ToUpper(a[2:]) && EVMChecksumAddress(a) != a {
					t.Fatalf("%q accepted with a wrong checksum", a)
				}
			case "tron":
				b, _ := base58Decode(a)
				if TronAddress([20]byte(b[1:21])) != a {
					t.Fatalf("%q is not canonical", a)
				}
			case "solana":
				b, _ := base58Decode(a)
				if SolanaAddress([32]byte(b)) != a {
					t.Fatalf("%q is not canonical", a)
				}
			case "stellar":
				b, _ := stellarBase32.DecodeString(a)
				if StellarAddress([32]byte(b[1:33])) != a {
					t.Fatalf("%q is not canonical", a)
				}
			}
		}
	})
}

// Base58 is a bijection between strings of its alphabet and byte strings.
func FuzzBase58(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 255})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64 {
			return
		}
		s := base58Encode(b)
		back, ok := base58Decode(s)
		if !ok || string(back) != string(b) {
			t.Fatalf("%x → %q → %x", b, s, back)
		}
	})
}
