package http_test

import (
	"bufio"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"payments/http/metrics"
)

// Requests refused by the rate limit are counted as rate_limited and under
// their route's template, and the scrape holds no raw path.
func TestRequestMetricsCountRefusals(t *testing.T) {
	reg := metrics.New()
	st := newStack(t, stackOptions{rateLimit: 3, metrics: reg.Requests()})
	statuses := map[int]int{}
	for range 10 {
		statuses[st.do("GET", "/v1/payouts", st.key, nil).status]++
	}
	if statuses[429] == 0 || statuses[200]+statuses[429] != 10 {
		t.Fatalf("statuses %v: want 200s, then 429s", statuses)
	}
	listRefused := statuses[429]
	// A route with an id: 429 while the window is full, else 404.
	byID := st.do("GET", "/v1/payouts/pay_ghs_nosuchpayout", st.key, nil).status
	if byID == 429 {
		statuses[429]++
	}
	rec := httptest.NewRecorder()
	reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`payments_http_errors_total{error="rate_limited"} ` + strconv.Itoa(statuses[429]),
		`payments_http_requests_total{code="429",method="GET",route="/v1/payouts"} ` + strconv.Itoa(listRefused),
		`payments_http_requests_total{code="200",method="GET",route="/v1/payouts"} ` + strconv.Itoa(statuses[200]),
		`payments_http_requests_total{code="` + strconv.Itoa(byID) + `",method="GET",route="/v1/payouts/{id}"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	if strings.Contains(text, "nosuchpayout") {
		t.Error("the scrape holds a raw path")
	}
}

// A request fasthttp cannot read never reaches the router, and is counted
// all the same, as unmatched.
func TestRequestMetricsCountUnreadableRequests(t *testing.T) {
	reg := metrics.New()
	st := newStack(t, stackOptions{rateLimit: 1000, metrics: reg.Requests()})
	conn, err := net.Dial("tcp", st.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "POST /v1/payouts HTTP/1.1\r\nHost: x\r\nContent-Length: not-a-number\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := nethttp.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("a malformed request answered %d, want 400", resp.StatusCode)
	}
	rec := httptest.NewRecorder()
	reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		`payments_http_requests_total{code="400",method="other",route="unmatched"} 1`,
		`payments_http_errors_total{error="validation_error"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape lacks %s", want)
		}
	}
}
