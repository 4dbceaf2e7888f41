package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	api "payments/http"
	"payments/http/metrics"
	"payments/rails"
	"payments/wal/requestlog"
)

// stack is the whole service on loopback: a real single-node Raft cluster
// on Pebble in a temporary directory, the actors, and the HTTP server on an
// ephemeral port, talked to over real HTTP.
type stack struct {
	t      *testing.T
	addr   string
	key    string // the bootstrap key: every scope
	client *nethttp.Client
	sys    *actors.System
	srv    *api.Server
	files  string // the node's blob store directory

	requestLog    *requestlog.Store // the node's request log
	requestLogDir string
}

type stackOptions struct {
	live      bool
	timing    rails.SandboxTiming
	rateLimit int
	webhooks  *actors.WebhookConfig // overrides webhookConfig's defaults (webhooks_test.go)
	rates     rails.RateSource      // the sandbox table when nil
	// settlement is how long the checkout's simulated deposits take to
	// land (api.Config.SandboxSettlement).
	settlement time.Duration
	// requestLog wraps the node's request log (requestlog_test.go); nil
	// uses it as it is.
	requestLog      func(api.RequestStore) api.RequestStore
	requestLogQueue int
	logger          *slog.Logger      // the server's; none when nil
	publicBase      string            // api.Config.PublicBaseURL
	bodyBytes       int64             // api.Config.BodyBytesInFlightMax
	connsPerIP      int               // api.Config.ConnsPerIPMax
	metrics         *metrics.Requests // api.Config.Metrics
	dashboardIdle   time.Duration     // api.Config.DashboardIdleTimeout
	readTimeout     time.Duration     // api.Config.ReadTimeout
	idleTimeout     time.Duration     // api.Config.IdleTimeout
}

// frozenTiming keeps every payout and collection pending, so responses do
// not depend on how fast the simulated rail is.
var frozenTiming = rails.SandboxTiming{SubmitLatency: time.Hour, Settlement: time.Hour, Timeout: time.Hour}

func newStack(t *testing.T, opts stackOptions) *stack {
	t.Helper()
	if opts.timing == (rails.SandboxTiming{}) {
		opts.timing = frozenTiming
	}
	node := actorstest.OpenNode(t)
	sys := actorstest.Start(t, node, actors.Config{Rail: rails.NewSandbox(opts.timing), Webhooks: webhookConfig(opts)})
	files := t.TempDir()
	logDir := t.TempDir()
	reqlog, err := requestlog.Open(logDir, requestlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var store api.RequestStore = reqlog
	if opts.requestLog != nil {
		store = opts.requestLog(reqlog)
	}
	srv := api.New(api.Config{Live: opts.live, NoProvider: opts.live, Actors: sys, Cluster: node, RateLimitPerSecond: opts.rateLimit,
		FilesDir: files, Rates: opts.rates, SandboxSettlement: opts.settlement, Logger: opts.logger,
		PublicBaseURL: opts.publicBase, BodyBytesInFlightMax: opts.bodyBytes, ConnsPerIPMax: opts.connsPerIP, Metrics: opts.metrics,
		DashboardIdleTimeout: opts.dashboardIdle,
		ReadTimeout:          opts.readTimeout, IdleTimeout: opts.idleTimeout,
		RequestLog: store, RequestLogQueue: opts.requestLogQueue})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Shutdown(t.Context())
		reqlog.Close()
	})
	key := actors.KeyPrefix(opts.live) + "goldenbootstrapkey0000"
	if _, err := sys.EnsureBootstrap(t.Context(), actors.Bootstrap{Live: opts.live, Secret: key, OrgName: "Golden Org", Country: "GH", Timezone: "Africa/Accra", DefaultCurrency: "GHS"}); err != nil {
		t.Fatal(err)
	}
	return &stack{
		t:      t,
		addr:   ln.Addr().String(),
		key:    key,
		client: &nethttp.Client{Timeout: 30 * time.Second, Transport: &nethttp.Transport{MaxIdleConnsPerHost: 256}},
		sys:    sys,
		srv:    srv,
		files:  files,

		requestLog:    reqlog,
		requestLogDir: logDir,
	}
}

// response is what a test looks at.
type response struct {
	status int
	header map[string]string
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, r.body)
	}
	return v
}

// do sends a request over real HTTP. key "" sends none; body nil sends
// none. The path is sent as written, percent escapes and all.
func (s *stack) do(method, path, key string, body any, headers ...string) response {
	s.t.Helper()
	var payload []byte
	switch b := body.(type) {
	case nil:
	case string:
		payload = []byte(b)
	case []byte:
		payload = b
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		payload = enc
	}
	req, err := nethttp.NewRequest(method, "http://"+s.addr+path, bytes.NewReader(payload))
	if err != nil {
		s.t.Fatal(err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: map[string]string{}, body: b}
	for k, v := range resp.Header {
		r.header[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	s.checkEnvelope(r)
	return r
}

// checkEnvelope holds every response to the contract's common rules: a
// request id header, the version echoed, and errors in the envelope with the
// same request id.
func (s *stack) checkEnvelope(r response) {
	s.t.Helper()
	id := r.header["x-request-id"]
	if len(id) != 27 || id[:4] != "req_" { // req_, the second (7), the node (3), random (13)
		s.t.Fatalf("x-request-id %q is not a request id", id)
	}
	if r.header["service-version"] == "" {
		s.t.Fatal("no service-version header")
	}
	if r.status >= 400 {
		var e struct {
			Error     string         `json:"error"`
			Message   string         `json:"message"`
			Details   map[string]any `json:"details"`
			RequestID string         `json:"requestId"`
		}
		if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" || e.Message == "" {
			s.t.Fatalf("status %d without the error envelope: %s", r.status, r.body)
		}
		if e.RequestID != id {
			s.t.Fatalf("body requestId %q differs from header %q", e.RequestID, id)
		}
	}
}

func (s *stack) mustStatus(r response, want int) {
	s.t.Helper()
	if r.status != want {
		s.t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
}

// fund credits the bootstrap organization's balance.
func (s *stack) fund(key, currency, amount, ref string) {
	s.t.Helper()
	r := s.do("POST", "/v1/simulations/fund-balance", key, fmt.Sprintf(`{"amount":%q,"currency":%q,"externalReference":%q}`, amount, currency, ref))
	if r.status != 201 && r.status != 200 {
		s.t.Fatalf("fund: %d %s", r.status, r.body)
	}
}

// together makes n requests at once: each caller i gets a client of its
// own with one connection, which open opens (with a request of its own)
// before the start, so that the n asks arrive together. It returns what
// each ask answered, in no particular order.
func together[A any](st *stack, n int, open func(i int, own *stack), ask func(i int, own *stack) A) []A {
	answers := make(chan A, n)
	start := make(chan struct{})
	var wg, ready sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			own := *st
			own.client = &nethttp.Client{Timeout: 30 * time.Second, Transport: &nethttp.Transport{MaxConnsPerHost: 1}}
			open(i, &own)
			ready.Done()
			<-start
			answers <- ask(i, &own)
		}()
	}
	ready.Wait()
	close(start)
	wg.Wait()
	close(answers)
	var out []A
	for a := range answers {
		out = append(out, a)
	}
	return out
}
