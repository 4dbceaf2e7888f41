package rails

import (
	"crypto/rand"
	"fmt"
	"math/big"

	"payments/ledger"
	"payments/ledger/orders"
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

// SandboxDepositInstructions provisions an order's instructions for origin
// method m. accountName is the name a virtual account shows (the
// organization's); payer is the phone a mobile money prompt goes to.
func SandboxDepositInstructions(m Method, accountName, payer string) (orders.Instructions, error) {
	switch m.Type {
	case ledger.MethodCrypto:
		addr, tag, err := newDepositAddress(m.Chain)
		if err != nil {
			return orders.Instructions{}, err
		}
		return orders.Instructions{Type: orders.InstructionsCrypto, Chain: ChainName(m.Chain), Address: addr, Tag: tag}, nil
	case ledger.MethodBankTransfer:
		bank, ok := DefaultCatalogue().VirtualAccountBank(m.Currency)
		if !ok {
			bank = "Sandbox Bank " + m.Country
		}
		return orders.Instructions{
			Type:          orders.InstructionsVirtualAccount,
			Bank:          bank,
			AccountNumber: sandboxVirtualAccountPrefix + depositDigits(8),
			AccountName:   accountName,
		}, nil
	case ledger.MethodMobileMoney:
		return orders.Instructions{Type: orders.InstructionsMobileMoney, AccountNumber: payer}, nil
	}
	return orders.Instructions{}, fmt.Errorf("rails: method %s of type %s takes no deposits", m.Code, m.Type)
}

// newDepositAddress draws an address on chain, from a fresh random seed
// through the deposit address generator; tag is the memo the sender must
// include on chains where deposit addresses are shared (Stellar).
func newDepositAddress(chain string) (addr, tag string, err error) {
	seed := make([]byte, 32)
	rand.Read(seed)
	if addr, err = DepositAddress(chain, seed); err != nil {
		return "", "", err
	}
	if ch, ok := DefaultCatalogue().ParseChain(chain); ok && ch.RequiresMemo {
		tag = DepositTag(seed)
	}
	return addr, tag, nil
}

// depositDigits returns n decimal digits, the first not zero.
func depositDigits(n int) string {
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
