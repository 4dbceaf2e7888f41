package rails

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/apd/v3"

	"payments/ledger"
)

// Rate is an all-in exchange rate: units of To per one unit of From, with
// the spread already taken, so it is exactly what a conversion, a
// cross-currency payout or an order applies.
type Rate struct {
	From, To string
	Value    apd.Decimal
}

// String is the rate as a decimal string.
func (r Rate) String() string { return r.Value.Text('f') }

// RateSource gives the current all-in rate for a pair. Implementations are
// safe for concurrent use.
type RateSource interface {
	Rate(from, to string) (Rate, error)
}

// ErrUnsupportedCurrency is returned for a currency the source does not
// price; ErrRateUnavailable when the source cannot price a supported pair
// right now (the API answers 400 and 503).
var (
	ErrUnsupportedCurrency = errors.New("rails: unsupported currency")
	ErrRateUnavailable     = errors.New("rails: exchange rate unavailable")
)

// RateSignificantDigits is the precision of every rate we serve.
const RateSignificantDigits = 10

// SandboxRates is the sandbox's rate source: a fixed table of units per US
// dollar, with a spread. It is deterministic, so tests and merchants'
// integration suites see the same figures on every run.
type SandboxRates struct {
	SpreadBasisPoints int64 // taken from every cross-currency rate
}

// unitsPerUSD is the sandbox mid-market table. Every currency the ledger
// holds is here, so every pair the capabilities list can be priced.
var unitsPerUSD = map[string]string{
	"USD": "1", "EUR": "0.92", "GBP": "0.79", "USDC": "1", "USDT": "1", "EURC": "0.92",
	"GHS": "15.6", "NGN": "1550", "KES": "129", "UGX": "3700", "TZS": "2650", "RWF": "1420",
	"XOF": "603", "XAF": "603", "ZAR": "18.3", "ZMW": "26.5", "EGP": "48.5", "ETB": "57",
	"MAD": "9.9", "MWK": "1735", "MZN": "63.9", "NAD": "18.3", "BWP": "13.6", "AOA": "915",
	"BIF": "2900", "CDF": "2850", "GMD": "68", "GNF": "8600", "LRD": "195", "SLE": "22.7",
}

// SupportedRateCurrencies lists the currencies the sandbox table prices.
func SupportedRateCurrencies() []string {
	return slices.Sorted(maps.Keys(unitsPerUSD))
}

var rateContext = apd.BaseContext.WithPrecision(RateSignificantDigits)

func init() {
	rateContext.Rounding = apd.RoundDown
	for c := range unitsPerUSD {
		if _, ok := ledger.LookupCurrency(c); !ok {
			panic("rails: rate table prices unknown currency " + c)
		}
	}
}

// Rate returns units of to per unit of from: mid(to)/mid(from) less the
// spread, rounded down to RateSignificantDigits, so the house never gives
// more than the table says.
func (r SandboxRates) Rate(from, to string) (Rate, error) {
	mf, ok1 := unitsPerUSD[from]
	mt, ok2 := unitsPerUSD[to]
	if !ok1 || !ok2 {
		bad := from
		if ok1 {
			bad = to
		}
		return Rate{}, fmt.Errorf("%w: %s. Supported: %s", ErrUnsupportedCurrency, bad, strings.Join(SupportedRateCurrencies(), ", "))
	}
	out := Rate{From: from, To: to}
	if from == to {
		out.Value.SetInt64(1)
		return out, nil
	}
	// The table is fixed: each pair is computed once (a payout by a key
	// asks for its currency's USD rate every time, for its spend).
	key := sandboxPair{from, to, r.SpreadBasisPoints}
	if v, ok := sandboxRatesDone.Load(key); ok {
		cached := v.(*apd.Decimal)
		out.Value.Set(cached)
		return out, nil
	}
	var f, t apd.Decimal
	f.SetString(mf)
	t.SetString(mt)
	crossRate(&out.Value, &f, &t, r.SpreadBasisPoints)
	done := new(apd.Decimal)
	done.Set(&out.Value)
	sandboxRatesDone.Store(key, done)
	return out, nil
}

// crossRate sets out to units of to per unit of from, given each one's mid
// (units per USD): mt/mf less spreadBP basis points, rounded down to
// RateSignificantDigits.
func crossRate(out, mf, mt *apd.Decimal, spreadBP int64) {
	var q, keep apd.Decimal
	wide := apd.BaseContext.WithPrecision(34)
	wide.Quo(&q, mt, mf)
	keep.SetFinite(10_000-spreadBP, -4)
	wide.Mul(&q, &q, &keep)
	rateContext.Round(out, &q)
	out.Reduce(out)
}

// sandboxRatesDone holds each sandbox rate once computed, by pair and
// spread; never modified after it is stored.
var sandboxRatesDone sync.Map // sandboxPair → *apd.Decimal

type sandboxPair struct {
	from, to string
	spread   int64
}

// NoRates is the production rate source until a provider is connected:
// every cross-currency pair is unavailable.
type NoRates struct{}

// Rate implements RateSource.
func (NoRates) Rate(from, to string) (Rate, error) {
	if _, ok := ledger.LookupCurrency(from); !ok {
		return Rate{}, fmt.Errorf("%w: %s", ErrUnsupportedCurrency, from)
	}
	if _, ok := ledger.LookupCurrency(to); !ok {
		return Rate{}, fmt.Errorf("%w: %s", ErrUnsupportedCurrency, to)
	}
	if from == to {
		out := Rate{From: from, To: to}
		out.Value.SetInt64(1)
		return out, nil
	}
	return Rate{}, ErrRateUnavailable
}

// ConvertFrom returns the destination amount for a source amount at rate:
// from × rate, rounded down to the destination's minor unit.
func ConvertFrom(r Rate, from ledger.Minor) (ledger.Minor, error) {
	return convert(r, from, true)
}

// ConvertTo returns the source amount needed to receive to at rate:
// to ÷ rate, rounded up to the source's minor unit, so the destination
// amount is always covered.
func ConvertTo(r Rate, to ledger.Minor) (ledger.Minor, error) {
	return convert(r, to, false)
}

func convert(r Rate, amount ledger.Minor, forward bool) (ledger.Minor, error) {
	cf, _ := ledger.LookupCurrency(r.From)
	ct, _ := ledger.LookupCurrency(r.To)
	if r.Value.Sign() <= 0 {
		return 0, errors.New("rails: rate is not positive")
	}
	ctx := apd.BaseContext.WithPrecision(40)
	var a, out apd.Decimal
	if forward {
		a.SetFinite(int64(amount), -int32(cf.Decimals))
		ctx.Mul(&out, &a, &r.Value)
		ctx.Rounding = apd.RoundDown
		ctx.Quantize(&out, &out, -int32(ct.Decimals))
	} else {
		a.SetFinite(int64(amount), -int32(ct.Decimals))
		ctx.Quo(&out, &a, &r.Value)
		ctx.Rounding = apd.RoundUp
		ctx.Quantize(&out, &out, -int32(cf.Decimals))
	}
	out.Exponent = 0 // the coefficient is the amount in minor units
	v, err := out.Int64()
	if err != nil || v < 0 || ledger.Minor(v) > ledger.AmountMax {
		return 0, errors.New("rails: converted amount is out of range")
	}
	return ledger.Minor(v), nil
}
