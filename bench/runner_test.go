package bench

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors/actorstest/testkit"
)

// TestConfigValidate checks the settings Validate refuses, and that it
// accepts soak mode and a noisy neighbour within bounds.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		err  string // in the error; "" for none
	}{
		{"defaults", Config{}, ""},
		{"soak", Config{Duration: 3 * time.Minute, Window: 5 * time.Second, ServerPID: 42}, ""},
		{"window of the whole duration", Config{Duration: 5 * time.Second, Window: 5 * time.Second}, ""},
		{"shortest window", Config{Duration: time.Second, Window: windowMin}, ""},
		{"negative window", Config{Window: -time.Second}, "window must not be negative"},
		{"window too short", Config{Window: 50 * time.Millisecond}, "window must be at least 100ms"},
		{"window longer than duration", Config{Duration: 10 * time.Second, Window: 20 * time.Second}, "longer than the duration"},
		{"too many windows", Config{Duration: time.Hour, Window: 500 * time.Millisecond}, "7200 windows"},
		{"negative pid", Config{ServerPID: -1}, "server pid must be positive"},
		{"noise", Config{NoiseExports: 16, NoisePayouts: 5000}, ""},
		{"more keys than one organization holds, spread", Config{Keys: 4096}, ""},
		{"more keys per organization than it may hold", Config{Keys: 4096, Orgs: 2}, "more than the 1000 one organization may hold"},
		{"replay's organizations hold too many", Config{Keys: 4096, ReplayReferences: 2}, "4096 keys over 2 organizations"},
		{"negative noise", Config{NoiseExports: -1}, "noise exports must be 0 to 256"},
		{"too much noise", Config{NoiseExports: 257}, "noise exports must be 0 to 256"},
		{"negative noise payouts", Config{NoiseExports: 1, NoisePayouts: -1}, "noise payouts must be 1 to 200000"},
		{"too many noise payouts", Config{NoiseExports: 1, NoisePayouts: 200_001}, "noise payouts must be 1 to 200000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testkit.WantErr(t, tc.cfg.Validate(), tc.err)
		})
	}
}

// TestTallySummarize checks how outcomes count: errors are non-2xx and
// transport errors; unexpected adds any 2xx other than the expected one.
func TestTallySummarize(t *testing.T) {
	var a, b tally
	for range 3 {
		a.add(nil, 201)
	}
	a.add(nil, 200)
	a.add(nil, 429)
	b.add(nil, 700)
	b.add(errors.New("dial tcp: refused"), 0)
	b.add(nil, 201)
	a.merge(&b)
	s := a.summarize(201)
	if s.requests != 8 || s.responses != 7 || s.errors != 3 || s.unexpected != 4 {
		t.Errorf("%d requests, %d responses, %d errors, %d unexpected; want 8, 7, 3, 4",
			s.requests, s.responses, s.errors, s.unexpected)
	}
	if got := counts(s.statuses); got != "200=1 201=4 429=1 other=1" {
		t.Errorf("statuses %s", got)
	}
	if len(s.transport) != 1 {
		t.Errorf("transport errors %v", s.transport)
	}
}

// TestTallyReplays checks that a cluster run's replays, answers 200 to
// payouts expected to get 201, count as acknowledged and not as
// unexpected, and that failovers and retries add up over workers.
func TestTallyReplays(t *testing.T) {
	var a, b tally
	a.add(nil, 201)
	a.add(nil, 200)
	a.replays, a.failovers, a.retries = 1, 4, 2
	b.add(nil, 200)
	b.add(nil, 503)
	b.replays, b.failovers, b.retries = 1, 1, 3
	a.merge(&b)
	s := a.summarize(201)
	if s.requests != 4 || s.errors != 1 || s.unexpected != 1 {
		t.Errorf("%d requests, %d errors, %d unexpected; want 4, 1, 1 (the 503)", s.requests, s.errors, s.unexpected)
	}
	if a.failovers != 5 || a.retries != 5 || a.replays != 2 {
		t.Errorf("%d failovers, %d retries, %d replays; want 5, 5, 2", a.failovers, a.retries, a.replays)
	}
}

func TestSplitAddrs(t *testing.T) {
	for _, tc := range []struct {
		list string
		want string
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"127.0.0.1:8081,127.0.0.1:8082, 127.0.0.1:8083", "127.0.0.1:8081|127.0.0.1:8082|127.0.0.1:8083"},
		{" ,127.0.0.1:1,", "127.0.0.1:1"},
		{"", ""},
	} {
		if got := strings.Join(SplitAddrs(tc.list), "|"); got != tc.want {
			t.Errorf("SplitAddrs(%q) = %q, want %q", tc.list, got, tc.want)
		}
	}
}

// TestRetryableAnswer checks which answers send re-sends: 503 with the
// two codes that say to retry with the same reference, and nothing else.
func TestRetryableAnswer(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{503, `{"error":"service_unavailable","message":"no leader"}`, true},
		{503, `{"error":"outcome_unknown","message":"leadership lost"}`, true},
		{503, `{"error":"rate_unavailable"}`, false},
		{503, `not json`, false},
		{500, `{"error":"service_unavailable"}`, false},
		{201, `{"payout":{}}`, false},
		{429, `{"error":"rate_limited"}`, false},
	} {
		var resp fasthttp.Response
		resp.SetStatusCode(tc.status)
		resp.SetBodyString(tc.body)
		if got := retryableAnswer(&resp); got != tc.want {
			t.Errorf("%d %s: retryable %v, want %v", tc.status, tc.body, got, tc.want)
		}
	}
}

// unusedAddr is a loopback address nothing listens on: a stopped node.
func unusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestNeverSent dials a loopback port nothing listens on: the refusal is
// an attempt that reached no node; an error after a connection is not.
func TestNeverSent(t *testing.T) {
	closed := unusedAddr(t)
	hc := &fasthttp.HostClient{Addr: closed, MaxIdemponentCallAttempts: 1}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + closed + "/")
	err := hc.DoTimeout(req, resp, 5*time.Second)
	if err == nil || !neverSent(err) {
		t.Errorf("a refused connection: %v; neverSent %v, want true", err, err != nil && neverSent(err))
	}
	for _, err := range []error{io.EOF, fasthttp.ErrConnectionClosed, fasthttp.ErrTimeout} {
		if neverSent(err) {
			t.Errorf("%v: neverSent, but the request may have been written", err)
		}
	}
}

// TestWriteTableFailovers checks that the table names a cluster run's
// failovers, retries and replays, and says nothing of them otherwise.
func TestWriteTableFailovers(t *testing.T) {
	one := &Result{Workload: "uniform", Expect: 201, Requests: 10, Responses: 10, Statuses: map[string]uint64{"201": 10}}
	cluster := &Result{Workload: "hot_account", Expect: 201, Requests: 10, Responses: 10,
		Statuses: map[string]uint64{"200": 1, "201": 9}, Failovers: 7, Retries: 2, Replays: 1}
	var b strings.Builder
	if err := WriteTable(&b, []*Result{one, cluster}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "hot_account: 7 attempts reached no node and went to the next; 2 re-sent with the same reference; 1 answered 200") {
		t.Errorf("no line on the cluster run's failovers:\n%s", out)
	}
	if strings.Contains(out, "uniform: 0 attempts") {
		t.Errorf("a line on failovers for a run without any:\n%s", out)
	}
}

// TestSendFailsOverAndRetries runs send against two loopback addresses:
// one where nothing listens (a stopped node) and a server standing in for
// a node that answers 503 service_unavailable to the first attempt of each
// reference and 201 to the next, or drops the connection after reading
// the request. Every attempt is counted, the reference is the same on
// every re-send, and the retries stop at the request's timeout.
func TestSendFailsOverAndRetries(t *testing.T) {
	stopped := unusedAddr(t)

	var mu sync.Mutex
	seen := map[string]int{} // body → attempts that reached the node
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(b)]++
		n := seen[string(b)]
		mu.Unlock()
		switch {
		case strings.Contains(string(b), "always-503"):
			w.WriteHeader(503)
			io.WriteString(w, `{"error":"service_unavailable"}`)
		case strings.Contains(string(b), "drop") && n == 1:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case n == 1:
			w.WriteHeader(503)
			io.WriteString(w, `{"error":"outcome_unknown"}`)
		default:
			w.WriteHeader(201)
		}
	}))
	defer srv.Close()
	node := strings.TrimPrefix(srv.URL, "http://")

	for _, tc := range []struct {
		ref                string
		timeout            time.Duration
		status             int
		failovers, retries uint64
		sends              int  // that reached the node
		givesUp            bool // at the timeout: counts vary, some of each
	}{
		// stopped, then 503, then stopped again, then 201.
		{"once-503", 5 * time.Second, 201, 2, 1, 2, false},
		{"drop", 5 * time.Second, 201, 2, 1, 2, false},
		// Bounded by the timeout: the last answer stands.
		{"always-503", 300 * time.Millisecond, 503, 0, 0, 0, true},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			cfg := Config{Addr: stopped + "," + node, Key: "k", RequestTimeout: tc.timeout}.filled()
			r := newLoad(&cfg, Uniform, nil, nil)
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(r.url)
			body := `{"externalReference":"` + tc.ref + `"}`
			req.SetBodyString(body)
			began := time.Now()
			out := r.send(req, resp, 0, began)
			took := time.Since(began)
			if out.err != nil || resp.StatusCode() != tc.status {
				t.Fatalf("%d %v, want %d", resp.StatusCode(), out.err, tc.status)
			}
			mu.Lock()
			sends := seen[body]
			mu.Unlock()
			if tc.givesUp {
				if sends < 2 || out.retries == 0 || out.failovers == 0 || took > tc.timeout+time.Second {
					t.Fatalf("%d sends reached the node, %d retries, %d failovers in %v; want some of each within %v",
						sends, out.retries, out.failovers, took, tc.timeout)
				}
				return
			}
			if out.failovers != tc.failovers || out.retries != tc.retries || sends != tc.sends {
				t.Fatalf("%d failovers, %d retries, %d sends reached the node; want %d, %d, %d",
					out.failovers, out.retries, sends, tc.failovers, tc.retries, tc.sends)
			}
		})
	}
}
