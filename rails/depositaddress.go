package rails

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Deposit addresses. The sandbox derives an organization's address on a
// chain from a seed (the caller passes the organization and the chain), so
// the same organization always gets the same address, and every address is
// syntactically valid for its chain:
//
//   - EVM chains (ethereum, polygon, base, bsc): 0x and 40 hex digits in
//     EIP-55 mixed-case checksum form (Keccak-256 of the lower-case hex);
//   - tron: Base58Check of 0x41 and 20 bytes, so 34 characters from T;
//   - solana: the Base58 of a 32-byte ed25519 public key;
//   - stellar: a StrKey account id: version byte 6<<3, a 32-byte ed25519
//     public key and a CRC-16/XModem checksum, in base32, so 56 characters
//     from G. Stellar deposits also carry a memo (the tag).
//
// Keys come from a hash of the seed: nobody holds them, which is right for
// a sandbox and wrong for real money. Production needs a custody provider.

// chainNames maps the catalogue's chain ids to the names the API shows.
var chainNames = map[string]string{
	"ethereum": "Ethereum",
	"polygon":  "Polygon",
	"base":     "Base",
	"bsc":      "BSC",
	"tron":     "Tron",
	"solana":   "Solana",
	"stellar":  "Stellar",
}

// ChainName returns the name the API shows for a catalogue chain id
// ("Solana" for "solana"); an unknown id is returned as is.
func ChainName(chain string) string {
	if n, ok := chainNames[chain]; ok {
		return n
	}
	return chain
}

// ParseChain returns the catalogue chain id of a chain name in any case.
func ParseChain(name string) (string, bool) {
	id := strings.ToLower(name)
	_, ok := chainNames[id]
	return id, ok
}

// ChainNeedsTag reports whether deposits on chain must carry a memo.
func ChainNeedsTag(chain string) bool { return chain == "stellar" }

// DepositAddress derives the deposit address on chain for seed.
func DepositAddress(chain string, seed []byte) (string, error) {
	key := sha256.Sum256(append([]byte("payments/deposit-address\x00"), seed...))
	switch chain {
	case "ethereum", "polygon", "base", "bsc":
		return eip55(depositKeccak256(key[:])[12:]), nil
	case "tron":
		payload := append([]byte{0x41}, depositKeccak256(key[:])[12:]...)
		return depositBase58Check(payload), nil
	case "solana":
		pub := ed25519.NewKeyFromSeed(key[:]).Public().(ed25519.PublicKey)
		return depositBase58([]byte(pub)), nil
	case "stellar":
		pub := ed25519.NewKeyFromSeed(key[:]).Public().(ed25519.PublicKey)
		return stellarAccountID(pub), nil
	default:
		return "", fmt.Errorf("rails: no address generator for chain %q", chain)
	}
}

// DepositTag derives the memo a deposit on chain must carry, or "" on
// chains without memos: a decimal Stellar memo id of 10 digits.
func DepositTag(chain string, seed []byte) string {
	if !ChainNeedsTag(chain) {
		return ""
	}
	h := sha256.Sum256(append([]byte("payments/deposit-tag\x00"), seed...))
	return strconv.FormatUint(1_000_000_000+binary.BigEndian.Uint64(h[:8])%9_000_000_000, 10)
}

// SandboxTxHash derives the transaction hash of a simulated deposit on
// chain, in the chain's usual form.
func SandboxTxHash(chain string, seed []byte) string {
	h := sha256.Sum256(append([]byte("payments/sandbox-tx\x00"), seed...))
	switch chain {
	case "ethereum", "polygon", "base", "bsc":
		return "0x" + hex.EncodeToString(h[:])
	case "solana": // a 64-byte signature
		h2 := sha256.Sum256(h[:])
		return depositBase58(append(h[:], h2[:]...))
	default:
		return hex.EncodeToString(h[:])
	}
}

// SandboxSessionID derives the bank session id of a simulated transfer:
// 30 digits, as instant-payment schemes such as NIP use.
func SandboxSessionID(seed []byte) string {
	h := sha256.Sum256(append([]byte("payments/sandbox-session\x00"), seed...))
	var b strings.Builder
	for i := 0; b.Len() < 30; i++ {
		b.WriteByte('0' + h[i%len(h)]%10)
	}
	return b.String()
}

// eip55 writes a 20-byte address in EIP-55 checksum case.
func eip55(addr []byte) string {
	lower := hex.EncodeToString(addr)
	hash := depositKeccak256([]byte(lower))
	out := []byte(lower)
	for i, c := range out {
		nibble := hash[i/2] >> 4
		if i%2 == 1 {
			nibble = hash[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out)
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// depositBase58 encodes b in Bitcoin's Base58 alphabet; each leading zero
// byte is a leading '1'.
func depositBase58(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// depositBase58Check appends the first four bytes of a double SHA-256.
func depositBase58Check(payload []byte) string {
	first := sha256.Sum256(payload)
	second := sha256.Sum256(first[:])
	return depositBase58(append(payload, second[:4]...))
}

// stellarAccountID is the StrKey of an ed25519 public key.
func stellarAccountID(pub []byte) string {
	payload := append([]byte{6 << 3}, pub...)
	sum := crc16XModem(payload)
	payload = append(payload, byte(sum), byte(sum>>8))
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(payload)
}

// crc16XModem is CRC-16 with polynomial 0x1021 and initial value 0.
func crc16XModem(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// depositKeccak256 is the original Keccak-256 (padding 0x01, not SHA-3's
// 0x06), as Ethereum and Tron use; the standard library has only SHA-3.
func depositKeccak256(data []byte) []byte {
	const rate = 136
	var st [25]uint64
	absorb := func(block []byte) {
		for i := 0; i < rate/8; i++ {
			st[i] ^= binary.LittleEndian.Uint64(block[i*8:])
		}
		keccakF1600(&st)
	}
	for len(data) >= rate {
		absorb(data[:rate])
		data = data[rate:]
	}
	var last [rate]byte
	copy(last[:], data)
	last[len(data)] ^= 0x01
	last[rate-1] ^= 0x80
	absorb(last[:])
	out := make([]byte, 32)
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(out[i*8:], st[i])
	}
	return out
}

var keccakRoundConstants = [24]uint64{
	0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
	0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
	0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
	0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
	0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
	0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
}

var (
	keccakRotations = [24]uint{1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44}
	keccakPi        = [24]int{10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1}
)

func keccakF1600(st *[25]uint64) {
	var bc [5]uint64
	for round := 0; round < 24; round++ {
		// θ
		for i := 0; i < 5; i++ {
			bc[i] = st[i] ^ st[i+5] ^ st[i+10] ^ st[i+15] ^ st[i+20]
		}
		for i := 0; i < 5; i++ {
			t := bc[(i+4)%5] ^ (bc[(i+1)%5]<<1 | bc[(i+1)%5]>>63)
			for j := 0; j < 25; j += 5 {
				st[j+i] ^= t
			}
		}
		// ρ and π
		t := st[1]
		for i := 0; i < 24; i++ {
			j := keccakPi[i]
			next := st[j]
			st[j] = t<<keccakRotations[i] | t>>(64-keccakRotations[i])
			t = next
		}
		// χ
		for j := 0; j < 25; j += 5 {
			copy(bc[:], st[j:j+5])
			for i := 0; i < 5; i++ {
				st[j+i] ^= ^bc[(i+1)%5] & bc[(i+2)%5]
			}
		}
		// ι
		st[0] ^= keccakRoundConstants[round]
	}
}
