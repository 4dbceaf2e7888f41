package rails

import (
	"errors"
	"testing"

	"payments/ledger"
)

func TestSandboxRates(t *testing.T) {
	src := SandboxRates{SpreadBasisPoints: 100}
	for _, tc := range []struct {
		from, to, want string
	}{
		{"USD", "GHS", "15.444"},        // 15.6 × 0.99
		{"GHS", "USD", "0.06346153846"}, // 1/15.6 × 0.99, 10 significant digits, rounded down
		{"GHS", "GHS", "1"},
		{"USDT", "USDC", "0.99"},
		{"KES", "UGX", "28.39534883"},
	} {
		r, err := src.Rate(tc.from, tc.to)
		if err != nil {
			t.Fatalf("%s→%s: %v", tc.from, tc.to, err)
		}
		if r.String() != tc.want {
			t.Errorf("%s→%s = %s, want %s", tc.from, tc.to, r, tc.want)
		}
	}
	if _, err := src.Rate("GHS", "XYZ"); !errors.Is(err, ErrUnsupportedCurrency) {
		t.Fatalf("unknown currency: %v", err)
	}
	if _, err := (NoRates{}).Rate("GHS", "USD"); !errors.Is(err, ErrRateUnavailable) {
		t.Fatalf("production source: %v", err)
	}
}

// Conversions round against the house's favour never: the destination is
// rounded down, and a source computed from a destination covers it.
func TestConvert(t *testing.T) {
	src := SandboxRates{SpreadBasisPoints: 100}
	ghsUSD, _ := src.Rate("GHS", "USD")
	usdGHS, _ := src.Rate("USD", "GHS")
	ugx, _ := src.Rate("USD", "UGX")
	usdt, _ := src.Rate("GHS", "USDT")
	for _, tc := range []struct {
		r        Rate
		forward  bool
		in, want ledger.Minor
	}{
		{ghsUSD, true, 100_000, 6346},   // 1000.00 GHS → 63.46 USD (63.4615…)
		{usdGHS, true, 10_000, 154_440}, // 100.00 USD → 1544.40 GHS
		{ugx, true, 1_001, 36_666},      // 10.01 USD × 3663 = 36666.63 UGX, down
		{usdt, true, 1_560, 989_999},    // 15.60 GHS × 0.06346153846 = 0.98999999…, down
		{ghsUSD, false, 6346, 99_998},   // 63.46 USD needs 999.9757… GHS, up
		{usdGHS, false, 154_440, 10_000},
	} {
		var got ledger.Minor
		var err error
		if tc.forward {
			got, err = ConvertFrom(tc.r, tc.in)
		} else {
			got, err = ConvertTo(tc.r, tc.in)
		}
		if err != nil || got != tc.want {
			t.Errorf("%s→%s forward=%v %d: got %d %v, want %d", tc.r.From, tc.r.To, tc.forward, tc.in, got, err, tc.want)
		}
		if !tc.forward {
			back, _ := ConvertFrom(tc.r, got)
			if back < tc.in {
				t.Errorf("%d from %s covers only %d of %d", got, tc.r.From, back, tc.in)
			}
		}
	}
}
