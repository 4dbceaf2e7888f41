package evm

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rlp"

	"payments/rails/provider"
)

// A payout's Prepared:
//
//   - Key is the hash of the newest transaction, 0x-prefixed hex.
//   - Payload is that transaction's signed bytes (EIP-2718 typed, or a
//     legacy RLP list) when it is the only one; after a replacement it is
//     the byte chainMarker followed by the RLP list of every transaction of
//     the payout, newest first, all at one nonce.
//
// chainMarker (0xb0) never begins a signed transaction: typed ones begin
// with 0x00–0x7f and legacy ones with an RLP list header of 0xc0 or more.
// Every transaction a payout ever had stays in its Prepared, so whichever
// is mined is found by hash.
const chainMarker = 0xb0

// replacementsMax bounds a payout's chain of replacements; past it no more
// are proposed (an operator looks at a payout stuck through so many bumps).
const replacementsMax = 16

func encodePrepared(txs []*types.Transaction) (provider.Prepared, error) {
	if len(txs) == 1 {
		raw, err := txs[0].MarshalBinary()
		if err != nil {
			return provider.Prepared{}, err
		}
		return provider.Prepared{Key: txs[0].Hash().Hex(), Payload: raw}, nil
	}
	list := make([][]byte, len(txs))
	for i, tx := range txs {
		raw, err := tx.MarshalBinary()
		if err != nil {
			return provider.Prepared{}, err
		}
		list[i] = raw
	}
	enc, err := rlp.EncodeToBytes(list)
	if err != nil {
		return provider.Prepared{}, err
	}
	return provider.Prepared{Key: txs[0].Hash().Hex(), Payload: append([]byte{chainMarker}, enc...)}, nil
}

// decodePrepared reads a payout's Prepared back and checks that each
// transaction is the hot wallet's, for this chain, at one nonce, and that
// Key names the newest. An error here means the Prepared is not one of
// ours: it is never a refusal by the chain.
func (a *Adapter) decodePrepared(p provider.Prepared) ([]*types.Transaction, error) {
	if len(p.Payload) == 0 || len(p.Payload) > 64<<10 {
		return nil, errors.New("evm: the Prepared has no payload or one too large")
	}
	var raws [][]byte
	if p.Payload[0] == chainMarker {
		if err := rlp.DecodeBytes(p.Payload[1:], &raws); err != nil {
			return nil, fmt.Errorf("evm: the Prepared's payload: %w", err)
		}
		if len(raws) < 2 || len(raws) > replacementsMax+1 {
			return nil, errors.New("evm: the Prepared's chain of transactions has a bad length")
		}
	} else {
		raws = [][]byte{p.Payload}
	}
	txs := make([]*types.Transaction, len(raws))
	for i, raw := range raws {
		tx := new(types.Transaction)
		if err := tx.UnmarshalBinary(raw); err != nil {
			return nil, fmt.Errorf("evm: the Prepared's transaction %d: %w", i, err)
		}
		if !bytes.Equal(mustBinary(tx), raw) {
			return nil, fmt.Errorf("evm: the Prepared's transaction %d is not canonical", i)
		}
		from, err := types.Sender(a.signer, tx)
		if err != nil || from != a.hotAddr {
			return nil, fmt.Errorf("evm: the Prepared's transaction %d is not signed by this instance's hot wallet for chain %s", i, a.cfg.chainID)
		}
		if i > 0 && tx.Nonce() != txs[0].Nonce() {
			return nil, errors.New("evm: the Prepared's transactions are at different nonces")
		}
		txs[i] = tx
	}
	if p.Key != txs[0].Hash().Hex() {
		return nil, errors.New("evm: the Prepared's key is not its newest transaction's hash")
	}
	return txs, nil
}

func mustBinary(tx *types.Transaction) []byte {
	b, err := tx.MarshalBinary()
	if err != nil {
		panic("evm: a decoded transaction does not encode: " + err.Error())
	}
	return b
}
