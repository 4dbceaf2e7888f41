package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// FsyncBuckets are the buckets, in seconds, of the fsync histogram.
var FsyncBuckets = []float64{.0001, .0002, .0005, .001, .002, .003, .004, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Nanoseconds registers name as a histogram in seconds read at each scrape
// from src, a histogram another library keeps in nanoseconds (Pebble's of
// its fsyncs, with a hundred buckets). Each of ours counts the observations
// up to the largest of src's bounds at or below it, so a bucket between two
// of src's bounds is undercounted by the observations between them (none
// below 5ms, where src's bounds are every 100µs).
func (r *Registry) Nanoseconds(name, help string, src prometheus.Metric, buckets []float64) {
	desc := prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, nil, nil)
	r.Register(&rebucketed{desc: desc, src: src, buckets: buckets})
}

type rebucketed struct {
	desc    *prometheus.Desc
	src     prometheus.Metric
	buckets []float64
}

func (c *rebucketed) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *rebucketed) Collect(ch chan<- prometheus.Metric) {
	var m dto.Metric
	if c.src == nil || c.src.Write(&m) != nil || m.Histogram == nil {
		return
	}
	h := m.Histogram
	counts := make(map[float64]uint64, len(c.buckets))
	for _, b := range c.buckets {
		limitNs := b * 1e9 * (1 + 1e-9) // src's bounds are whole nanoseconds
		var cumulative uint64
		for _, sb := range h.Bucket {
			if sb.GetUpperBound() <= limitNs {
				cumulative = max(cumulative, sb.GetCumulativeCount())
			}
		}
		counts[b] = cumulative
	}
	ch <- prometheus.MustNewConstHistogram(c.desc, h.GetSampleCount(), h.GetSampleSum()/1e9, counts)
}

// RequestLogDrops registers the count of request-log lines dropped (a full
// buffer sheds lines rather than slow requests down); dropped must be a
// monotonic counter, such as the request log's Dropped method.
func (r *Registry) RequestLogDrops(dropped func() uint64) {
	r.Counter("request_log_dropped_total", "Request-log lines dropped because the log's buffer was full.",
		func() float64 { return float64(dropped()) })
}
