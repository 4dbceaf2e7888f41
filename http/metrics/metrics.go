package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	nethttp "net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of the service's own.
const Namespace = "payments"

// Registry holds the node's metrics: the Go runtime and process collectors,
// and whatever the node registers.
type Registry struct {
	reg *prometheus.Registry
}

// New returns a registry with the Go runtime and process collectors.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Registry{reg: reg}
}

// Register adds collectors; it panics on a name registered twice (a bug).
func (r *Registry) Register(cs ...prometheus.Collector) { r.reg.MustRegister(cs...) }

// Gauge registers a gauge read from f at each scrape. f must be cheap and
// safe to call from any goroutine.
func (r *Registry) Gauge(name, help string, f func() float64) {
	r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, f))
}

// Counter registers a counter read from f at each scrape: f must only ever
// grow (a plain atomic counter kept by the package that counts).
func (r *Registry) Counter(name, help string, f func() float64) {
	r.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, f))
}

// Durations is a histogram of durations in seconds, for a package that
// reports them through a func(time.Duration) callback.
type Durations struct{ h prometheus.Histogram }

// Observe records one duration.
func (d Durations) Observe(elapsed time.Duration) { d.h.Observe(elapsed.Seconds()) }

// Durations registers a histogram of durations in seconds with the given
// bucket upper bounds (LatencyBuckets when nil).
func (r *Registry) Durations(name, help string, buckets []float64) Durations {
	if buckets == nil {
		buckets = LatencyBuckets
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
	r.reg.MustRegister(h)
	return Durations{h}
}

// LatencyBuckets spans 100µs (an fsync on a quiet disk) to 10s (a write's
// commit timeout), in seconds.
var LatencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Handler serves the registry in Prometheus' text (or OpenMetrics) format.
func (r *Registry) Handler() nethttp.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          r.reg, // counts the handler's own errors
		Timeout:           10 * time.Second,
		EnableOpenMetrics: true,
	})
}

// Server serves /metrics on its own listener, apart from the API, so that a
// scraper never competes with clients for the API's connections and the
// API's rate limits never hide the node's health.
type Server struct {
	srv *nethttp.Server
	ln  net.Listener
}

// Listen binds addr and serves the registry at /metrics until Shutdown.
func (r *Registry) Listen(addr string, logger *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := nethttp.NewServeMux()
	mux.Handle("/metrics", r.Handler())
	s := &Server{ln: ln, srv: &nethttp.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, nethttp.ErrServerClosed) {
			logger.Warn("metrics server stopped", "err", err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops the server, waiting for scrapes in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
