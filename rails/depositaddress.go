package rails

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/sha3"
)

// Deposit addresses. The sandbox derives an organization's address on a
// chain from a seed (the caller passes the organization and the chain), so
// the same organization always gets the same address, and every address is
// valid for its chain by ValidateAddress, built with the encoders of
// address.go:
//
//   - EVM chains (ethereum, base): the last 20 bytes of a Keccak-256, in
//     EIP-55 checksum case;
//   - tron: Base58Check of 0x41 and those 20 bytes, so 34 characters from T;
//   - solana: a 32-byte ed25519 public key in Base58;
//   - stellar: the StrKey (G…) of an ed25519 public key. Stellar deposits
//     also carry a memo (the tag, see DepositTag).
//
// Keys come from a hash of the seed: nobody holds them, which is right for
// a sandbox and wrong for real money. Production needs a custody provider.

// DepositAddress derives the deposit address on chain for seed.
func DepositAddress(chain string, seed []byte) (string, error) {
	key := sha256.Sum256(append([]byte("payments/deposit-address\x00"), seed...))
	switch chain {
	case "ethereum", "base":
		h := sha3.NewLegacyKeccak256()
		h.Write(key[:])
		return EVMChecksumAddress("0x" + hex.EncodeToString(h.Sum(nil)[12:])), nil
	case "tron":
		h := sha3.NewLegacyKeccak256()
		h.Write(key[:])
		var account [20]byte
		copy(account[:], h.Sum(nil)[12:])
		return TronAddress(account), nil
	case "solana":
		return SolanaAddress(ed25519Public(key)), nil
	case "stellar":
		return StellarAddress(ed25519Public(key)), nil
	default:
		return "", fmt.Errorf("%w %q: no deposit address generator", ErrUnknownChain, chain)
	}
}

func ed25519Public(seed [32]byte) [32]byte {
	var pub [32]byte
	copy(pub[:], ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey))
	return pub
}

// DepositTag derives the memo a deposit must carry on a chain that requires
// one (Chain.RequiresMemo): ten decimal digits, which ValidateTag accepts
// as a Stellar memo.
func DepositTag(seed []byte) string {
	h := sha256.Sum256(append([]byte("payments/deposit-tag\x00"), seed...))
	return strconv.FormatUint(1_000_000_000+binary.BigEndian.Uint64(h[:8])%9_000_000_000, 10)
}

// SandboxTxHash derives the transaction hash of a simulated deposit on
// chain, in the chain's usual form.
func SandboxTxHash(chain string, seed []byte) string {
	h := sha256.Sum256(append([]byte("payments/sandbox-tx\x00"), seed...))
	switch chain {
	case "ethereum", "base":
		return "0x" + hex.EncodeToString(h[:])
	case "solana": // a 64-byte signature
		h2 := sha256.Sum256(h[:])
		return base58Encode(append(h[:], h2[:]...))
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
