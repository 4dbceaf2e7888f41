package evm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The ERC-20 calls and event this package uses, encoded by hand: two calls
// and one event do not need an ABI parser.
var (
	selTransfer  = crypto.Keccak256([]byte("transfer(address,uint256)"))[:4]
	selBalanceOf = crypto.Keccak256([]byte("balanceOf(address)"))[:4]
	// TransferTopic is topic 0 of ERC-20's Transfer(address indexed from,
	// address indexed to, uint256 value).
	TransferTopic = common.BytesToHash(crypto.Keccak256([]byte("Transfer(address,address,uint256)")))

	selErrorString = crypto.Keccak256([]byte("Error(string)"))[:4]
	selPanic       = crypto.Keccak256([]byte("Panic(uint256)"))[:4]
	// OpenZeppelin 5's ERC-20 custom errors (EIP-6093).
	customErrors = map[[4]byte]string{
		[4]byte(crypto.Keccak256([]byte("ERC20InsufficientBalance(address,uint256,uint256)"))[:4]): "insufficient token balance",
		[4]byte(crypto.Keccak256([]byte("ERC20InvalidReceiver(address)"))[:4]):                     "invalid receiver",
		[4]byte(crypto.Keccak256([]byte("ERC20InvalidSender(address)"))[:4]):                       "invalid sender",
		[4]byte(crypto.Keccak256([]byte("EnforcedPause()"))[:4]):                                   "the token is paused",
	}
)

func transferData(to common.Address, amount *big.Int) []byte {
	b := make([]byte, 0, 68)
	b = append(b, selTransfer...)
	b = append(b, common.LeftPadBytes(to.Bytes(), 32)...)
	return append(b, common.LeftPadBytes(amount.Bytes(), 32)...)
}

// parseTransferData reads transfer(to, amount) call data.
func parseTransferData(data []byte) (common.Address, *big.Int, error) {
	if len(data) != 68 || string(data[:4]) != string(selTransfer) {
		return common.Address{}, nil, errors.New("not an ERC-20 transfer call")
	}
	for _, b := range data[4:16] {
		if b != 0 {
			return common.Address{}, nil, errors.New("not an ERC-20 transfer call")
		}
	}
	return common.BytesToAddress(data[16:36]), new(big.Int).SetBytes(data[36:68]), nil
}

func balanceOfData(a common.Address) []byte {
	return append(append([]byte{}, selBalanceOf...), common.LeftPadBytes(a.Bytes(), 32)...)
}

// revertReason says in words what revert data means, or "" when it cannot.
func revertReason(data []byte) string {
	switch {
	case len(data) < 4:
		return ""
	case string(data[:4]) == string(selErrorString) && len(data) >= 68:
		n := new(big.Int).SetBytes(data[36:68])
		if !n.IsUint64() || 68+n.Uint64() > uint64(len(data)) || n.Uint64() > 256 {
			return ""
		}
		return strings.ToValidUTF8(string(data[68:68+n.Uint64()]), "?")
	case string(data[:4]) == string(selPanic) && len(data) == 36:
		return fmt.Sprintf("panic 0x%x", binary.BigEndian.Uint64(data[28:36]))
	}
	if s, ok := customErrors[[4]byte(data[:4])]; ok {
		return s
	}
	return fmt.Sprintf("custom error 0x%x", data[:4])
}
