package evm

import (
	"context"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/core/types"

	"payments/rails/provider"
)

// fees are what a transaction offers per unit of gas. A chain whose blocks
// carry a base fee (EIP-1559) gets a tip and a fee cap; one without gets a
// gas price (legacy).
type fees struct {
	legacy   bool
	gasPrice *big.Int // legacy
	tip      *big.Int
	feeCap   *big.Int
	baseFee  *big.Int // the next block's, as the node predicts it
}

// currentFees asks the node: the base fee of the next block and the tip at
// the configured percentile of recent blocks (eth_feeHistory), falling back
// to the node's suggested tip when recent blocks paid none. The fee cap is
// twice the base fee plus the tip, so a transaction survives several full
// blocks of rising base fees; it is held to the configured ceiling.
func (a *Adapter) currentFees(ctx context.Context) (fees, error) {
	return currentFees(ctx, a.node, a.cfg)
}

func currentFees(ctx context.Context, n *node, c *config) (fees, error) {
	fh, err := n.feeHistory(ctx, c.historyBlocks, c.tipPercentile)
	if err != nil {
		return fees{}, err
	}
	if allZero(fh.BaseFee) { // no base fee: a legacy chain (or one that charges none)
		price, err := n.gasPrice(ctx)
		if err != nil {
			return fees{}, err
		}
		if c.maxFeePerGas != nil && price.Cmp(c.maxFeePerGas) > 0 {
			return fees{}, provider.Errorf(provider.ErrUnavailable, "the gas price %s wei is above the ceiling of %s", price, c.maxFeePerGas)
		}
		return fees{legacy: true, gasPrice: price}, nil
	}
	base := new(big.Int).Set(fh.BaseFee[len(fh.BaseFee)-1])
	var tips []*big.Int
	for _, r := range fh.Reward {
		if len(r) > 0 && r[0] != nil && r[0].Sign() > 0 {
			tips = append(tips, r[0])
		}
	}
	var tip *big.Int
	if len(tips) > 0 {
		sort.Slice(tips, func(i, j int) bool { return tips[i].Cmp(tips[j]) < 0 })
		tip = new(big.Int).Set(tips[len(tips)/2])
	} else if tip, err = n.suggestTip(ctx); err != nil {
		return fees{}, err
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
	if max := c.maxFeePerGas; max != nil && feeCap.Cmp(max) > 0 {
		if new(big.Int).Add(base, tip).Cmp(max) > 0 {
			return fees{}, provider.Errorf(provider.ErrUnavailable, "the base fee %s wei plus the tip is above the ceiling of %s", base, max)
		}
		feeCap.Set(max)
	}
	return fees{tip: tip, feeCap: feeCap, baseFee: base}, nil
}

func allZero(v []*big.Int) bool {
	for _, x := range v {
		if x != nil && x.Sign() != 0 {
			return false
		}
	}
	return true
}

// bumped returns the fees of a replacement for tx: each field raised by the
// configured percentage (nodes take a replacement only at 10 % or more on
// both), and at least what the chain asks now. ok is false when the ceiling
// forbids it.
func (a *Adapter) bumped(tx *types.Transaction, now fees) (fees, bool) {
	up := func(v *big.Int) *big.Int {
		r := new(big.Int).Mul(v, big.NewInt(int64(100+a.cfg.bumpPercent)))
		r.Add(r, big.NewInt(99))
		r.Div(r, big.NewInt(100))
		if r.Cmp(v) <= 0 {
			r.Add(v, big.NewInt(1))
		}
		return r
	}
	max := a.cfg.maxFeePerGas
	if tx.Type() == types.LegacyTxType {
		p := up(tx.GasPrice())
		if now.legacy && now.gasPrice.Cmp(p) > 0 {
			p = now.gasPrice
		}
		if max != nil && p.Cmp(max) > 0 {
			return fees{}, false
		}
		return fees{legacy: true, gasPrice: p}, true
	}
	if now.legacy {
		return fees{}, false // the chain stopped charging a base fee: leave it to an operator
	}
	tip := up(tx.GasTipCap())
	if now.tip.Cmp(tip) > 0 {
		tip = new(big.Int).Set(now.tip)
	}
	feeCap := up(tx.GasFeeCap())
	if floor := new(big.Int).Add(new(big.Int).Mul(now.baseFee, big.NewInt(2)), tip); floor.Cmp(feeCap) > 0 {
		feeCap = floor
	}
	if max != nil && feeCap.Cmp(max) > 0 {
		return fees{}, false
	}
	return fees{tip: tip, feeCap: feeCap, baseFee: now.baseFee}, true
}
