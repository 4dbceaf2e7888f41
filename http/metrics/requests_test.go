package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Requests are counted by the declared template and status; an undeclared
// route or method counts as unmatched; routes never called export nothing.
func TestRequestsByRouteTemplate(t *testing.T) {
	reg := New()
	q := reg.Requests()
	q.Routes(map[string][]string{"GET": {"/v1/payouts/{id}", "/v1/payouts"}, "POST": {"/v1/payouts"}})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				q.Observe([]byte("POST"), "/v1/payouts", 201, time.Millisecond)
			}
		}()
	}
	wg.Wait()
	q.Observe([]byte("GET"), "/v1/payouts/{id}", 404, time.Millisecond)
	q.Observe([]byte("GET"), "", 404, time.Millisecond)
	q.Observe([]byte("BREW"), "/v1/payouts", 405, time.Millisecond)
	q.Error("rate_limited")

	families, err := reg.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "payments_http_") {
			continue
		}
		for _, m := range f.Metric {
			key := f.GetName() + labelString(m)
			switch {
			case m.Counter != nil:
				got[key] = m.Counter.GetValue()
			case m.Histogram != nil:
				got[key] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	want := map[string]float64{
		`payments_http_requests_total{code="201",method="POST",route="/v1/payouts"}`:     800,
		`payments_http_requests_total{code="404",method="GET",route="/v1/payouts/{id}"}`: 1,
		`payments_http_requests_total{code="404",method="other",route="unmatched"}`:      1,
		`payments_http_requests_total{code="405",method="other",route="unmatched"}`:      1,
		`payments_http_request_duration_seconds{method="POST",route="/v1/payouts"}`:      800,
		`payments_http_request_duration_seconds{method="GET",route="/v1/payouts/{id}"}`:  1,
		`payments_http_request_duration_seconds{method="other",route="unmatched"}`:       2,
		`payments_http_errors_total{error="rate_limited"}`:                               1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected series %s = %v (a route never called exports nothing)", k, got[k])
		}
	}
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, l := range m.Label {
		parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// The per-request cost of the metrics, from many goroutines at once.
func BenchmarkRequestsObserve(b *testing.B) {
	q := New().Requests()
	q.Routes(map[string][]string{"POST": {"/v1/payouts"}, "GET": {"/v1/payouts/{id}"}})
	method := []byte("POST")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			q.Observe(method, "/v1/payouts", 201, 3*time.Millisecond)
		}
	})
}
