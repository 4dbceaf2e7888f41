package bench

import (
	"bytes"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

// TestWindowsRotateAndMerge records requests of two workers into the
// windows of a 3 s phase, closes them in turn, and checks each window
// holds the requests that ended in it, merged over the workers.
func TestWindowsRotateAndMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	clock := testkit.NewClock(time.Time{})
	w := newWindows(t0, 3*time.Second, time.Second, 2)
	w.now = clock.Now
	record := func(slot, sentMs, doneMs, code int, transport bool) {
		t.Helper()
		clock.Set(at(doneMs))
		if got, want := w.record(slot, at(sentMs), code, transport), time.Duration(doneMs-sentMs)*time.Millisecond; got != want {
			t.Fatalf("latency %v, want %v", got, want)
		}
	}

	record(0, 100, 200, 201, false)  // window 0
	record(1, 300, 500, 500, false)  // window 0, an error
	record(0, 900, 1200, 0, true)    // window 1, a transport error
	record(1, 400, 1900, 201, false) // window 1, slow
	if n := len(w.slots[0].open); n != 2 {
		t.Fatalf("worker 0 has %d open windows, want 2 (window 0 is not taken yet)", n)
	}

	w0 := w.take(0, false)
	if w0.requests != 2 || w0.errors != 1 || w0.slow != 0 || w0.latency.Count() != 2 ||
		w0.latency.Max() != 200*time.Millisecond || w0.latency.Min() != 100*time.Millisecond {
		t.Errorf("window 0: %d requests, %d errors, %d slow, latencies %d in [%v, %v]",
			w0.requests, w0.errors, w0.slow, w0.latency.Count(), w0.latency.Min(), w0.latency.Max())
	}
	for i := range w.slots {
		if open := w.slots[i].open; len(open) != 1 || open[0].index != 1 {
			t.Fatalf("worker %d keeps %d windows after window 0 was taken, want window 1 alone", i, len(open))
		}
	}

	// A response after the phase's end counts in the last window, and
	// stats reused from the pool start from zero.
	record(0, 4000, 5000, 201, false)
	w1 := w.take(1, false)
	if w1.requests != 2 || w1.errors != 1 || w1.slow != 1 || w1.latency.Count() != 1 || w1.latency.Max() != 1500*time.Millisecond {
		t.Errorf("window 1: %d requests, %d errors, %d slow, %d latencies, max %v",
			w1.requests, w1.errors, w1.slow, w1.latency.Count(), w1.latency.Max())
	}
	w2 := w.take(2, true)
	if w2.requests != 1 || w2.errors != 0 || w2.latency.Count() != 1 || w2.latency.Min() != time.Second {
		t.Errorf("window 2: %d requests, %d errors, %d latencies from %v", w2.requests, w2.errors, w2.latency.Count(), w2.latency.Min())
	}
	for i := range w.slots {
		if n := len(w.slots[i].open); n != 0 {
			t.Errorf("worker %d keeps %d windows after the last was taken", i, n)
		}
	}
}

// TestWindowsClose checks the Window a closed window reports: its span,
// its rate, this process's RSS, the progress line, and that a last window
// of no length and no requests is dropped.
func TestWindowsClose(t *testing.T) {
	t0 := time.Now()
	clock := testkit.NewClock(t0.Add(1500 * time.Millisecond))
	w := newWindows(t0, 2*time.Second, time.Second, 1)
	w.now = clock.Now
	var progress bytes.Buffer
	w.name, w.progress, w.pid = "uniform", &progress, os.Getpid()
	for range 4 {
		w.record(0, t0.Add(1400*time.Millisecond), 201, false)
	}
	w.close(0, false, time.Second)
	w.close(1, true, 2500*time.Millisecond)
	if len(w.closed) != 2 {
		t.Fatalf("%d windows closed, want 2", len(w.closed))
	}
	first, last := w.closed[0], w.closed[1]
	if first.Requests != 0 || first.StartSeconds != 0 || first.EndSeconds != 1 {
		t.Errorf("window 1: %+v", first)
	}
	if last.Requests != 4 || last.StartSeconds != 1 || last.EndSeconds != 2.5 || last.RequestsPerSecond != 4/1.5 {
		t.Errorf("window 2: %+v", last)
	}
	if last.Latency.P50 != 100*time.Millisecond || last.RSSBytes == 0 {
		t.Errorf("window 2: p50 %v, rss %d", last.Latency.P50, last.RSSBytes)
	}
	if !strings.Contains(progress.String(), "uniform: window 2 1.0–2.5s: 4 requests") {
		t.Errorf("progress:\n%s", progress.String())
	}

	// The workers returned just as the previous window closed.
	w = newWindows(t0, 2*time.Second, time.Second, 1)
	w.close(0, false, time.Second)
	w.close(1, true, time.Second)
	if len(w.closed) != 1 {
		t.Errorf("%d windows, want the empty last one dropped", len(w.closed))
	}
}

// TestWindowsCollectConcurrently runs workers recording as fast as they
// can while collect closes 100 ms windows: under -race it checks the
// locking, and every request must land in exactly one window.
func TestWindowsCollectConcurrently(t *testing.T) {
	const workers = 4
	duration := 350 * time.Millisecond
	from := time.Now()
	w := newWindows(from, duration, windowMin, workers)
	finished := make(chan struct{})
	var elapsed time.Duration
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		w.collect(finished, func() time.Duration { return elapsed })
	}()
	recorded := make([]uint64, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for time.Since(from) < duration {
				w.record(i, time.Now(), 201, false)
				recorded[i]++
			}
		})
	}
	wg.Wait()
	elapsed = time.Since(from)
	close(finished)
	<-collected

	var total, inWindows uint64
	for _, n := range recorded {
		total += n
	}
	if len(w.closed) != 4 {
		t.Fatalf("%d windows, want 4 (350 ms in windows of 100 ms)", len(w.closed))
	}
	for i, win := range w.closed {
		inWindows += win.Requests
		if want := float64(i) * 0.1; math.Abs(win.StartSeconds-want) > 1e-9 {
			t.Errorf("window %d starts at %.3fs, want %.3fs", i, win.StartSeconds, want)
		}
		if i > 0 && win.StartSeconds != w.closed[i-1].EndSeconds {
			t.Errorf("window %d starts at %.3fs, the previous ended at %.3fs", i, win.StartSeconds, w.closed[i-1].EndSeconds)
		}
	}
	if inWindows != total || total == 0 {
		t.Errorf("%d requests in the windows, %d recorded", inWindows, total)
	}
	if end := w.closed[3].EndSeconds; end != elapsed.Seconds() {
		t.Errorf("last window ends at %.3fs, the phase at %.3fs", end, elapsed.Seconds())
	}
}

// TestWindowsCollectLate runs collect only once the workers have returned,
// the latest a starved collector can wake: every window must still hold
// the requests that ended in it and span its own length, and only the
// window the phase ended in runs to the phase's end.
func TestWindowsCollectLate(t *testing.T) {
	const length = 100 * time.Millisecond
	for _, tc := range []struct {
		name     string
		duration time.Duration // of the measured phase as configured
		elapsed  time.Duration // when the workers returned
		windows  int           // that collect closes
	}{
		{"phase ran its course", 2 * time.Second, 2 * time.Second, 20},
		{"responses after the phase's end", 2 * time.Second, 2300 * time.Millisecond, 20},
		{"phase ended early, inside a window", 4 * time.Second, 1250 * time.Millisecond, 13},
		{"phase ended early, on a window's end", 4 * time.Second, 1200 * time.Millisecond, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The phase lies in the past: every window's end has passed.
			from := time.Now().Add(-tc.elapsed - time.Second)
			clock := testkit.NewClock(time.Time{})
			w := newWindows(from, tc.duration, length, 2)
			w.now = clock.Now
			// A request ends 50 ms into every 100 ms of the phase, on
			// alternate workers; those after the last window's end count
			// in it.
			want := make([]uint64, tc.windows)
			for k := 0; time.Duration(k)*length+50*time.Millisecond < tc.elapsed; k++ {
				done := from.Add(time.Duration(k)*length + 50*time.Millisecond)
				clock.Set(done)
				w.record(k%2, done.Add(-time.Millisecond), 201, false)
				want[min(k, tc.windows-1)]++
			}
			finished := make(chan struct{})
			close(finished)
			w.collect(finished, func() time.Duration { return tc.elapsed })

			if len(w.closed) != tc.windows {
				t.Fatalf("%d windows, want %d", len(w.closed), tc.windows)
			}
			for i, win := range w.closed {
				start, end := time.Duration(i)*length, time.Duration(i+1)*length
				if i == len(w.closed)-1 {
					end = max(tc.elapsed, start)
				}
				if win.Requests != want[i] || win.StartSeconds != start.Seconds() || win.EndSeconds != end.Seconds() {
					t.Errorf("window %d: %d requests, %.3f–%.3fs; want %d, %.3f–%.3fs",
						i, win.Requests, win.StartSeconds, win.EndSeconds, want[i], start.Seconds(), end.Seconds())
				}
			}
		})
	}
}

func TestWindowCount(t *testing.T) {
	for _, tc := range []struct {
		duration, length time.Duration
		want             int
	}{
		{3 * time.Minute, 5 * time.Second, 36},
		{12 * time.Second, 5 * time.Second, 3},
		{time.Second, time.Second, 1},
		{time.Hour, time.Second, 3600},
	} {
		if got := windowCount(tc.duration, tc.length); got != tc.want {
			t.Errorf("windowCount(%s, %s) = %d, want %d", tc.duration, tc.length, got, tc.want)
		}
	}
}

// TestSummarizeSoak checks the summary's arithmetic: the median, the
// slowest window's fraction of it, and the RSS growth per request after
// the first window.
func TestSummarizeSoak(t *testing.T) {
	win := func(rate float64, requests, rss uint64) Window {
		return Window{RequestsPerSecond: rate, Requests: requests, RSSBytes: rss, Errors: 1, SlowRequests: 2}
	}
	growth := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name       string
		windows    []Window
		median     float64
		minFrac    float64
		growth     *float64
		failures   uint64
		slowTotals uint64
	}{
		{"none", nil, 0, 0, nil, 0, 0},
		{"one window: no growth", []Window{win(100, 500, 1<<20)}, 100, 1, nil, 1, 2},
		{"odd", []Window{win(100, 500, 100e6), win(50, 250, 100e6+1000), win(90, 450, 100e6+8000)},
			90, 50.0 / 90, growth(8000.0 / 700), 3, 6},
		{"even", []Window{win(100, 1000, 100e6), win(80, 800, 101e6), win(120, 1200, 99e6), win(60, 600, 99e6)},
			90, 60.0 / 90, growth(-1e6 / 2600), 4, 8},
		{"first RSS unknown", []Window{win(100, 500, 0), win(100, 500, 1<<20)}, 100, 1, nil, 2, 4},
		{"last RSS unknown", []Window{win(100, 500, 1<<20), win(100, 500, 0)}, 100, 1, nil, 2, 4},
		{"no requests after the first", []Window{win(100, 500, 1<<20), win(0, 0, 2<<20)}, 50, 0, nil, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summarizeSoak(tc.windows, 5*time.Second)
			if s.WindowSeconds != 5 || s.MedianRequestsPerSecond != tc.median || math.Abs(s.MinWindowFraction-tc.minFrac) > 1e-12 {
				t.Errorf("window %vs, median %v, min fraction %v; want 5, %v, %v",
					s.WindowSeconds, s.MedianRequestsPerSecond, s.MinWindowFraction, tc.median, tc.minFrac)
			}
			if s.Failures != tc.failures || s.SlowRequests != tc.slowTotals {
				t.Errorf("%d failures, %d slow; want %d, %d", s.Failures, s.SlowRequests, tc.failures, tc.slowTotals)
			}
			switch g := s.RSSGrowthBytesPerRequest; {
			case (g == nil) != (tc.growth == nil):
				t.Errorf("growth %v, want %v", g, tc.growth)
			case g != nil && math.Abs(*g-*tc.growth) > 1e-9:
				t.Errorf("growth %v B/request, want %v", *g, *tc.growth)
			}
		})
	}
}
