package core

import (
	"sync"
	"testing"
	"time"
)

func TestLogThrottle(t *testing.T) {
	var th logThrottle
	t0 := time.Unix(1000, 0)
	steps := []struct {
		name           string
		at             time.Duration
		wantOK         bool
		wantSuppressed uint64
	}{
		{"the first line goes through", 0, true, 0},
		{"a second line within the interval is held", 10 * time.Millisecond, false, 0},
		{"and a third", 900 * time.Millisecond, false, 0},
		{"after the interval a line goes through and reports the two held", logEvery, true, 2},
		{"just before the next interval: held", 2*logEvery - time.Nanosecond, false, 0},
		{"then through, reporting one", 2 * logEvery, true, 1},
	}
	for _, s := range steps {
		ok, n := th.allow(t0.Add(s.at))
		if ok != s.wantOK || n != s.wantSuppressed {
			t.Fatalf("%s: allow = %v, %d; want %v, %d", s.name, ok, n, s.wantOK, s.wantSuppressed)
		}
	}
}

// Many goroutines failing at once within one interval log one line.
func TestLogThrottleConcurrent(t *testing.T) {
	var th logThrottle
	now := time.Unix(2000, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	logged := 0
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if ok, _ := th.allow(now); ok {
					mu.Lock()
					logged++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if logged != 1 {
		t.Fatalf("6400 failures within one interval logged %d lines, want 1", logged)
	}
	if ok, n := th.allow(now.Add(logEvery)); !ok || n != 6399 {
		t.Fatalf("next interval: allow = %v, %d; want true, 6399", ok, n)
	}
}
