package rails

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/sha3"
)

// Address formats of the chains the catalogue's networks run on, checked
// with each chain's own rules so that a typo is caught before money leaves:
//
//   - EVM chains (ethereum, base): "0x" and 40 hex digits; a mixed-case
//     address must match its EIP-55 checksum (Keccak-256 of the lower-case
//     hex picks which letters are upper case).
//   - tron: base58check of 0x41 and a 20-byte account, whose last four bytes
//     are the first four of the double SHA-256 of the rest.
//   - solana: base58 of a 32-byte public key.
//   - stellar: StrKey, base32 of a version byte (G: ed25519 public key), the
//     32-byte key and a little-endian CRC16-XModem of both.
//
// They are pure functions, safe for concurrent use.

// AddressError says why an address is not valid on a chain. Reason is
// written for the API caller.
type AddressError struct {
	Chain  string
	Reason string
}

func (e *AddressError) Error() string {
	return "rails: invalid " + e.Chain + " address: " + e.Reason
}

// ErrUnknownChain is returned for a chain with no address rules.
var ErrUnknownChain = errors.New("rails: unknown chain")

// addressLenMax bounds the input every decoder looks at, so that a long
// string costs nothing: the longest valid address here is 56 characters.
const addressLenMax = 128

var addressRules = map[string]func(string) string{
	"ethereum": checkEVMAddress,
	"base":     checkEVMAddress,
	"tron":     checkTronAddress,
	"solana":   checkSolanaAddress,
	"stellar":  checkStellarAddress,
}

// ValidateAddress checks that address is a well-formed address on chain
// ("ethereum", "base", "tron", "solana", "stellar"). It returns nil, an
// *AddressError saying what is wrong, or ErrUnknownChain. It does not ask
// the chain whether the account exists.
func ValidateAddress(chain, address string) error {
	rule, ok := addressRules[chain]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownChain, chain)
	}
	var reason string
	switch {
	case address == "":
		reason = "is empty"
	case len(address) > addressLenMax:
		reason = fmt.Sprintf("is longer than any %s address", chain)
	case strings.TrimSpace(address) != address:
		reason = "has leading or trailing spaces"
	default:
		reason = rule(address)
	}
	if reason != "" {
		return &AddressError{Chain: chain, Reason: reason}
	}
	return nil
}

// stellarMemoTextBytesMax is the longest text memo a Stellar transaction
// carries.
const stellarMemoTextBytesMax = 28

// ValidateTag checks a destination tag (memo) for chain: only Stellar
// carries one, a text memo of at most 28 bytes.
func ValidateTag(chain, tag string) error {
	if chain != "stellar" {
		return &AddressError{Chain: chain, Reason: "tag: " + chain + " transfers carry no memo or tag"}
	}
	if len(tag) > stellarMemoTextBytesMax {
		return &AddressError{Chain: chain, Reason: fmt.Sprintf("tag: a Stellar memo is at most %d bytes", stellarMemoTextBytesMax)}
	}
	return nil
}

// EVM

func checkEVMAddress(a string) string {
	if len(a) != 42 || a[0] != '0' || a[1] != 'x' {
		return "must be 0x followed by 40 hexadecimal characters"
	}
	hex := a[2:]
	var upper, lower, nonzero bool
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		switch {
		case c >= '0' && c <= '9':
			nonzero = nonzero || c != '0'
		case c >= 'a' && c <= 'f':
			lower, nonzero = true, true
		case c >= 'A' && c <= 'F':
			upper, nonzero = true, true
		default:
			return "must be 0x followed by 40 hexadecimal characters"
		}
	}
	if !nonzero {
		return "is the zero address: funds sent there are lost"
	}
	if upper && lower && EVMChecksumAddress(a) != a {
		return "fails its EIP-55 checksum (the mix of upper- and lower-case letters is wrong): check it for a typo"
	}
	return ""
}

// EVMChecksumAddress returns a 0x-prefixed 40-hex-digit address in its
// EIP-55 mixed-case form. Its input must have that shape.
func EVMChecksumAddress(a string) string {
	lowerHex := strings.ToLower(a[2:])
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lowerHex))
	sum := h.Sum(nil)
	out := []byte("0x" + lowerHex)
	for i := 0; i < 40; i++ {
		c := out[2+i]
		if c < 'a' || c > 'f' {
			continue
		}
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if nibble >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// Base58 (the Bitcoin alphabet), used by Tron and Solana.

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		t[base58Alphabet[i]] = int8(i)
	}
	return t
}()

// base58Decode decodes s; each leading '1' is a leading zero byte. It
// reports false for a character outside the alphabet.
func base58Decode(s string) ([]byte, bool) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// Big-endian base-256 digits of the number, grown as needed.
	var num []byte
	for i := zeros; i < len(s); i++ {
		carry := int(base58Index[s[i]])
		if carry < 0 {
			return nil, false
		}
		for j := len(num) - 1; j >= 0; j-- {
			carry += int(num[j]) * 58
			num[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			num = append([]byte{byte(carry)}, num...)
			carry >>= 8
		}
	}
	return append(make([]byte, zeros), num...), true
}

// base58Encode is the inverse of base58Decode.
func base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// Little-endian base-58 digits.
	var digits []byte
	for _, v := range b[zeros:] {
		carry := int(v)
		for j := range digits {
			carry += int(digits[j]) << 8
			digits[j] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := make([]byte, 0, zeros+len(digits))
	for i := 0; i < zeros; i++ {
		out = append(out, '1')
	}
	for i := len(digits) - 1; i >= 0; i-- {
		out = append(out, base58Alphabet[digits[i]])
	}
	return string(out)
}

// Tron

const tronAddressPrefix = 0x41

func checkTronAddress(a string) string {
	if len(a) != 34 || a[0] != 'T' {
		return "must be 34 characters starting with T (a base58check Tron address)"
	}
	b, ok := base58Decode(a)
	if !ok {
		return "contains a character outside the base58 alphabet (0, O, I and l are never used)"
	}
	if len(b) != 25 || b[0] != tronAddressPrefix {
		return "does not decode to a Tron account (0x41 and 20 bytes)"
	}
	if sum := doubleSHA256(b[:21]); [4]byte(sum[:4]) != [4]byte(b[21:]) {
		return "fails its base58check checksum: check it for a typo"
	}
	return ""
}

func doubleSHA256(b []byte) [32]byte {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}

// TronAddress encodes a 20-byte account as a base58check Tron address.
func TronAddress(account [20]byte) string {
	b := make([]byte, 0, 25)
	b = append(b, tronAddressPrefix)
	b = append(b, account[:]...)
	sum := doubleSHA256(b)
	return base58Encode(append(b, sum[:4]...))
}

// Solana

func checkSolanaAddress(a string) string {
	if len(a) < 32 || len(a) > 44 {
		return "must be 32 to 44 base58 characters (a Solana public key)"
	}
	b, ok := base58Decode(a)
	if !ok {
		return "contains a character outside the base58 alphabet (0, O, I and l are never used)"
	}
	if len(b) != 32 {
		return fmt.Sprintf("decodes to %d bytes; a Solana public key is 32", len(b))
	}
	return ""
}

// SolanaAddress encodes a 32-byte public key as a Solana address.
func SolanaAddress(key [32]byte) string { return base58Encode(key[:]) }

// Stellar

const (
	stellarVersionAccount = 6 << 3  // 'G': ed25519 public key
	stellarVersionSeed    = 18 << 3 // 'S': ed25519 secret seed
	stellarVersionMuxed   = 12 << 3 // 'M': muxed account
	stellarAccountLen     = 56
)

var stellarBase32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func checkStellarAddress(a string) string {
	switch {
	case len(a) > 0 && a[0] == 'S':
		return "is a Stellar secret seed, not an account address: never share it, and send the account (G…) address"
	case len(a) > 0 && a[0] == 'M':
		return "is a muxed (M…) account, which is not supported: send the G… account and put the memo in tag"
	case len(a) != stellarAccountLen || a[0] != 'G':
		return "must be 56 characters starting with G (a Stellar account ID)"
	}
	b, err := stellarBase32.DecodeString(a)
	if err != nil || len(b) != 35 {
		return "is not valid base32 (letters A–Z and digits 2–7 only)"
	}
	if b[0] != stellarVersionAccount {
		return "does not decode to a Stellar account ID"
	}
	if crc16XModem(b[:33]) != binary.LittleEndian.Uint16(b[33:]) {
		return "fails its CRC16 checksum: check it for a typo"
	}
	return ""
}

// StellarAddress encodes a 32-byte ed25519 public key as a StrKey account
// ID (G…).
func StellarAddress(key [32]byte) string {
	b := make([]byte, 0, 35)
	b = append(b, stellarVersionAccount)
	b = append(b, key[:]...)
	b = binary.LittleEndian.AppendUint16(b, crc16XModem(b))
	return stellarBase32.EncodeToString(b)
}

// crc16XModem is CRC-16 with polynomial 0x1021, initial value 0, no
// reflection: the checksum of Stellar's StrKey.
func crc16XModem(b []byte) uint16 {
	var crc uint16
	for _, v := range b {
		crc ^= uint16(v) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
