package bench

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Soak mode splits the measured phase into back-to-back windows of
// Config.Window and reports each on its own, so that a long run shows what
// one figure over the whole phase averages away: throughput that sags, a
// tail that grows, memory that climbs.
//
// A request counts in the window in which its response (or its transport
// error) arrived. Each worker records into windowStats of its own, guarded
// by a mutex of its own (a windowSlot): the worker takes it once per
// request and the collector once per window, when the window's end has
// passed and it merges the workers' stats for it. No two workers ever share
// a lock. The worker reads the time of arrival while it holds the lock, so
// once the collector holds it after a window's end, every later record of
// that worker falls in a later window: a window is closed exactly.

// Limits of soak mode.
const (
	windowMin   = 100 * time.Millisecond // the shortest -window
	windowsMax  = 3600                   // windows in one measured phase
	slowLatency = time.Second            // a request answered later than this is slow
)

// windowStats is what one worker (or, merged, every worker) saw in one
// window.
type windowStats struct {
	index    int       // of the window, from 0
	latency  Histogram // answered requests
	requests uint64    // answered, and failed without an answer
	errors   uint64    // responses outside 2xx, and transport errors
	slow     uint64    // answered after more than slowLatency
}

func (s *windowStats) merge(o *windowStats) {
	s.latency.Merge(&o.latency)
	s.requests += o.requests
	s.errors += o.errors
	s.slow += o.slow
}

// windowSlot is one worker's share of the windows. mu guards open, the
// windows the worker has recorded into that the collector has not taken
// yet, oldest first: usually one, two while a window closes.
type windowSlot struct {
	mu   sync.Mutex
	open []*windowStats
}

// windows splits a measured phase into windows: the workers record into
// it, and collect closes the windows in turn.
type windows struct {
	from   time.Time     // the start of the measured phase
	length time.Duration // of a window
	count  int           // windows of the measured phase; the last takes the late responses
	now    func() time.Time
	slots  []windowSlot // one per worker
	free   sync.Pool    // of *windowStats, zeroed

	name     string    // of the workload, for progress lines
	progress io.Writer // receives a line per closed window
	pid      int       // of the server, whose RSS each window reports; 0 for none
	closed   []Window  // written by the collector alone; read once it returns
}

// newWindows prepares the windows of a measured phase of duration that
// starts at from, for workers workers.
func newWindows(from time.Time, duration, length time.Duration, workers int) *windows {
	return &windows{
		from:   from,
		length: length,
		count:  windowCount(duration, length),
		now:    time.Now,
		slots:  make([]windowSlot, workers),
		free:   sync.Pool{New: func() any { return new(windowStats) }},
	}
}

// windowCount returns how many windows of length a phase of duration
// holds, the last one possibly short.
func windowCount(duration, length time.Duration) int {
	return int((duration + length - 1) / length)
}

// indexOf returns the window that t falls in; a time after the last
// window's end falls in the last.
func (w *windows) indexOf(t time.Time) int {
	return min(max(int(t.Sub(w.from)/w.length), 0), w.count-1)
}

// record counts, for worker slot, a request sent at sent that ends now:
// answered with status code, or failed without an answer (transport). It
// returns the request's latency.
func (w *windows) record(slot int, sent time.Time, code int, transport bool) time.Duration {
	s := &w.slots[slot]
	s.mu.Lock()
	defer s.mu.Unlock()
	done := w.now()
	k := w.indexOf(done)
	n := len(s.open)
	if n == 0 || s.open[n-1].index != k {
		ws := w.free.Get().(*windowStats)
		ws.index = k
		s.open = append(s.open, ws)
		n++
	}
	ws := s.open[n-1]
	latency := done.Sub(sent)
	ws.requests++
	switch {
	case transport:
		ws.errors++
		return latency
	case code < 200 || code > 299:
		ws.errors++
	}
	ws.latency.Record(latency)
	if latency > slowLatency {
		ws.slow++
	}
	return latency
}

// take merges and removes every worker's stats of window k and before, or
// with all, of every window: the workers must then have returned.
func (w *windows) take(k int, all bool) *windowStats {
	var m windowStats
	m.index = k
	var taken []*windowStats
	for i := range w.slots {
		s := &w.slots[i]
		s.mu.Lock()
		n := 0
		for n < len(s.open) && (all || s.open[n].index <= k) {
			n++
		}
		taken = append(taken[:0], s.open[:n]...)
		s.open = append(s.open[:0], s.open[n:]...)
		s.mu.Unlock()
		for _, ws := range taken {
			m.merge(ws)
			*ws = windowStats{}
			w.free.Put(ws)
		}
	}
	return &m
}

// collect closes window after window as each one's end passes, and the
// last one when finished is closed: the workers have returned, and elapsed
// returns the length of the measured phase. Each closed window goes into
// w.closed and as a line to w.progress.
//
// The collector may wake well after a window's end (a loaded machine, the
// race detector), even after the workers have returned. That changes when
// a window is closed, never what it holds: a window whose end passed
// before the phase ended is closed whole, and only the window the phase
// ended in takes every record left.
func (w *windows) collect(finished <-chan struct{}, elapsed func() time.Duration) {
	for k := range w.count {
		end := time.Duration(k+1) * w.length
		final := k == w.count-1
		if !final {
			t := time.NewTimer(time.Until(w.from.Add(end)))
			select {
			case <-t.C:
			case <-finished:
			}
			t.Stop()
		}
		select {
		case <-finished:
			// elapsed is known now: the phase ended in this window, or
			// after it and the collector is late.
			final = final || elapsed() < end
		default:
		}
		if final {
			<-finished
			w.close(k, true, elapsed())
			return
		}
		w.close(k, false, end)
	}
}

// close merges window k, which ends end after the start of the measured
// phase, reads the server's RSS, and records the window. With final it
// takes every record left and, when it would last no time at all (the
// workers returned just as the previous window closed), is dropped unless
// it holds requests.
func (w *windows) close(k int, final bool, end time.Duration) {
	m := w.take(k, final)
	start := time.Duration(k) * w.length
	if final && end <= start && m.requests == 0 {
		return
	}
	end = max(end, start)
	win := Window{
		StartSeconds: start.Seconds(),
		EndSeconds:   end.Seconds(),
		Requests:     m.requests,
		Latency:      Summarize(&m.latency),
		Errors:       m.errors,
		SlowRequests: m.slow,
	}
	if end > start {
		win.RequestsPerSecond = float64(m.requests) / (end - start).Seconds()
	}
	if w.pid > 0 {
		if rss, err := ReadRSS(w.pid); err == nil {
			win.RSSBytes = rss
		}
	}
	w.closed = append(w.closed, win)
	if w.progress != nil {
		fmt.Fprintf(w.progress, "%s: window %d %s\n", w.name, len(w.closed), win.line())
	}
}

// Window is one window of a soak run: a slice of the measured phase.
type Window struct {
	// StartSeconds and EndSeconds are times since the start of the
	// measured phase. The last window runs to the last response of the
	// phase.
	StartSeconds      float64 `json:"startSeconds"`
	EndSeconds        float64 `json:"endSeconds"`
	Requests          uint64  `json:"requests"` // whose response or transport error arrived in the window
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Latency           Latency `json:"latency"`
	Errors            uint64  `json:"errors"`       // responses outside 2xx, and transport errors
	SlowRequests      uint64  `json:"slowRequests"` // answered after more than a second
	// RSSBytes is the server's resident memory when the window closed; 0
	// (left out of the JSON) when unknown.
	RSSBytes uint64 `json:"rssBytes,omitempty"`
}

// line describes w on one line, as soak mode prints it while it runs.
func (w *Window) line() string {
	return fmt.Sprintf("%.1f–%.1fs: %d requests, %.0f req/s, p50 %s p99 %s p999 %s max %s, %d errors, rss %s",
		w.StartSeconds, w.EndSeconds, w.Requests, w.RequestsPerSecond,
		FormatDuration(w.Latency.P50), FormatDuration(w.Latency.P99),
		FormatDuration(w.Latency.P999), FormatDuration(w.Latency.Max),
		w.Errors, FormatBytes(w.RSSBytes))
}

// Soak summarises the windows of a soak run.
type Soak struct {
	WindowSeconds float64 `json:"windowSeconds"` // the configured length
	// MedianRequestsPerSecond is the median of the windows' req/s.
	MedianRequestsPerSecond float64 `json:"medianRequestsPerSecond"`
	// MinWindowFraction is the slowest window's req/s divided by the
	// median: 1 for a flat run, lower the deeper its worst dip.
	MinWindowFraction float64 `json:"minWindowFraction"`
	SlowRequests      uint64  `json:"slowRequests"` // answered after more than a second
	Failures          uint64  `json:"failures"`     // responses outside 2xx, and transport errors
	// RSSGrowthBytesPerRequest is how much the server's RSS grew from the
	// end of the first window to the end of the last, divided by the
	// requests of the windows after the first: the memory each request
	// leaves behind once the server has warmed up. Null when the RSS is
	// unknown or the run had a single window.
	RSSGrowthBytesPerRequest *float64 `json:"rssGrowthBytesPerRequest"`
}

// summarizeSoak summarises ws, windows of length.
func summarizeSoak(ws []Window, length time.Duration) *Soak {
	s := &Soak{WindowSeconds: length.Seconds()}
	if len(ws) == 0 {
		return s
	}
	rates := make([]float64, len(ws))
	for i := range ws {
		rates[i] = ws[i].RequestsPerSecond
		s.SlowRequests += ws[i].SlowRequests
		s.Failures += ws[i].Errors
	}
	slices.Sort(rates)
	mid := len(rates) / 2
	s.MedianRequestsPerSecond = rates[mid]
	if len(rates)%2 == 0 {
		s.MedianRequestsPerSecond = (rates[mid-1] + rates[mid]) / 2
	}
	if s.MedianRequestsPerSecond > 0 {
		s.MinWindowFraction = rates[0] / s.MedianRequestsPerSecond
	}
	first, last := ws[0].RSSBytes, ws[len(ws)-1].RSSBytes
	var after uint64
	for i := 1; i < len(ws); i++ {
		after += ws[i].Requests
	}
	if first > 0 && last > 0 && after > 0 {
		g := (float64(last) - float64(first)) / float64(after)
		s.RSSGrowthBytesPerRequest = &g
	}
	return s
}

// FormatBytes prints n in MiB with one decimal, or "-" for 0 (unknown).
func FormatBytes(n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
}

// line describes s on one line of the report.
func (s *Soak) line() string {
	growth := "RSS growth not measured (it needs the server's pid and two windows)"
	if g := s.RSSGrowthBytesPerRequest; g != nil {
		growth = fmt.Sprintf("RSS growth %.1f B/request after the first window", *g)
	}
	return fmt.Sprintf("median window %.0f req/s, slowest window %.2f of the median, %d requests over 1s, %d failures, %s",
		s.MedianRequestsPerSecond, s.MinWindowFraction, s.SlowRequests, s.Failures, growth)
}
