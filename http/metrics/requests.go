package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Unmatched is the route label of a request no route matched (a 404 or 405
// of the router itself): the raw path never becomes a label.
const Unmatched = "unmatched"

// Requests are the HTTP front end's metrics: requests by method, route
// template and status code, their duration by route, and error answers by
// the contract's stable error code (rate_limited, service_unavailable,
// outcome_unknown… are the refusals an operator watches).
//
// Routes must be declared (Routes) before requests are observed; each
// route's series are resolved once, at its first request, so a request
// costs two lookups in immutable maps, a short scan for its status code,
// and the observations.
type Requests struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec

	routes    atomic.Pointer[map[string]map[string]*routeSeries] // method → template
	unmatched *routeSeries
}

// routeSeries are one route's resolved series.
type routeSeries struct {
	method, route string
	total         *prometheus.CounterVec
	durations     *prometheus.HistogramVec
	mu            sync.Mutex                   // serializes additions to codes and duration
	codes         atomic.Pointer[[]codeSeries] // copied on write; a handful per route
	// duration is resolved at the route's first request, so that routes
	// never called export no empty histograms.
	duration atomic.Pointer[observer]
}

type observer struct{ prometheus.Observer }

type codeSeries struct {
	code  int
	count prometheus.Counter
}

// Requests registers the HTTP metrics.
func (r *Registry) Requests() *Requests {
	q := &Requests{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by method, route template and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "Time from routing a request to its answer, by method and route template (a forwarded request includes the leader's time).",
			Buckets: LatencyBuckets,
		}, []string{"method", "route"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "http_errors_total",
			Help: "Error answers by the contract's error code: rate_limited counts requests refused by a rate limit, service_unavailable those refused for want of a leader or a provider.",
		}, []string{"error"}),
	}
	r.Register(q.total, q.duration, q.errors)
	q.unmatched = q.series("other", Unmatched)
	empty := map[string]map[string]*routeSeries{}
	q.routes.Store(&empty)
	return q
}

// Routes declares the router's routes (method → path templates, as
// router.List returns them). Later calls add to the earlier ones.
func (q *Requests) Routes(list map[string][]string) {
	next := make(map[string]map[string]*routeSeries)
	for method, byRoute := range *q.routes.Load() {
		next[method] = make(map[string]*routeSeries, len(byRoute))
		for route, s := range byRoute {
			next[method][route] = s
		}
	}
	for method, paths := range list {
		if next[method] == nil {
			next[method] = make(map[string]*routeSeries)
		}
		for _, p := range paths {
			if next[method][p] == nil {
				next[method][p] = q.series(method, p)
			}
		}
	}
	q.routes.Store(&next)
}

func (q *Requests) series(method, route string) *routeSeries {
	s := &routeSeries{method: method, route: route, total: q.total, durations: q.duration}
	s.codes.Store(&[]codeSeries{})
	return s
}

// Observe records one answered request. route is the matched template
// ("" when none matched).
func (q *Requests) Observe(method []byte, route string, code int, elapsed time.Duration) {
	s := q.unmatched
	if route != "" {
		if rs := (*q.routes.Load())[string(method)][route]; rs != nil {
			s = rs
		}
	}
	s.observer().Observe(elapsed.Seconds())
	s.count(code).Inc()
}

func (s *routeSeries) observer() prometheus.Observer {
	if o := s.duration.Load(); o != nil {
		return o.Observer
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.duration.Load(); o != nil {
		return o.Observer
	}
	o := &observer{s.durations.WithLabelValues(s.method, s.route)}
	s.duration.Store(o)
	return o.Observer
}

func (s *routeSeries) count(code int) prometheus.Counter {
	for _, c := range *s.codes.Load() {
		if c.code == code {
			return c.count
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	codes := *s.codes.Load()
	for _, c := range codes {
		if c.code == code {
			return c.count
		}
	}
	c := codeSeries{code: code, count: s.total.WithLabelValues(s.method, s.route, strconv.Itoa(code))}
	next := append(append(make([]codeSeries, 0, len(codes)+1), codes...), c)
	s.codes.Store(&next)
	return c.count
}

// Error records an error answer by its stable code (a bounded set).
func (q *Requests) Error(code string) { q.errors.WithLabelValues(code).Inc() }
