package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Config configures a run of a workload.
type Config struct {
	// Addr is host:port of the server, or of each node of a cluster,
	// comma-separated; every one on loopback. With several, requests
	// spread over the nodes, fail over and are retried (see send); setup
	// and the noisy neighbour use the first.
	Addr string
	Key  string // the bootstrap key: it must be able to create organizations

	Connections    int           // closed-loop workers, one connection each
	Warmup         time.Duration // load before the measured phase, not recorded; zero for none
	Duration       time.Duration // the measured phase
	RequestsMax    uint64        // requests of the measured phase (and, separately, of the warm-up)
	RequestTimeout time.Duration // one request, from send to the whole response
	SetupTimeout   time.Duration // all of setup

	Keys             int // API keys each workload rotates over
	Orgs             int // organizations of uniform and replay
	ReplayReferences int // payouts replay creates once and then re-sends

	// Window, when positive, splits the measured phase into back-to-back
	// windows of this length, each reported on its own (soak mode); zero
	// reports the phase as a whole only.
	Window time.Duration
	// ServerPID is the server's process id: each window reports its
	// resident memory. Zero when unknown.
	ServerPID int

	// NoiseExports, when positive, adds a noisy neighbour: an organization
	// with NoisePayouts payouts whose transactions NoiseExports goroutines
	// export during the measured phase. Zero for none.
	NoiseExports int
	NoisePayouts int

	// Progress receives a line at each step of a run; nil discards them.
	Progress io.Writer
	// Acknowledged, when set, is called with the body of every payout
	// request answered 2xx, warm-up included, and the body of that answer:
	// what a caller needs to check afterwards that each acknowledged
	// payout exists. The workers call it concurrently; the slices are
	// valid only during the call.
	Acknowledged func(request, response []byte)
	// OrgsOut, when set, receives a line per organization setup creates: its
	// id and its first key's secret, so that an operator can read back
	// what a long run wrote (a payout of its first minute, a whole list).
	OrgsOut io.Writer
}

// Defaults and bounds of Config.
const (
	DefaultConnections      = 128
	DefaultWarmup           = 2 * time.Second
	DefaultDuration         = 10 * time.Second
	DefaultRequestsMax      = 2_000_000
	DefaultRequestTimeout   = 15 * time.Second // the server's commit timeout is 10s
	DefaultSetupTimeout     = 2 * time.Minute
	DefaultKeys             = 1000 // the most one organization may hold: all of hot_account's
	DefaultOrgs             = 64
	DefaultReplayReferences = 1024

	connectionsMax      = 4096
	durationMax         = time.Hour
	orgsMax             = 1024
	keysMax             = 16384
	replayReferencesMax = 65536
	// keysPerOrganizationMax is the server's limit on an organization's
	// keys (its ledger.KeysPerOrganizationMax; bench speaks only HTTP).
	keysPerOrganizationMax = 1000
	errorKindsMax          = 16  // distinct transport errors a worker tells apart
	statusCodeMax          = 600 // status codes counted one by one; others count as 0
)

// withDefaults fills the zero fields of c and checks it.
func (c Config) withDefaults() (Config, error) {
	c = c.filled()
	if err := c.checkLimits(); err != nil {
		return c, err
	}
	if c.Key == "" {
		return c, errors.New("no bootstrap key")
	}
	for _, addr := range c.addrs() {
		if err := CheckLoopback(addr); err != nil {
			return c, err
		}
	}
	return c, nil
}

// addrs returns the addresses of Addr: one for a server, one per node for
// a cluster.
func (c *Config) addrs() []string { return SplitAddrs(c.Addr) }

// SplitAddrs splits a comma-separated list of addresses, dropping blanks.
func SplitAddrs(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Validate fills c's zero fields with their defaults and checks every field
// but Addr and Key, as Run does: a command can refuse bad settings before
// it starts a server.
func (c Config) Validate() error { return c.filled().checkLimits() }

// filled returns c with its zero fields set to their defaults.
func (c Config) filled() Config {
	c.Connections = cmp.Or(c.Connections, DefaultConnections)
	c.Duration = cmp.Or(c.Duration, DefaultDuration)
	c.RequestsMax = cmp.Or(c.RequestsMax, DefaultRequestsMax)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, DefaultRequestTimeout)
	c.SetupTimeout = cmp.Or(c.SetupTimeout, DefaultSetupTimeout)
	c.Keys = cmp.Or(c.Keys, DefaultKeys)
	c.Orgs = cmp.Or(c.Orgs, DefaultOrgs)
	c.ReplayReferences = cmp.Or(c.ReplayReferences, DefaultReplayReferences)
	c.NoisePayouts = cmp.Or(c.NoisePayouts, DefaultNoisePayouts)
	c.Progress = cmp.Or(c.Progress, io.Discard)
	return c
}

// keysPerOrg is how many keys each of orgs organizations holds when keys
// are spread over them.
func keysPerOrg(keys, orgs int) int { return (keys + orgs - 1) / orgs }

// hotAccountKeys is how many keys hot_account rotates over: every one in
// its one organization, so at most the keys one organization may hold.
func hotAccountKeys(c *Config) int { return min(c.Keys, keysPerOrganizationMax) }

// checkLimits checks the fields of a filled Config but Addr and Key.
func (c Config) checkLimits() error {
	switch {
	case c.Connections < 1 || c.Connections > connectionsMax:
		return fmt.Errorf("connections must be 1 to %d, not %d", connectionsMax, c.Connections)
	case c.Warmup < 0 || c.Warmup > durationMax:
		return fmt.Errorf("warm-up must be 0 to %s, not %s", durationMax, c.Warmup)
	case c.Duration < 0 || c.Duration > durationMax:
		return fmt.Errorf("duration must be up to %s, not %s", durationMax, c.Duration)
	case c.RequestTimeout < 0 || c.SetupTimeout < 0:
		return errors.New("timeouts must be positive")
	case c.Orgs < 1 || c.Orgs > orgsMax:
		return fmt.Errorf("orgs must be 1 to %d, not %d", orgsMax, c.Orgs)
	case c.Keys < c.Orgs || c.Keys > keysMax:
		return fmt.Errorf("keys must be %d (one per organization) to %d, not %d", c.Orgs, keysMax, c.Keys)
	case keysPerOrg(c.Keys, min(c.Orgs, c.ReplayReferences)) > keysPerOrganizationMax:
		// uniform spreads its keys over Orgs organizations, replay over as
		// many as it has references for; hot_account holds at most one
		// organization's (hotAccountKeys).
		return fmt.Errorf("%d keys over %d organizations are more than the %d one organization may hold: add -orgs",
			c.Keys, min(c.Orgs, c.ReplayReferences), keysPerOrganizationMax)
	case c.ReplayReferences < 1 || c.ReplayReferences > replayReferencesMax:
		return fmt.Errorf("replay references must be 1 to %d, not %d", replayReferencesMax, c.ReplayReferences)
	case c.Window < 0:
		return fmt.Errorf("window must not be negative, not %s", c.Window)
	case c.Window > 0 && c.Window < windowMin:
		return fmt.Errorf("window must be at least %s, not %s", windowMin, c.Window)
	case c.Window > c.Duration:
		return fmt.Errorf("window %s is longer than the duration %s", c.Window, c.Duration)
	case c.Window > 0 && windowCount(c.Duration, c.Window) > windowsMax:
		return fmt.Errorf("a duration of %s makes %d windows of %s; at most %d: use a longer window",
			c.Duration, windowCount(c.Duration, c.Window), c.Window, windowsMax)
	case c.ServerPID < 0:
		return fmt.Errorf("server pid must be positive, not %d", c.ServerPID)
	case c.NoiseExports < 0 || c.NoiseExports > noiseExportsMax:
		return fmt.Errorf("noise exports must be 0 to %d, not %d", noiseExportsMax, c.NoiseExports)
	case c.NoisePayouts < 1 || c.NoisePayouts > noisePayoutsMax:
		return fmt.Errorf("noise payouts must be 1 to %d, not %d", noisePayoutsMax, c.NoisePayouts)
	}
	return nil
}

// Run prepares workload w on the server, runs its load for cfg.Warmup and
// then cfg.Duration (or until cfg.RequestsMax requests), and returns what it
// measured. A setup failure is an error; failed requests during the load are
// not: they are counted in the Result. When ctx ends during the load, Run
// returns the partial Result with ctx's error.
//
// Run is safe to call again, sequentially or concurrently, against the same
// server: each run creates its own organizations and references.
func Run(ctx context.Context, cfg Config, w *Workload) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	runID, err := newRunID()
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(cfg.Progress, "%s: setting up (run %s)…\n", w.Name, runID)
	setupStart := time.Now()
	s := newSetup(cfg.addrs()[0])
	s.orgsOut = cfg.OrgsOut
	sctx, cancel := context.WithTimeout(ctx, cfg.SetupTimeout)
	src, err := w.prepare(sctx, s, &cfg, runID)
	var nz *noise
	if err == nil && cfg.NoiseExports > 0 {
		noiseStart := time.Now()
		if nz, err = prepareNoise(sctx, s, &cfg, runID); err == nil {
			fmt.Fprintf(cfg.Progress, "%s: noisy organization ready in %s: %d payouts, %d rows in %d export ranges\n",
				w.Name, time.Since(noiseStart).Round(time.Millisecond), nz.payouts, nz.rows(), len(nz.ranges))
		}
	}
	cancel()
	s.close()
	if err != nil {
		return nil, fmt.Errorf("%s: setup: %w", w.Name, err)
	}
	setupTime := time.Since(setupStart)
	fmt.Fprintf(cfg.Progress, "%s: setup done in %s (%d keys); warm-up %s, then measuring %s with %d connections\n",
		w.Name, setupTime.Round(time.Millisecond), src.keyCount(), cfg.Warmup, cfg.Duration, cfg.Connections)

	r := newLoad(&cfg, w, src, nz)
	stats, exporters := r.run(ctx)
	res := summarize(w, &cfg, src.keyCount(), stats, r.elapsed)
	res.ServerCPUSeconds = r.serverCPU.Seconds()
	res.SetupSeconds = setupTime.Seconds()
	res.KeyLimitPerSecond = int(s.keyLimit.Load())
	if r.win != nil {
		res.Windows = r.win.closed
		res.Soak = summarizeSoak(r.win.closed, cfg.Window)
	}
	if nz != nil {
		res.Noise = summarizeNoise(nz, exporters, r.elapsed)
	}
	return res, ctx.Err()
}

// load is one run of the load loop.
type load struct {
	cfg     *Config
	name    string // of the workload
	expect  int    // the workload's expected status
	src     source
	clients []*fasthttp.HostClient // one per address of Config.Addr
	url     string                 // on the first address

	win         *windows             // soak mode's; nil without it
	noise       *noise               // the noisy neighbour; nil without it
	noiseClient *fasthttp.HostClient // the exporters'
	noiseIssued atomic.Uint64        // exports started

	measureFrom time.Time // the end of the warm-up
	end         time.Time // the end of the measured phase
	elapsed     time.Duration
	serverCPU   time.Duration // the server's over the measured phase; 0 when unknown

	turn           atomic.Uint64 // requests started, warm-up included
	warmupIssued   atomic.Uint64
	measuredIssued atomic.Uint64
	stop           chan struct{} // closed when the measured phase or ctx ends
	finished       chan struct{} // closed when the workers have returned
}

func newLoad(cfg *Config, w *Workload, src source, nz *noise) *load {
	addrs := cfg.addrs()
	r := &load{
		cfg:      cfg,
		name:     w.Name,
		expect:   w.Expect,
		src:      src,
		url:      "http://" + addrs[0] + "/v1/payouts",
		noise:    nz,
		stop:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	// Every worker may send to every node, so each node's client may
	// hold a connection per worker.
	for _, addr := range addrs {
		r.clients = append(r.clients, loadClient(cfg, addr, "paybench", cfg.Connections))
	}
	if nz != nil {
		r.noiseClient = loadClient(cfg, addrs[0], "paybench-noise", cfg.NoiseExports)
		r.noiseClient.MaxResponseBodySize = exportBodyBytesMax
	}
	return r
}

// loadClient is a client of the measured phase to addr, with conns
// connections.
func loadClient(cfg *Config, addr, name string, conns int) *fasthttp.HostClient {
	return &fasthttp.HostClient{
		Addr:               addr,
		Name:               name,
		MaxConns:           conns,
		ReadTimeout:        cfg.RequestTimeout,
		WriteTimeout:       cfg.RequestTimeout,
		MaxConnWaitTimeout: cfg.RequestTimeout,
		// A failed request is counted, never retried here: a retry
		// would hide the failure and skew the latency. Against a
		// cluster, send retries in the open and counts each retry.
		MaxIdemponentCallAttempts: 1,
		RetryIfErr:                func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
	}
}

// measured is what a worker or an exporter counted of its requests in the
// measured phase, and how long the answered ones took.
type measured struct {
	tally
	latency Histogram
}

// merge adds o's counts and latencies to m's.
func (m *measured) merge(o *measured) {
	m.tally.merge(&o.tally)
	m.latency.Merge(&o.latency)
}

// workerStats is what one worker saw in the measured phase.
type workerStats struct {
	measured
	warmup    uint64 // requests of the warm-up
	warmupBad uint64 // of which failed or got a status other than 2xx
}

// run starts the workers (and the exporters and the window collector, when
// the run has them), waits for them, and returns the stats of the workers
// and of the exporters.
func (r *load) run(ctx context.Context) ([]*workerStats, []*exporterStats) {
	start := time.Now()
	r.measureFrom = start.Add(r.cfg.Warmup)
	r.end = r.measureFrom.Add(r.cfg.Duration)
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(r.end)):
		}
		close(r.stop)
	}()

	collected := make(chan struct{})
	if r.cfg.Window > 0 {
		r.win = newWindows(r.measureFrom, r.cfg.Duration, r.cfg.Window, r.cfg.Connections)
		r.win.name, r.win.progress, r.win.pid = r.name, r.cfg.Progress, r.cfg.ServerPID
		go func() {
			defer close(collected)
			// elapsed is set before finished is closed.
			r.win.collect(r.finished, func() time.Duration { return r.elapsed })
		}()
	} else {
		close(collected)
	}
	var exporters []*exporterStats
	var noiseWG sync.WaitGroup
	if r.noise != nil {
		exporters = make([]*exporterStats, r.cfg.NoiseExports)
		for i := range exporters {
			exporters[i] = &exporterStats{}
			noiseWG.Go(func() { r.exporter(i, exporters[i]) })
		}
	}

	// The server's CPU time over the measured phase: read when it starts
	// and once the last response is in.
	cpuFrom := make(chan time.Duration, 1)
	if r.cfg.ServerPID > 0 {
		go func() {
			select {
			case <-time.After(time.Until(r.measureFrom)):
			case <-r.stop:
			}
			if d, err := ReadCPU(r.cfg.ServerPID); err == nil {
				cpuFrom <- d
			}
			close(cpuFrom)
		}()
	} else {
		close(cpuFrom)
	}

	stats := make([]*workerStats, r.cfg.Connections)
	var wg sync.WaitGroup
	for i := range stats {
		stats[i] = &workerStats{}
		wg.Go(func() { r.worker(i, stats[i]) })
	}
	wg.Wait()
	r.elapsed = time.Since(r.measureFrom)
	if from, ok := <-cpuFrom; ok {
		if to, err := ReadCPU(r.cfg.ServerPID); err == nil {
			r.serverCPU = to - from
		}
	}
	close(r.finished)
	noiseWG.Wait()
	<-collected
	for _, c := range r.clients {
		c.CloseIdleConnections()
	}
	if r.noiseClient != nil {
		r.noiseClient.CloseIdleConnections()
	}
	return stats, exporters
}

// worker sends one request at a time until the measured phase ends, the
// request cap is reached, or the run is stopped. slot is its index among
// the workers.
func (r *load) worker(slot int, st *workerStats) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(r.url)
	req.Header.SetContentType("application/json")
	var buf []byte

	for {
		select {
		case <-r.stop:
			return
		default:
		}
		measured := !time.Now().Before(r.measureFrom)
		if measured {
			if r.measuredIssued.Add(1) > r.cfg.RequestsMax {
				return
			}
		} else if r.warmupIssued.Add(1) > r.cfg.RequestsMax {
			// Warm-up cap reached: idle until the measured phase.
			select {
			case <-r.stop:
				return
			case <-time.After(time.Until(r.measureFrom)):
			}
			continue
		}
		turn := r.turn.Add(1) - 1
		buf = r.src.fill(req, turn, buf[:0])
		sent := time.Now()
		var out sendOutcome
		if len(r.clients) == 1 {
			out.err = r.clients[0].Do(req, resp)
		} else {
			out = r.send(req, resp, turn, sent)
		}
		err, code := out.err, resp.StatusCode()
		if err == nil && code >= 200 && code <= 299 && r.cfg.Acknowledged != nil {
			r.cfg.Acknowledged(req.Body(), resp.Body())
		}
		if !measured {
			st.warmup++
			if err != nil || code < 200 || code > 299 {
				st.warmupBad++
			}
			continue
		}
		var latency time.Duration
		if r.win != nil {
			latency = r.win.record(slot, sent, code, err != nil)
		} else {
			latency = time.Since(sent)
		}
		st.add(err, code)
		st.failovers += out.failovers
		st.retries += out.retries
		if len(r.clients) > 1 && err == nil && code == fasthttp.StatusOK && r.expect == fasthttp.StatusCreated {
			st.replays++
		}
		if err == nil {
			st.latency.Record(latency)
		}
	}
}

// Bounds of send, the retries of a request against a cluster.
const (
	retryAttemptsMax = 64                     // sends of one request, the first included
	retryDelay       = 20 * time.Millisecond  // wait before a retry; grows linearly
	retryDelayMax    = 250 * time.Millisecond // the longest wait
)

// sendOutcome is how one request against a cluster went.
type sendOutcome struct {
	err       error  // the last attempt's transport error; nil when it got a response
	failovers uint64 // attempts that reached no node, sent on to the next
	retries   uint64 // re-sends after an attempt that may have reached a node
}

// send sends req to the cluster as a client of a cluster should, so that
// a node stopping or restarting shows no error to the user. It sends
// request turn to node turn mod the nodes (round-robin per request), and
//
//   - when a connection cannot be made (refused, reset while dialling),
//     the request never reached a node: it goes to the next one at once;
//   - when the connection fails after the request was written, or the
//     answer is 503 service_unavailable or outcome_unknown, the node may or
//     may not have acted on it: it is re-sent, the same body with the same
//     externalReference, to the next node after a short wait. That is safe
//     because the reference makes a payout idempotent: a re-send of one
//     that was created is answered 200 with it.
//
// It gives up after retryAttemptsMax attempts or Config.RequestTimeout
// after first, whichever comes first, and returns the last attempt's
// outcome: a response left in resp, or a transport error.
func (r *load) send(req *fasthttp.Request, resp *fasthttp.Response, turn uint64, first time.Time) sendOutcome {
	var out sendOutcome
	deadline := first.Add(r.cfg.RequestTimeout)
	node := int(turn % uint64(len(r.clients)))
	refusedInARow := 0
	for attempt := 1; ; attempt++ {
		hc := r.clients[node]
		req.URI().SetHost(hc.Addr)
		out.err = hc.DoDeadline(req, resp, deadline)
		refused := out.err != nil && neverSent(out.err)
		if out.err == nil && !retryableAnswer(resp) {
			return out
		}
		var wait time.Duration
		if refused {
			refusedInARow++
			if refusedInARow%len(r.clients) == 0 {
				wait = retryDelay // every node refused: one is restarting
			}
		} else {
			refusedInARow = 0
			wait = min(time.Duration(out.retries+1)*retryDelay, retryDelayMax)
		}
		if attempt >= retryAttemptsMax || !time.Now().Add(wait).Before(deadline) {
			return out
		}
		if refused {
			out.failovers++
		} else {
			out.retries++
		}
		node = (node + 1) % len(r.clients)
		// Not cut short when the run ends: a request given up then
		// would count as an error the cluster did not make.
		time.Sleep(wait)
	}
}

// neverSent reports whether err means that no connection was made, so
// that no node saw the request.
func neverSent(err error) bool {
	var dial *fasthttp.ErrDialWithUpstream
	return errors.As(err, &dial) || errors.Is(err, fasthttp.ErrNoFreeConns)
}

// retryableAnswer reports whether resp says that the node could not act
// on the request for now (no leader, or shutting down) or does not know
// whether it did (leadership lost mid-commit): 503 service_unavailable or
// outcome_unknown, which the contract says to retry with the same
// reference.
func retryableAnswer(resp *fasthttp.Response) bool {
	if resp.StatusCode() != fasthttp.StatusServiceUnavailable {
		return false
	}
	var body struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(resp.Body(), &body) != nil {
		return false
	}
	return body.Error == "service_unavailable" || body.Error == "outcome_unknown"
}

// tally counts the outcomes of requests: responses by status code, and
// requests that failed without a response by kind of transport error.
type tally struct {
	status    [statusCodeMax]uint64 // index 0 counts the codes outside 1-599
	transport map[string]uint64     // at most errorKindsMax keys

	// A cluster run's (see send): attempts sent to the next node,
	// requests re-sent, and requests answered 200 where the workload
	// expects 201: the replay of the payout an earlier attempt created.
	failovers, retries, replays uint64
}

// add counts one request: failed with err, or answered with code.
func (t *tally) add(err error, code int) {
	if err != nil {
		if t.transport == nil {
			t.transport = make(map[string]uint64)
		}
		kind := errorKind(err)
		if _, ok := t.transport[kind]; !ok && len(t.transport) >= errorKindsMax {
			kind = "other"
		}
		t.transport[kind]++
		return
	}
	if code < 0 || code >= statusCodeMax {
		code = 0
	}
	t.status[code]++
}

// merge adds o's counts to t's.
func (t *tally) merge(o *tally) {
	t.failovers += o.failovers
	t.retries += o.retries
	t.replays += o.replays
	for code, n := range o.status {
		t.status[code] += n
	}
	for kind, n := range o.transport {
		if t.transport == nil {
			t.transport = make(map[string]uint64)
		}
		t.transport[kind] += n
	}
}

// errorKind names a transport error briefly, so that errors of one kind
// count together.
func errorKind(err error) string {
	var nerr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.As(err, &nerr) && nerr.Timeout():
		return "timeout"
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return "no_free_connection"
	case errors.Is(err, fasthttp.ErrConnectionClosed):
		return "connection_closed"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op + ": " + op.Err.Error()
	}
	return err.Error()
}

// newRunID draws 8 hex digits that tag the names and references of a run.
func newRunID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
