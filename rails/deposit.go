package rails

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"payments/ledger"
)

// Deposit instructions for orders on the sandbox: where the customer sends
// the money. Each order gets its own: a fresh deposit address on the
// method's chain (syntactically valid, checksum and all, so a wallet or a
// validator accepts it), a fresh virtual account number, or, for mobile
// money, the payer's phone, to which the collection rail sends the prompt.
// Nothing on a real chain or bank is behind them: the sandbox funds them
// through POST /v1/simulations/order-deposit.

// sandboxVirtualAccountPrefix starts every sandbox virtual account number:
// ten digits in a range of their own, easy to tell from a real account.
const sandboxVirtualAccountPrefix = "98"

// chainNames are the display names of the chains the catalogue lists.
var chainNames = map[string]string{
	"tron": "Tron", "ethereum": "Ethereum", "solana": "Solana", "stellar": "Stellar",
	"base": "Base", "polygon": "Polygon", "bsc": "BNB Smart Chain", "arbitrum": "Arbitrum",
}

// ChainName is the display name of a chain id ("solana" → "Solana").
func ChainName(chain string) string {
	if n, ok := chainNames[chain]; ok {
		return n
	}
	if chain == "" {
		return ""
	}
	return strings.ToUpper(chain[:1]) + chain[1:]
}

// SandboxDepositInstructions provisions an order's instructions for origin
// method m. accountName is the name a virtual account shows (the
// organization's); payer is the phone a mobile money prompt goes to.
func SandboxDepositInstructions(m Method, accountName, payer string) (ledger.OrderInstructions, error) {
	switch m.Type {
	case "crypto":
		addr, tag, err := newDepositAddress(m.Chain)
		if err != nil {
			return ledger.OrderInstructions{}, err
		}
		return ledger.OrderInstructions{Type: ledger.InstructionsCrypto, Chain: ChainName(m.Chain), Address: addr, Tag: tag}, nil
	case "bank":
		return ledger.OrderInstructions{
			Type:          ledger.InstructionsVirtualAccount,
			Bank:          "Sandbox Bank " + m.Country,
			AccountNumber: sandboxVirtualAccountPrefix + randomDigits(8),
			AccountName:   accountName,
		}, nil
	case "mobile_money":
		return ledger.OrderInstructions{Type: ledger.InstructionsMobileMoney, AccountNumber: payer}, nil
	}
	return ledger.OrderInstructions{}, fmt.Errorf("rails: method %s of type %s takes no deposits", m.Code, m.Type)
}

// newDepositAddress draws an address on chain; tag is the memo the sender
// must include on chains where deposit addresses are shared (Stellar).
func newDepositAddress(chain string) (addr, tag string, err error) {
	switch chain {
	case "tron":
		payload := append([]byte{0x41}, randomBytes(20)...)
		sum1 := sha256.Sum256(payload)
		sum2 := sha256.Sum256(sum1[:])
		return base58(append(payload, sum2[:4]...)), "", nil
	case "ethereum", "base", "polygon", "bsc", "arbitrum":
		// All lower case: valid, and read as carrying no EIP-55 checksum.
		return "0x" + hex.EncodeToString(randomBytes(20)), "", nil
	case "solana":
		return base58(randomBytes(32)), "", nil
	case "stellar":
		return stellarAccountID(randomBytes(32)), randomDigits(9), nil
	}
	return "", "", fmt.Errorf("rails: no deposit addresses on chain %q", chain)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// randomDigits returns n decimal digits, the first not zero.
func randomDigits(n int) string {
	out := make([]byte, n)
	for i := range out {
		lo := int64(0)
		if i == 0 {
			lo = 1
		}
		v, _ := rand.Int(rand.Reader, big.NewInt(10-lo))
		out[i] = byte('0' + lo + v.Int64())
	}
	return string(out)
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58 encodes b in Bitcoin's alphabet, leading zero bytes as '1'.
func base58(b []byte) string {
	n := new(big.Int).SetBytes(b)
	var out []byte
	radix, mod := big.NewInt(58), new(big.Int)
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

// stellarAccountID is the StrKey of an ed25519 public key: version byte
// (6 << 3, "G"), the key, and a CRC-16/XMODEM checksum, little-endian, in
// unpadded base32.
func stellarAccountID(key []byte) string {
	payload := append([]byte{6 << 3}, key...)
	payload = binary.LittleEndian.AppendUint16(payload, crc16XModem(payload))
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(payload)
}

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
