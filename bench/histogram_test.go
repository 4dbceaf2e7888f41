package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// quantileTolerance is how far a quantile read from a Histogram may be from
// the exact nearest-rank quantile of the same values: half a bucket.
const quantileTolerance = 1.0 / (2 * subBuckets)

func TestBucketBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    int64
	}{
		{"zero", 0},
		{"one", 1},
		{"last linear", linearMax - 1},
		{"first log", linearMax},
		{"first log plus one", linearMax + 1},
		{"microsecond", 1000},
		{"millisecond", 1_000_000},
		{"odd", 123_456_789},
		{"power of two", 1 << 40},
		{"power of two minus one", 1<<40 - 1},
		{"hour", int64(time.Hour)},
		{"largest int64", math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := bucketOf(tc.v)
			if i < 0 || i >= bucketCount {
				t.Fatalf("bucketOf(%d) = %d, outside [0, %d)", tc.v, i, bucketCount)
			}
			lo, hi := bucketBounds(i)
			if tc.v < lo || tc.v > hi {
				t.Fatalf("bucket %d is [%d, %d], does not hold %d", i, lo, hi, tc.v)
			}
			if width := float64(hi-lo+1) / float64(max(lo, 1)); lo >= linearMax && width > 1.0/subBuckets {
				t.Fatalf("bucket %d is %.4f of its lower bound wide, more than 1/%d", i, width, subBuckets)
			}
		})
	}
}

func TestBucketsTile(t *testing.T) {
	// Consecutive buckets meet without gap or overlap, up to the last.
	_, prevHi := bucketBounds(0)
	for i := 1; i < bucketCount; i++ {
		lo, hi := bucketBounds(i)
		if lo != prevHi+1 || hi < lo {
			t.Fatalf("bucket %d is [%d, %d], after a bucket ending at %d", i, lo, hi, prevHi)
		}
		prevHi = hi
	}
	if prevHi != math.MaxInt64 {
		t.Fatalf("the last bucket ends at %d, not at the largest int64", prevHi)
	}
}

func TestQuantile(t *testing.T) {
	ms := time.Millisecond
	us := time.Microsecond
	for _, tc := range []struct {
		name   string
		values []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one value p50", []time.Duration{3 * ms}, 0.5, 3 * ms},
		{"one value p999", []time.Duration{3 * ms}, 0.999, 3 * ms},
		{"exact below linearMax", []time.Duration{10, 20, 30, 40}, 0.5, 20},
		{"q zero is the minimum", []time.Duration{5 * ms, 1 * ms, 9 * ms}, 0, 1 * ms},
		{"q one is the maximum", []time.Duration{5 * ms, 1 * ms, 9 * ms}, 1, 9 * ms},
		{"q above one clamps", []time.Duration{5 * ms, 1 * ms, 9 * ms}, 2, 9 * ms},
		{"negative records as zero", []time.Duration{-5, 7}, 0.5, 0},
		{"uniform p50", linear(1000, us), 0.50, 500 * us},
		{"uniform p99", linear(1000, us), 0.99, 990 * us},
		{"uniform p999", linear(1000, us), 0.999, 999 * us},
		{"uniform p100", linear(1000, us), 1, 1000 * us},
		{"tail p99 in the body", bimodal(990, ms, 10, 100*ms), 0.99, ms},
		{"tail p999 in the tail", bimodal(990, ms, 10, 100*ms), 0.999, 100 * ms},
		{"tail just past the body", bimodal(990, ms, 10, 100*ms), 0.991, 100 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tc.values {
				h.Record(v)
			}
			got := h.Quantile(tc.q)
			if !within(got, tc.want, quantileTolerance) {
				t.Fatalf("Quantile(%v) = %v, want %v within %.2f%%", tc.q, got, tc.want, 100*quantileTolerance)
			}
		})
	}
}

func TestQuantileMatchesSortedSamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		draw func(r *rand.Rand) time.Duration
	}{
		{"log-normal around 5ms", func(r *rand.Rand) time.Duration {
			return time.Duration(5e6 * math.Exp(r.NormFloat64()))
		}},
		{"exponential mean 200µs", func(r *rand.Rand) time.Duration {
			return time.Duration(2e5 * r.ExpFloat64())
		}},
		{"uniform 0 to 2s", func(r *rand.Rand) time.Duration {
			return time.Duration(r.Int64N(int64(2 * time.Second)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			values := make([]time.Duration, 100_000)
			var h Histogram
			for i := range values {
				values[i] = tc.draw(r)
				h.Record(values[i])
			}
			slices.Sort(values)
			prev := time.Duration(0)
			for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
				rank := max(int(math.Ceil(q*float64(len(values)))), 1)
				want := values[rank-1]
				got := h.Quantile(q)
				if !within(got, want, quantileTolerance) {
					t.Errorf("Quantile(%v) = %v, exact %v: off by more than %.2f%%", q, got, want, 100*quantileTolerance)
				}
				if got < prev {
					t.Errorf("Quantile(%v) = %v, below a lower quantile's %v", q, got, prev)
				}
				prev = got
			}
			if h.Min() != values[0] || h.Max() != values[len(values)-1] {
				t.Errorf("min, max = %v, %v; want exactly %v, %v", h.Min(), h.Max(), values[0], values[len(values)-1])
			}
			var sum float64
			for _, v := range values {
				sum += float64(v)
			}
			if mean := time.Duration(math.Round(sum / float64(len(values)))); !within(h.Mean(), mean, 1e-9) {
				t.Errorf("Mean() = %v, want %v", h.Mean(), mean)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []time.Duration
	}{
		{"both empty", nil, nil},
		{"into empty", nil, []time.Duration{time.Millisecond, 3 * time.Millisecond}},
		{"from empty", []time.Duration{time.Millisecond}, nil},
		{"disjoint ranges", linear(100, time.Microsecond), linear(100, time.Second)},
		{"new minimum from the other", []time.Duration{time.Second}, []time.Duration{time.Microsecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a, b, all Histogram
			for _, v := range tc.a {
				a.Record(v)
				all.Record(v)
			}
			for _, v := range tc.b {
				b.Record(v)
				all.Record(v)
			}
			a.Merge(&b)
			if got, want := Summarize(&a), Summarize(&all); got != want {
				t.Fatalf("merged %+v, recorded together %+v", got, want)
			}
			if a.Count() != all.Count() {
				t.Fatalf("merged count %d, recorded together %d", a.Count(), all.Count())
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0µs"},
		{850 * time.Microsecond, "850µs"},
		{1234 * time.Microsecond, "1.23ms"},
		{12345 * time.Microsecond, "12.3ms"},
		{123456 * time.Microsecond, "123ms"},
		{1250 * time.Millisecond, "1.25s"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// linear returns unit, 2×unit, … n×unit.
func linear(n int, unit time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i+1) * unit
	}
	return out
}

// bimodal returns n1 values v1 followed by n2 values v2.
func bimodal(n1 int, v1 time.Duration, n2 int, v2 time.Duration) []time.Duration {
	out := make([]time.Duration, 0, n1+n2)
	for range n1 {
		out = append(out, v1)
	}
	for range n2 {
		out = append(out, v2)
	}
	return out
}

// within reports whether got is want to a relative tolerance.
func within(got, want time.Duration, tolerance float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(float64(got-want))/float64(want) <= tolerance
}
