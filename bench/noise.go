package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"
)

// The noisy neighbour measures isolation between organizations. Setup gives
// one extra organization a long history (Config.NoisePayouts payouts, two
// ledger rows each); during the measured phase Config.NoiseExports
// goroutines export its transactions as CSV, over and over, while the
// workload runs on its own organizations as usual. Comparing the workload's
// figures with and without the noise shows what one organization's heavy
// reads cost the others.
//
// An export answers at most 10,000 rows and refuses a larger range, so
// setup splits the history into from/to ranges the server accepts, by
// halving any range it refuses, and the exporters cycle over them.

// Limits of the noisy neighbour.
const (
	DefaultNoisePayouts = 20_000

	noiseExportsMax = 256
	noisePayoutsMax = 200_000
	// noiseKeys is how many keys the noisy organization holds: enough for
	// setup to create its payouts at full speed, and at least one per
	// exporter.
	noiseKeys          = noiseExportsMax
	noisePollInterval  = 100 * time.Millisecond // between checks for pending payouts
	exportProbesMax    = 256                    // exports setup may try while splitting the history
	exportBodyBytesMax = 16 << 20               // one export's response: 10,000 rows are about 2 MB
)

// noise is the noisy neighbour of a run, as setup prepared it.
type noise struct {
	keys    [][]byte // Authorization values: "Bearer sk_test_…"
	ranges  []exportRange
	payouts int
	// keyInterval is the least time between two exports with one key:
	// it keeps each key under keyRateWarnFraction of the server's limit, so
	// that an export is never refused for the rate.
	keyInterval time.Duration
}

// exportRange is a from/to range of the noisy organization's history.
type exportRange struct {
	path string // /v1/transactions/export?…
	rows int    // in the CSV
}

// rows returns how many rows the ranges hold together.
func (n *noise) rows() int {
	total := 0
	for _, r := range n.ranges {
		total += r.rows
	}
	return total
}

// prepareNoise creates the noisy organization and its history, waits until
// none of its payouts is pending, and splits the history into export
// ranges.
func prepareNoise(ctx context.Context, s *setup, cfg *Config, runID string) (*noise, error) {
	orgs, err := s.createOrgs(ctx, cfg.Key, runID+"-noise", 1, noiseKeys, fundingAmount)
	if err != nil {
		return nil, fmt.Errorf("noisy organization: %w", err)
	}
	o := orgs[0]
	// The funding is the first row of its history.
	from, err := s.newestTransaction(ctx, o.keys[0])
	if err != nil {
		return nil, fmt.Errorf("noisy organization: %w", err)
	}
	prefix := "bench-" + runID + "-n-"
	err = parallelN(ctx, cfg.NoisePayouts, setupConcurrency, func(ctx context.Context, i int) error {
		body := appendPayout(nil, payoutAmounts[i%len(payoutAmounts)], prefix, uint64(i))
		return s.post(ctx, o.keys[i%len(o.keys)], "/v1/payouts", body, fasthttp.StatusCreated, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("noisy organization's payouts: %w", err)
	}
	if err := s.waitNotPending(ctx, o.keys[0]); err != nil {
		return nil, fmt.Errorf("noisy organization's payouts: %w", err)
	}
	to, err := s.newestTransaction(ctx, o.keys[0])
	if err != nil {
		return nil, fmt.Errorf("noisy organization: %w", err)
	}
	ranges, err := s.exportRanges(ctx, o.keys[0], from, to)
	if err != nil {
		return nil, fmt.Errorf("noisy organization's export ranges: %w", err)
	}
	n := &noise{ranges: ranges, payouts: cfg.NoisePayouts}
	for _, k := range o.keys {
		n.keys = append(n.keys, []byte("Bearer "+k))
	}
	limit := float64(s.keyLimit.Load())
	if limit <= 0 {
		limit = 100 // the server's default
	}
	n.keyInterval = time.Duration(float64(time.Second) / (keyRateWarnFraction * limit))
	return n, nil
}

// newestTransaction returns the time of the newest row of the
// organization's transactions, in unix ms on the organization's clock.
func (s *setup) newestTransaction(ctx context.Context, key string) (int64, error) {
	var page struct {
		Data []struct {
			CreatedAt time.Time `json:"createdAt"`
		} `json:"data"`
	}
	if err := s.get(ctx, key, "/v1/transactions?limit=1", fasthttp.StatusOK, &page); err != nil {
		return 0, err
	}
	if len(page.Data) == 0 {
		return 0, fmt.Errorf("GET /v1/transactions: no transactions")
	}
	return page.Data[0].CreatedAt.UnixMilli(), nil
}

// waitNotPending polls the organization's pending payouts until there are
// none, or ctx ends.
func (s *setup) waitNotPending(ctx context.Context, key string) error {
	for {
		var page struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := s.get(ctx, key, "/v1/payouts?status=pending&limit=1", fasthttp.StatusOK, &page); err != nil {
			return err
		}
		if len(page.Data) == 0 {
			return nil
		}
		select {
		case <-time.After(noisePollInterval):
		case <-ctx.Done():
			return fmt.Errorf("payouts still pending: %w", ctx.Err())
		}
	}
}

// exportRanges splits from–to (unix ms, both inclusive) into ranges that
// the export accepts, oldest first, leaving out those without rows. It
// exports the whole range and halves any range refused with a 400 about
// from (more rows than the export's limit), trying at most
// exportProbesMax exports.
func (s *setup) exportRanges(ctx context.Context, key string, from, to int64) ([]exportRange, error) {
	var out []exportRange
	probes := 0
	var split func(from, to int64) error
	split = func(from, to int64) error {
		if probes++; probes > exportProbesMax {
			return fmt.Errorf("more than %d exports tried", exportProbesMax)
		}
		path := exportPath(from, to)
		code, body, err := s.call(ctx, fasthttp.MethodGet, key, path, nil)
		if err != nil {
			return err
		}
		switch {
		case code == fasthttp.StatusOK:
			if rows := csvRows(body); rows > 0 {
				out = append(out, exportRange{path: path, rows: rows})
			}
			return nil
		case code == fasthttp.StatusBadRequest && from < to && bytes.Contains(body, []byte(`"from"`)):
			mid := from + (to-from)/2
			if err := split(from, mid); err != nil {
				return err
			}
			return split(mid+1, to)
		}
		return fmt.Errorf("GET %s: got %d, want 200: %s", path, code, truncate(body, 300))
	}
	if err := split(from, to); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no rows to export between %s and %s", exportTime(from), exportTime(to))
	}
	return out, nil
}

// exportPath is the CSV export of the rows from–to (unix ms, inclusive).
func exportPath(from, to int64) string {
	return "/v1/transactions/export?format=csv&from=" + exportTime(from) + "&to=" + exportTime(to)
}

// exportTime formats unix ms as the export's from and to read them.
func exportTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// csvRows counts the rows of a CSV export: its lines after the header.
func csvRows(body []byte) int {
	return max(bytes.Count(body, []byte("\n"))-1, 0)
}

// exporterStats is what one exporter saw in the measured phase.
type exporterStats struct {
	measured        // latency: of answered exports
	exports  uint64 // answered 200
	rows     uint64 // in those
}

// exporter exports the noisy organization's ranges in turn, starting at
// range i, one at a time, from the start of the measured phase until the
// load's workers have returned or RequestsMax exports were sent. Exporter
// i of n uses keys i, i+n, i+2n, … and never one of them twice within
// keyInterval.
func (r *load) exporter(i int, st *exporterStats) {
	n := r.cfg.NoiseExports
	nz := r.noise
	var keys [][]byte
	for j := i; j < len(nz.keys); j += n {
		keys = append(keys, nz.keys[j])
	}
	next := make([]time.Time, len(keys)) // when each key may be used again
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodGet)
	base := "http://" + r.cfg.addrs()[0]

	select {
	case <-r.finished:
		return
	case <-time.After(time.Until(r.measureFrom)):
	}
	for turn := 0; ; turn++ {
		k := turn % len(keys)
		select {
		case <-r.finished:
			return
		case <-time.After(time.Until(next[k])):
		}
		if r.noiseIssued.Add(1) > r.cfg.RequestsMax {
			return
		}
		next[k] = time.Now().Add(nz.keyInterval)
		req.Header.SetBytesV("Authorization", keys[k])
		req.SetRequestURI(base + nz.ranges[(i+turn)%len(nz.ranges)].path)
		sent := time.Now()
		err := r.noiseClient.Do(req, resp)
		latency := time.Since(sent)
		st.add(err, resp.StatusCode())
		if err != nil {
			continue
		}
		st.latency.Record(latency)
		if resp.StatusCode() == fasthttp.StatusOK {
			st.exports++
			st.rows += uint64(csvRows(resp.Body()))
		}
	}
}

// Noise is what the noisy neighbour did in a run's measured phase.
type Noise struct {
	Exporters int `json:"exporters"` // goroutines exporting, one export at a time each
	Payouts   int `json:"payouts"`   // in the noisy organization's history
	// Ranges is how many from/to ranges the history was split into to stay
	// under the export's row limit; HistoryRows is the rows they hold.
	Ranges      int `json:"ranges"`
	HistoryRows int `json:"historyRows"`

	Exports          uint64  `json:"exports"` // answered 200
	ExportsPerSecond float64 `json:"exportsPerSecond"`
	RowsPerSecond    float64 `json:"rowsPerSecond"` // in the exports answered 200
	Latency          Latency `json:"latency"`       // of every answered export
	// Failures counts the exports not answered 200: other statuses and
	// transport errors, which Statuses and TransportErrors detail.
	Failures        uint64            `json:"failures"`
	Statuses        map[string]uint64 `json:"statuses"`
	TransportErrors map[string]uint64 `json:"transportErrors"`
}

// summarizeNoise merges the exporters' stats; rates are over elapsed, the
// measured phase.
func summarizeNoise(nz *noise, stats []*exporterStats, elapsed time.Duration) *Noise {
	res := &Noise{Exporters: len(stats), Payouts: nz.payouts, Ranges: len(nz.ranges), HistoryRows: nz.rows()}
	var all measured
	var rows uint64
	for _, st := range stats {
		all.merge(&st.measured)
		res.Exports += st.exports
		rows += st.rows
	}
	sum := all.summarize(fasthttp.StatusOK)
	res.Statuses, res.TransportErrors, res.Failures = sum.statuses, sum.transport, sum.unexpected
	res.Latency = Summarize(&all.latency)
	if elapsed > 0 {
		res.ExportsPerSecond = float64(res.Exports) / elapsed.Seconds()
		res.RowsPerSecond = float64(rows) / elapsed.Seconds()
	}
	return res
}

// line describes n on one line of the report.
func (n *Noise) line() string {
	s := fmt.Sprintf("%d exporters: %d exports of the noisy organization's %d payouts (%d rows in %d ranges), %.1f exports/s, %.0f rows/s, p50 %s p99 %s max %s, %d failed",
		n.Exporters, n.Exports, n.Payouts, n.HistoryRows, n.Ranges, n.ExportsPerSecond, n.RowsPerSecond,
		FormatDuration(n.Latency.P50), FormatDuration(n.Latency.P99), FormatDuration(n.Latency.Max), n.Failures)
	if n.Failures > 0 {
		s += ": statuses " + counts(n.Statuses)
		if len(n.TransportErrors) > 0 {
			s += "; transport errors " + counts(n.TransportErrors)
		}
	}
	return s
}
