package rails

import "testing"

// BenchmarkSandboxRate prices GHS in USD, as every payout's spend is.
func BenchmarkSandboxRate(b *testing.B) {
	r := SandboxRates{SpreadBasisPoints: 50}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Rate("GHS", "USD"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSandboxRateMemo checks that a memoized rate is the one computed, and
// that a caller changing its copy does not change the next answer.
func TestSandboxRateMemo(t *testing.T) {
	r := SandboxRates{SpreadBasisPoints: 50}
	first, err := r.Rate("NGN", "KES")
	if err != nil {
		t.Fatal(err)
	}
	want := first.String()
	first.Value.SetInt64(7)
	again, _ := r.Rate("NGN", "KES")
	if again.String() != want {
		t.Fatalf("memoized rate %s, want %s", again.String(), want)
	}
	other, _ := SandboxRates{SpreadBasisPoints: 0}.Rate("NGN", "KES")
	if other.String() == want {
		t.Fatalf("spread ignored: %s", other.String())
	}
}
