package metrics

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A histogram kept in nanoseconds with Pebble's buckets reads back in
// seconds with ours: exact where our bound is one of Pebble's.
func TestNanosecondsRebucketed(t *testing.T) {
	src := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "src", Buckets: pebble.FsyncLatencyBuckets})
	observed := []time.Duration{50 * time.Microsecond, 150 * time.Microsecond, 900 * time.Microsecond, 3 * time.Millisecond, 40 * time.Millisecond, 3 * time.Second}
	for _, d := range observed {
		src.Observe(float64(d.Nanoseconds()))
	}
	reg := New()
	reg.Nanoseconds("fsync_seconds", "test", src, FsyncBuckets)
	families, err := reg.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var h *dto.Histogram
	for _, f := range families {
		if f.GetName() == "payments_fsync_seconds" {
			h = f.Metric[0].Histogram
		}
	}
	if h == nil {
		t.Fatal("payments_fsync_seconds not gathered")
	}
	if h.GetSampleCount() != uint64(len(observed)) {
		t.Errorf("count %d, want %d", h.GetSampleCount(), len(observed))
	}
	var sum time.Duration
	for _, d := range observed {
		sum += d
	}
	if got := h.GetSampleSum(); got < sum.Seconds()*0.999 || got > sum.Seconds()*1.001 {
		t.Errorf("sum %v s, want %v s", got, sum.Seconds())
	}
	want := map[float64]uint64{.0001: 1, .0002: 2, .001: 3, .005: 4, 1: 5, 5: 6, 10: 6}
	for _, b := range h.Bucket {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
}
