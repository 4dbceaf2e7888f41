package evm

import (
	"errors"
	"fmt"
	"math/big"
)

// toTokenUnits converts an amount in minor units of exponent to the token's
// base units (decimals). It refuses what does not convert exactly: money is
// never rounded on its way out.
func toTokenUnits(minor int64, exponent, decimals int) (*big.Int, error) {
	if minor <= 0 {
		return nil, errors.New("the amount must be positive")
	}
	if exponent < 0 || exponent > 36 {
		return nil, fmt.Errorf("exponent %d is out of range", exponent)
	}
	v := big.NewInt(minor)
	if decimals >= exponent {
		return v.Mul(v, pow10(decimals-exponent)), nil
	}
	q, r := new(big.Int).QuoRem(v, pow10(exponent-decimals), new(big.Int))
	if r.Sign() != 0 {
		return nil, fmt.Errorf("the amount has more decimal places than the token's %d", decimals)
	}
	return q, nil
}

// toMinor converts token base units to minor units of exponent, rounding
// down: what cannot be represented (dust below the currency's precision)
// is never credited. exact says whether nothing was dropped.
func toMinor(units *big.Int, decimals, exponent int) (minor int64, exact bool, err error) {
	if units.Sign() < 0 {
		return 0, false, errors.New("a negative token amount")
	}
	v := new(big.Int).Set(units)
	exact = true
	if decimals > exponent {
		var r big.Int
		v.QuoRem(v, pow10(decimals-exponent), &r)
		exact = r.Sign() == 0
	} else {
		v.Mul(v, pow10(exponent-decimals))
	}
	if !v.IsInt64() {
		return 0, false, errors.New("the amount does not fit in 64-bit minor units")
	}
	return v.Int64(), exact, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
