package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram buckets durations on a log-linear scale, like an HDR histogram
// with seven significant bits (a little over two decimal digits): values below 2×subBuckets nanoseconds each have their own bucket, and
// every power of two above is split into subBuckets equal buckets. A bucket
// is at most 1/subBuckets of its lower bound wide, so a quantile read back
// from the middle of its bucket is within 1/(2×subBuckets) ≈ 0.4% of the
// recorded value.
//
// The bucket array has a fixed size covering every non-negative int64, so
// Record never allocates and never drops a value.
//
// A Histogram is not safe for concurrent use: the runner gives each worker
// its own and merges them when the run ends.
type Histogram struct {
	counts [bucketCount]uint64
	total  uint64
	sum    float64 // nanoseconds; float so that it cannot overflow
	min    int64
	max    int64
}

const (
	subBucketBits = 7
	subBuckets    = 1 << subBucketBits // buckets per power of two
	// Values below linearMax are counted exactly, one bucket per nanosecond.
	linearMax = 2 * subBuckets
	// bucketCount covers, after the linear range, shifts 1 through
	// 63-subBucketBits-1 (the largest int64 has 63 significant bits),
	// subBuckets each.
	bucketCount = linearMax + (63-subBucketBits-1)*subBuckets
)

// bucketOf returns the index of the bucket holding v (v ≥ 0).
func bucketOf(v int64) int {
	if v < linearMax {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBucketBits - 1 // v>>shift is in [subBuckets, 2×subBuckets)
	mantissa := int(v >> shift)
	return linearMax + (shift-1)*subBuckets + (mantissa - subBuckets)
}

// bucketBounds returns the smallest and the largest value bucket i holds.
func bucketBounds(i int) (lo, hi int64) {
	if i < linearMax {
		return int64(i), int64(i)
	}
	shift := (i-linearMax)/subBuckets + 1
	mantissa := int64((i-linearMax)%subBuckets + subBuckets)
	lo = mantissa << shift
	hi = lo + (int64(1) << shift) - 1
	return lo, hi
}

// Record counts one duration. A negative duration counts as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucketOf(v)]++
	if h.total == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.total++
	h.sum += float64(v)
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.total += o.total
	h.sum += o.sum
}

// Count returns how many values were recorded.
func (h *Histogram) Count() uint64 { return h.total }

// Min returns the smallest recorded value exactly, or 0 when empty.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max returns the largest recorded value exactly, or 0 when empty.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the arithmetic mean of the recorded values, or 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.total == 0 {
		return 0
	}
	return time.Duration(math.Round(h.sum / float64(h.total)))
}

// Quantile returns the value below or at which a fraction q of the recorded
// values lie (q in [0, 1]; 0.99 is p99): the nearest-rank value, read as the
// middle of its bucket and clamped to the exact minimum and maximum. It
// returns 0 when the histogram is empty. Quantile is monotonic in q.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketBounds(i)
			mid := lo + (hi-lo)/2
			return time.Duration(min(max(mid, h.min), h.max))
		}
	}
	return time.Duration(h.max) // not reached: the counts sum to total
}
