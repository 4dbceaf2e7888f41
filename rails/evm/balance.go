package evm

import (
	"context"
	"iter"
	"maps"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"payments/rails/provider"
)

// Balances reports the hot wallet's balance of each configured token at
// the latest block, in the currency's minor units (rounded down: dust
// below the currency's precision is not counted), for reconciliation.
// Errors: ErrUnavailable when the node cannot be read.
func (a *Adapter) Balances(ctx context.Context) ([]provider.Balance, error) {
	if a.hot == nil {
		return nil, nil
	}
	if err := a.node.ready(ctx); err != nil {
		return nil, err
	}
	out := make([]provider.Balance, 0, len(a.cfg.tokens))
	for h, err := range a.node.holdings(ctx, a.cfg.tokens, a.hotAddr) {
		if err != nil {
			return nil, err
		}
		if h.minorErr != nil {
			return nil, provider.Errorf(provider.ErrUnavailable, "the %s balance: %v", h.currency, h.minorErr)
		}
		out = append(out, provider.Balance{Currency: h.currency, AmountMinor: h.minor, Exponent: h.tok.exponent, Account: a.hotAddr.Hex()})
	}
	return out, nil
}

// holding is an address's balance of one configured token: in the
// token's units and in the currency's minor units (rounded down), or
// minorErr when those cannot be had.
type holding struct {
	currency string
	tok      *token
	units    *big.Int
	minor    int64
	minorErr error
}

// holdings reads addr's balance of each of tokens at the latest block, one
// after the other in the order of their currencies; an error reading one
// ends them.
func (n *node) holdings(ctx context.Context, tokens map[string]*token, addr common.Address) iter.Seq2[holding, error] {
	return func(yield func(holding, error) bool) {
		for _, cur := range slices.Sorted(maps.Keys(tokens)) {
			tok := tokens[cur]
			units, err := n.tokenBalance(ctx, tok.address, addr)
			if err != nil {
				yield(holding{}, err)
				return
			}
			minor, _, err := toMinor(units, tok.decimals, tok.exponent)
			if !yield(holding{currency: cur, tok: tok, units: units, minor: minor, minorErr: err}, nil) {
				return
			}
		}
	}
}
