package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is what one run of a workload measured. Only the measured phase
// counts: the warm-up appears in WarmupRequests and WarmupErrors alone.
type Result struct {
	Workload    string `json:"workload"`
	Expect      int    `json:"expectedStatus"`
	Connections int    `json:"connections"`
	Keys        int    `json:"keys"` // API keys the requests rotated over
	// KeyLimitPerSecond is the rate limit per key the server announced in
	// its ratelimit-limit header during setup; 0 if it did not.
	KeyLimitPerSecond int `json:"keyLimitPerSecond"`

	SetupSeconds    float64 `json:"setupSeconds"`
	WarmupSeconds   float64 `json:"warmupSeconds"`
	DurationSeconds float64 `json:"durationSeconds"` // as configured
	// ElapsedSeconds runs from the start of the measured phase to the last
	// response of it, so it exceeds DurationSeconds by about one latency
	// (or falls short of it when RequestsMax stopped the run).
	ElapsedSeconds float64 `json:"elapsedSeconds"`

	Requests          uint64  `json:"requests"` // sent: Responses + transport errors
	Responses         uint64  `json:"responses"`
	RequestsPerSecond float64 `json:"requestsPerSecond"` // Requests / ElapsedSeconds
	// Latency is measured in the client, from just before the request is
	// written to when the whole response has been read, over every response
	// whatever its status. Requests that failed without a response are not
	// in it.
	Latency Latency `json:"latency"`

	// Statuses counts responses by status code ("201"); "other" counts codes
	// outside 0-599.
	Statuses map[string]uint64 `json:"statuses"`
	// TransportErrors counts requests that got no response, by kind
	// ("timeout", "connection_closed", …).
	TransportErrors map[string]uint64 `json:"transportErrors"`
	// Errors counts responses outside 2xx plus transport errors.
	Errors uint64 `json:"errors"`
	// Unexpected counts requests that did not get Expect: Errors plus any
	// 2xx other than Expect.
	Unexpected uint64 `json:"unexpected"`

	// ServerCPUSeconds is the CPU time, user and system, the server's
	// process used over the measured phase (Config.ServerPID; 0 when
	// unknown): divided by Requests, what a request costs the server
	// whoever else loads the machine.
	ServerCPUSeconds float64 `json:"serverCpuSeconds,omitempty"`

	WarmupRequests uint64 `json:"warmupRequests"`
	WarmupErrors   uint64 `json:"warmupErrors"` // transport errors and non-2xx

	// Against a cluster (Config.Addr naming several nodes) a request that
	// meets a node going away is sent again, and only what survives the
	// retries counts in Errors. Failovers counts attempts that reached no
	// node (the connection was refused) and went to the next; Retries
	// counts re-sends, with the same reference, after an attempt that may
	// have reached a node (the connection failed after the request was
	// written, or 503 service_unavailable or outcome_unknown). Replays
	// counts payouts answered 200 where the workload expects 201: the
	// replay of the payout an earlier attempt created — this client's, or
	// the first of a forward that a follower re-sent to a new leader. A
	// payout acknowledged all the same, it is not in Unexpected. All zero
	// against one server.
	Failovers uint64 `json:"failovers,omitempty"`
	Retries   uint64 `json:"retries,omitempty"`
	Replays   uint64 `json:"replays,omitempty"`

	// Windows and Soak are soak mode's (Config.Window): each window of the
	// measured phase, and their summary. Absent without it.
	Windows []Window `json:"windows,omitempty"`
	Soak    *Soak    `json:"soak,omitempty"`
	// Noise is what the noisy neighbour did (Config.NoiseExports); absent
	// without it.
	Noise *Noise `json:"noise,omitempty"`
}

// Failed reports whether some request of the measured phase did not get
// the workload's expected status, or some export of the noisy neighbour
// did not get 200.
func (r *Result) Failed() bool {
	return r.Unexpected > 0 || r.Noise != nil && r.Noise.Failures > 0
}

// KeyRatePerSecond returns the requests per second each key carried on
// average.
func (r *Result) KeyRatePerSecond() float64 {
	if r.Keys == 0 {
		return 0
	}
	return r.RequestsPerSecond / float64(r.Keys)
}

// ServerCPUPerRequest is the server's CPU time per request of the measured
// phase; 0 when unknown.
func (r *Result) ServerCPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return time.Duration(r.ServerCPUSeconds * float64(time.Second) / float64(r.Requests))
}

// cpuPerRequest is ServerCPUPerRequest as the table shows it, "-" when
// unknown.
func (r *Result) cpuPerRequest() string {
	if d := r.ServerCPUPerRequest(); d > 0 {
		return FormatDuration(d)
	}
	return "-"
}

// Latency summarises a Histogram.
type Latency struct {
	Min, Mean, P50, P90, P99, P999, Max time.Duration
}

// latencyJSON is Latency on the wire, in milliseconds.
type latencyJSON struct {
	MinMs  float64 `json:"minMs"`
	MeanMs float64 `json:"meanMs"`
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P99Ms  float64 `json:"p99Ms"`
	P999Ms float64 `json:"p999Ms"`
	MaxMs  float64 `json:"maxMs"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 } // to the microsecond

func fromMs(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// MarshalJSON writes the latencies in milliseconds.
func (l Latency) MarshalJSON() ([]byte, error) {
	return json.Marshal(latencyJSON{ms(l.Min), ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Latency) UnmarshalJSON(b []byte) error {
	var j latencyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*l = Latency{fromMs(j.MinMs), fromMs(j.MeanMs), fromMs(j.P50Ms), fromMs(j.P90Ms), fromMs(j.P99Ms), fromMs(j.P999Ms), fromMs(j.MaxMs)}
	return nil
}

// Summarize reads a Latency from h.
func Summarize(h *Histogram) Latency {
	return Latency{
		Min: h.Min(), Mean: h.Mean(), Max: h.Max(),
		P50: h.Quantile(0.50), P90: h.Quantile(0.90), P99: h.Quantile(0.99), P999: h.Quantile(0.999),
	}
}

// summarize merges the workers' stats into a Result.
func summarize(w *Workload, cfg *Config, keys int, stats []*workerStats, elapsed time.Duration) *Result {
	res := &Result{
		Workload:        w.Name,
		Expect:          w.Expect,
		Connections:     cfg.Connections,
		Keys:            keys,
		WarmupSeconds:   cfg.Warmup.Seconds(),
		DurationSeconds: cfg.Duration.Seconds(),
		ElapsedSeconds:  elapsed.Seconds(),
	}
	var all measured
	for _, st := range stats {
		all.merge(&st.measured)
		res.WarmupRequests += st.warmup
		res.WarmupErrors += st.warmupBad
	}
	sum := all.summarize(w.Expect)
	res.Statuses, res.TransportErrors = sum.statuses, sum.transport
	res.Requests, res.Responses, res.Errors, res.Unexpected = sum.requests, sum.responses, sum.errors, sum.unexpected
	res.Failovers, res.Retries, res.Replays = all.failovers, all.retries, all.replays
	if elapsed > 0 {
		res.RequestsPerSecond = float64(res.Requests) / elapsed.Seconds()
	}
	res.Latency = Summarize(&all.latency)
	return res
}

// tallySummary is a tally as a report shows it.
type tallySummary struct {
	statuses  map[string]uint64 // by status code ("201"); "other" for codes outside 1-599
	transport map[string]uint64 // by kind
	requests  uint64            // responses and transport errors
	responses uint64
	errors    uint64 // responses outside 2xx, and transport errors
	// unexpected counts the requests that did not get expect: errors and
	// any 2xx other than expect.
	unexpected uint64
}

// summarize reads t as a report shows it, for requests that expect status
// expect.
func (t *tally) summarize(expect int) tallySummary {
	s := tallySummary{statuses: make(map[string]uint64), transport: make(map[string]uint64)}
	for code, n := range t.status {
		if n == 0 {
			continue
		}
		name := strconv.Itoa(code)
		if code == 0 {
			name = "other"
		}
		s.statuses[name] = n
		s.responses += n
		if code < 200 || code > 299 {
			s.errors += n
		}
		if code != expect {
			s.unexpected += n
		}
	}
	for kind, n := range t.transport {
		s.transport[kind] = n
		s.requests += n
		s.errors += n
		s.unexpected += n
	}
	s.requests += s.responses
	s.unexpected -= min(t.replays, s.unexpected)
	return s
}

// keyRateWarnFraction is the fraction of the server's rate limit per key
// above which the table warns that the limit, not the service, may be what
// bounds the throughput.
const keyRateWarnFraction = 0.7

// WriteTable prints results as a table, then one line per workload that saw
// errors or unexpected statuses, naming them.
func WriteTable(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\trequests\treq/s\tp50\tp99\tp999\tmax\terrors\tcpu/req\tstatuses\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n",
			r.Workload, r.Requests, r.RequestsPerSecond,
			FormatDuration(r.Latency.P50), FormatDuration(r.Latency.P99),
			FormatDuration(r.Latency.P999), FormatDuration(r.Latency.Max),
			r.Errors, r.cpuPerRequest(), counts(r.Statuses))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if r.Unexpected > 0 {
			fmt.Fprintf(w, "%s: %d of %d requests did not get %d: statuses %s",
				r.Workload, r.Unexpected, r.Requests, r.Expect, counts(r.Statuses))
			if len(r.TransportErrors) > 0 {
				fmt.Fprintf(w, "; transport errors %s", counts(r.TransportErrors))
			}
			fmt.Fprintln(w)
		}
		if rate := r.KeyRatePerSecond(); r.KeyLimitPerSecond > 0 && rate > keyRateWarnFraction*float64(r.KeyLimitPerSecond) {
			fmt.Fprintf(w, "%s: %.0f req/s per key on average, near the server's limit of %d: run with more -keys\n",
				r.Workload, rate, r.KeyLimitPerSecond)
		}
		if r.Failovers > 0 || r.Retries > 0 || r.Replays > 0 {
			fmt.Fprintf(w, "%s: %d attempts reached no node and went to the next; %d re-sent with the same reference; %d answered 200, the replay of the payout an earlier attempt created\n",
				r.Workload, r.Failovers, r.Retries, r.Replays)
		}
		if r.WarmupErrors > 0 {
			fmt.Fprintf(w, "%s: %d of %d warm-up requests failed or got a status outside 2xx\n",
				r.Workload, r.WarmupErrors, r.WarmupRequests)
		}
		if r.Noise != nil {
			fmt.Fprintf(w, "%s: noise: %s\n", r.Workload, r.Noise.line())
		}
	}
	for _, r := range results {
		if r.Soak != nil {
			if err := writeWindows(w, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeWindows prints the windows of a soak result as a table, then their
// summary.
func writeWindows(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "\n%s: windows of %s\n", r.Workload, time.Duration(r.Soak.WindowSeconds*float64(time.Second)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "start\tend\trequests\treq/s\tp50\tp99\tp999\tmax\terrors\trss\t")
	for _, win := range r.Windows {
		fmt.Fprintf(tw, "%.1fs\t%.1fs\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\t%s\t\n",
			win.StartSeconds, win.EndSeconds, win.Requests, win.RequestsPerSecond,
			FormatDuration(win.Latency.P50), FormatDuration(win.Latency.P99),
			FormatDuration(win.Latency.P999), FormatDuration(win.Latency.Max),
			win.Errors, FormatBytes(win.RSSBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: soak: %s\n", r.Workload, r.Soak.line())
	return err
}

// counts formats a count map as "201=1234 429=5", sorted by key.
func counts(m map[string]uint64) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

// FormatDuration prints d with three significant digits in a unit that
// suits it: 850µs, 12.3ms, 1.25s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) + "µs"
	case d < time.Second:
		v := float64(d) / 1e6
		return strconv.FormatFloat(v, 'f', decimals(v), 64) + "ms"
	default:
		v := d.Seconds()
		return strconv.FormatFloat(v, 'f', decimals(v), 64) + "s"
	}
}

// decimals returns how many decimals give v (1 ≤ v < 1000) three
// significant digits.
func decimals(v float64) int {
	switch {
	case v < 10:
		return 2
	case v < 100:
		return 1
	default:
		return 0
	}
}

// Report is what -json writes: the runs of one invocation.
type Report struct {
	StartedAt time.Time `json:"startedAt"`
	Target    string    `json:"target"`  // host:port of the server
	Spawned   bool      `json:"spawned"` // whether paybench started the server
	CPUs      int       `json:"cpus"`    // runtime.NumCPU of the machine
	Results   []*Result `json:"results"`
	// Baseline holds the same workloads run against the bare server
	// (paybench -baseline), when they were.
	Baseline []*Result `json:"baseline,omitempty"`
}

// WriteRatios writes, per workload, the service's throughput, the bare
// server's and the share the first is of the second.
func WriteRatios(w io.Writer, ours, bare []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\treq/s\tbare req/s\tshare of bare\t")
	for _, r := range ours {
		for _, b := range bare {
			if b.Workload == r.Workload && b.RequestsPerSecond > 0 {
				fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f %%\t\n", r.Workload, r.RequestsPerSecond, b.RequestsPerSecond,
					100*r.RequestsPerSecond/b.RequestsPerSecond)
			}
		}
	}
	return tw.Flush()
}

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
