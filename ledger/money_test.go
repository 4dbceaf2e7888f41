package ledger

import (
	"errors"
	"testing"
)

// Currencies of 2, 0 and 6 decimals, for the amount tests.
var (
	ghs, _  = LookupCurrency("GHS")
	xof, _  = LookupCurrency("XOF")
	usdt, _ = LookupCurrency("USDT")
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		name string
		text string
		cur  Currency
		want Minor
		err  bool
	}{
		{"whole", "150", ghs, 15000, false},
		{"cents", "150.25", ghs, 15025, false},
		{"one cent", "0.01", ghs, 1, false},
		{"trailing zeros are exact", "10.500", ghs, 1050, false},
		{"exponent", "1.5e2", ghs, 15000, false},
		{"negative exponent exact", "15000e-2", ghs, 15000, false},
		{"zero decimals", "1500", xof, 1500, false},
		{"six decimals", "1.123456", usdt, 1123456, false},
		{"too precise", "10.001", ghs, 0, true},
		{"too precise for franc", "10.5", xof, 0, true},
		{"too precise by exponent", "1e-3", ghs, 0, true},
		{"zero", "0", ghs, 0, true},
		{"zero with decimals", "0.00", ghs, 0, true},
		{"negative", "-1", ghs, 0, true},
		{"negative zero", "-0.00", ghs, 0, true},
		{"NaN", "NaN", ghs, 0, true},
		{"Infinity", "Infinity", ghs, 0, true},
		{"inf", "inf", ghs, 0, true},
		{"plus sign", "+1", ghs, 0, true},
		{"leading dot", ".5", ghs, 0, true},
		{"trailing dot", "5.", ghs, 0, true},
		{"space", " 5", ghs, 0, true},
		{"empty", "", ghs, 0, true},
		{"hex", "0x10", ghs, 0, true},
		{"huge exponent", "1e999999999", ghs, 0, true},
		{"tiny exponent", "1e-999999999", ghs, 0, true},
		{"too long", "1234567890123456789012345678901234567890123", ghs, 0, true},
		{"above max", "10000000000000.01", ghs, 0, true},
		{"at max", "10000000000000.00", ghs, AmountMax, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAmount(tt.text, tt.cur)
			if tt.err {
				if err == nil {
					t.Fatalf("ParseAmount(%q) = %d, want error", tt.text, got)
				}
				if !errors.Is(err, ErrValidation) {
					t.Fatalf("error %v is not a validation error", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseAmount(%q) = %d, %v; want %d", tt.text, got, err, tt.want)
			}
		})
	}
}

func TestFormatMinor(t *testing.T) {
	tests := []struct {
		m    Minor
		cur  Currency
		want string
	}{
		{15000, ghs, "150.00"},
		{5, ghs, "0.05"},
		{-5, ghs, "-0.05"},
		{0, ghs, "0.00"},
		{-15025, ghs, "-150.25"},
		{1500, xof, "1500"},
		{-1500, xof, "-1500"},
		{1, usdt, "0.000001"},
		{AmountMax, ghs, "10000000000000.00"},
	}
	for _, tt := range tests {
		if got := FormatMinor(tt.m, tt.cur); got != tt.want {
			t.Errorf("FormatMinor(%d, %s) = %q, want %q", tt.m, tt.cur.Code, got, tt.want)
		}
	}
}

func TestBasisPointsHalfUp(t *testing.T) {
	tests := []struct {
		amount Minor
		bps    int64
		want   Minor
	}{
		{10000, 100, 100},
		{50, 100, 1},  // 0.5 rounds up
		{49, 100, 0},  // 0.49 rounds down
		{150, 100, 2}, // 1.5 rounds up
		{AmountMax, 10_000, AmountMax},
		{1, 0, 0},
	}
	for _, tt := range tests {
		if got := basisPointsHalfUp(tt.amount, tt.bps); got != tt.want {
			t.Errorf("basisPointsHalfUp(%d, %d) = %d, want %d", tt.amount, tt.bps, got, tt.want)
		}
	}
}

// FuzzParseAmount checks that parsing never panics, and that whatever parses
// formats back to a literal that parses to the same amount.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"150.00", "1e2", "0.01", "NaN", "-1", "1e-999999", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseAmount(text, ghs)
		if err != nil {
			return
		}
		if m <= 0 || m > AmountMax {
			t.Fatalf("ParseAmount(%q) = %d, out of range", text, m)
		}
		again, err := ParseAmount(FormatMinor(m, ghs), ghs)
		if err != nil || again != m {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", text, m, FormatMinor(m, ghs), again, err)
		}
	})
}
