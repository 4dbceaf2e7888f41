package evm

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // BIP-32 fingerprints are defined with RIPEMD-160
)

// HardenedOffset is added to a child number for hardened derivation (the '
// of m/44'/60'/0').
const HardenedOffset = 1 << 31

var (
	versionXpub = [4]byte{0x04, 0x88, 0xb2, 0x1e}
	versionXprv = [4]byte{0x04, 0x88, 0xad, 0xe4}
)

// ExtendedKey is a BIP-32 extended key: a public one (xpub) derives
// addresses only; a private one (xprv) also signs. The service holds only
// the xpub of the deposit tree; the xprv is the sweeper's alone.
type ExtendedKey struct {
	depth       uint8
	parent      [4]byte // fingerprint of the parent key
	child       uint32
	chainCode   [32]byte
	pub         *secp256k1.PublicKey
	priv        *secp256k1.PrivateKey // nil for a public key
	fingerprint [4]byte
}

// NewMasterKey makes the master key of a BIP-32 tree from a seed (16 to 64
// bytes; a BIP-39 mnemonic's seed is 64).
func NewMasterKey(seed []byte) (*ExtendedKey, error) {
	if len(seed) < 16 || len(seed) > 64 {
		return nil, errors.New("evm: a BIP-32 seed is 16 to 64 bytes")
	}
	mac := hmac.New(sha512.New, []byte("Bitcoin seed"))
	mac.Write(seed)
	sum := mac.Sum(nil)
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(sum[:32]); overflow || k.IsZero() {
		return nil, errors.New("evm: the seed gives an invalid master key")
	}
	key := &ExtendedKey{priv: secp256k1.NewPrivateKey(&k)}
	copy(key.chainCode[:], sum[32:])
	key.pub = key.priv.PubKey()
	key.fingerprint = fingerprint(key.pub)
	return key, nil
}

// ParseExtendedKey reads a serialized xpub or xprv (Base58Check, mainnet
// versions).
func ParseExtendedKey(s string) (*ExtendedKey, error) {
	raw, err := base58Decode(s)
	if err != nil {
		return nil, fmt.Errorf("evm: extended key: %w", err)
	}
	if len(raw) != 82 {
		return nil, errors.New("evm: extended key: not 82 bytes")
	}
	sum := doubleSHA256(raw[:78])
	if !bytes.Equal(sum[:4], raw[78:]) {
		return nil, errors.New("evm: extended key: bad checksum")
	}
	key := &ExtendedKey{depth: raw[4], child: binary.BigEndian.Uint32(raw[9:13])}
	copy(key.parent[:], raw[5:9])
	copy(key.chainCode[:], raw[13:45])
	data := raw[45:78]
	switch [4]byte(raw[:4]) {
	case versionXpub:
		pub, err := secp256k1.ParsePubKey(data)
		if err != nil {
			return nil, fmt.Errorf("evm: extended key: %w", err)
		}
		key.pub = pub
	case versionXprv:
		if data[0] != 0 {
			return nil, errors.New("evm: extended key: bad private key prefix")
		}
		var k secp256k1.ModNScalar
		if overflow := k.SetByteSlice(data[1:]); overflow || k.IsZero() {
			return nil, errors.New("evm: extended key: invalid private key")
		}
		key.priv = secp256k1.NewPrivateKey(&k)
		key.pub = key.priv.PubKey()
	default:
		return nil, errors.New("evm: extended key: not an xpub or xprv")
	}
	key.fingerprint = fingerprint(key.pub)
	return key, nil
}

// IsPrivate reports whether the key can sign.
func (k *ExtendedKey) IsPrivate() bool { return k.priv != nil }

// Depth is the key's level in its tree (3 for m/44'/60'/0').
func (k *ExtendedKey) Depth() int { return int(k.depth) }

// Neuter returns the public key of k (an xpub from an xprv).
func (k *ExtendedKey) Neuter() *ExtendedKey {
	n := *k
	n.priv = nil
	return &n
}

// Child derives child i; i ≥ HardenedOffset is hardened and needs a
// private key.
func (k *ExtendedKey) Child(i uint32) (*ExtendedKey, error) {
	if k.depth == 255 {
		return nil, errors.New("evm: derivation deeper than 255 levels")
	}
	var data []byte
	if i >= HardenedOffset {
		if k.priv == nil {
			return nil, errors.New("evm: a hardened child needs the private key")
		}
		data = append([]byte{0}, k.priv.Serialize()...)
	} else {
		data = k.pub.SerializeCompressed()
	}
	data = binary.BigEndian.AppendUint32(data, i)
	mac := hmac.New(sha512.New, k.chainCode[:])
	mac.Write(data)
	sum := mac.Sum(nil)
	var il secp256k1.ModNScalar
	if overflow := il.SetByteSlice(sum[:32]); overflow {
		return nil, fmt.Errorf("evm: child %d is invalid; use the next index", i)
	}
	child := &ExtendedKey{depth: k.depth + 1, parent: k.fingerprint, child: i}
	copy(child.chainCode[:], sum[32:])
	if k.priv != nil {
		il.Add(&k.priv.Key)
		if il.IsZero() {
			return nil, fmt.Errorf("evm: child %d is invalid; use the next index", i)
		}
		child.priv = secp256k1.NewPrivateKey(&il)
		child.pub = child.priv.PubKey()
	} else {
		var p, q, r secp256k1.JacobianPoint
		secp256k1.ScalarBaseMultNonConst(&il, &p)
		k.pub.AsJacobian(&q)
		secp256k1.AddNonConst(&p, &q, &r)
		if r.Z.IsZero() || (r.X.IsZero() && r.Y.IsZero()) {
			return nil, fmt.Errorf("evm: child %d is invalid; use the next index", i)
		}
		r.ToAffine()
		child.pub = secp256k1.NewPublicKey(&r.X, &r.Y)
	}
	child.fingerprint = fingerprint(child.pub)
	return child, nil
}

// Derive follows a path of child numbers from k.
func (k *ExtendedKey) Derive(path ...uint32) (*ExtendedKey, error) {
	key := k
	for _, i := range path {
		var err error
		if key, err = key.Child(i); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// Address is the Ethereum address of the key.
func (k *ExtendedKey) Address() common.Address {
	b := k.pub.SerializeUncompressed()
	return common.BytesToAddress(crypto.Keccak256(b[1:])[12:])
}

// PrivateKey returns the signing key, or nil for a public key.
func (k *ExtendedKey) PrivateKey() *ecdsa.PrivateKey {
	if k.priv == nil {
		return nil
	}
	d := new(big.Int).SetBytes(k.priv.Serialize())
	key, err := crypto.ToECDSA(d.FillBytes(make([]byte, 32)))
	if err != nil {
		panic("evm: a valid secp256k1 scalar was refused: " + err.Error())
	}
	return key
}

// String serializes the key (xpub… or xprv…).
func (k *ExtendedKey) String() string {
	raw := make([]byte, 0, 82)
	if k.priv != nil {
		raw = append(raw, versionXprv[:]...)
	} else {
		raw = append(raw, versionXpub[:]...)
	}
	raw = append(raw, k.depth)
	raw = append(raw, k.parent[:]...)
	raw = binary.BigEndian.AppendUint32(raw, k.child)
	raw = append(raw, k.chainCode[:]...)
	if k.priv != nil {
		raw = append(raw, 0)
		raw = append(raw, k.priv.Serialize()...)
	} else {
		raw = append(raw, k.pub.SerializeCompressed()...)
	}
	sum := doubleSHA256(raw)
	return base58Encode(append(raw, sum[:4]...))
}

// GoString keeps a private key out of %#v.
func (k *ExtendedKey) GoString() string {
	if k.priv != nil {
		return "evm.ExtendedKey{private}"
	}
	return "evm.ExtendedKey{" + k.String() + "}"
}

func fingerprint(pub *secp256k1.PublicKey) [4]byte {
	sha := sha256.Sum256(pub.SerializeCompressed())
	h := ripemd160.New()
	h.Write(sha[:])
	var fp [4]byte
	copy(fp[:], h.Sum(nil))
	return fp
}

func doubleSHA256(b []byte) [32]byte {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	var out []byte
	mod := new(big.Int)
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

func base58Decode(s string) ([]byte, error) {
	if len(s) == 0 || len(s) > 200 {
		return nil, errors.New("bad length")
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	for _, c := range []byte(s) {
		i := bytes.IndexByte([]byte(base58Alphabet), c)
		if i < 0 {
			return nil, errors.New("not base58")
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(i)))
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}
