package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestParallelN checks that parallelN calls fn once per index on at most
// workers goroutines at a time, and starts no index after an error.
func TestParallelN(t *testing.T) {
	const n, workers = 1000, 8
	var (
		mu      sync.Mutex
		seen    = make(map[int]int)
		running atomic.Int64
		peak    atomic.Int64
	)
	err := parallelN(context.Background(), n, workers, func(ctx context.Context, i int) error {
		now := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
		}
		mu.Lock()
		seen[i]++
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Errorf("%d indices called, want %d", len(seen), n)
	}
	for i, c := range seen {
		if c != 1 || i < 0 || i >= n {
			t.Errorf("index %d called %d times", i, c)
		}
	}
	if p := peak.Load(); p > workers {
		t.Errorf("%d calls at once, want at most %d", p, workers)
	}

	boom := errors.New("boom")
	var calls atomic.Int64
	err = parallelN(context.Background(), n, 1, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() != 11 {
		t.Errorf("error %v after %d calls, want boom after 11", err, calls.Load())
	}
}
