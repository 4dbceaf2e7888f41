package evm

import (
	"context"
	"maps"
	"slices"

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
	curs := slices.Sorted(maps.Keys(a.cfg.tokens))
	out := make([]provider.Balance, 0, len(curs))
	for _, cur := range curs {
		tok := a.cfg.tokens[cur]
		units, err := a.node.tokenBalance(ctx, tok.address, a.hotAddr)
		if err != nil {
			return nil, err
		}
		minor, _, err := toMinor(units, tok.decimals, tok.exponent)
		if err != nil {
			return nil, provider.Errorf(provider.ErrUnavailable, "the %s balance: %v", cur, err)
		}
		out = append(out, provider.Balance{Currency: cur, AmountMinor: minor, Exponent: tok.exponent, Account: a.hotAddr.Hex()})
	}
	return out, nil
}
