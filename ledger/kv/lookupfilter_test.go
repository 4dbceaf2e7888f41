package kv

import (
	"fmt"
	"sync"
	"testing"
)

// The filter's one promise: a key added is never reported absent, whatever
// the segments it grew through and whoever reads meanwhile. Its cost: few
// false positives, about 1.5 bytes a key.
func TestLookupFilterNeverForgetsAKey(t *testing.T) {
	f := NewLookupFilter()
	key := func(i int) []byte { return NewKey('p', 'l', 'r').Str(fmt.Sprintf("org_1\x00ref-%d", i)) }
	const added = 3*filterFirstCapacity + 1 // three segments
	if f.Absent(key(0)) {
		t.Fatal("an incomplete filter answered")
	}
	f.phase.Store(filterOn)

	var readers sync.WaitGroup
	done := make(chan struct{})
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_ = f.Absent(key(r)) // racing the adds: any answer, no data race
			}
		}()
	}
	for i := 0; i < added; i++ {
		f.Add(key(i))
	}
	close(done)
	readers.Wait()

	for i := 0; i < added; i++ {
		if f.Absent(key(i)) {
			t.Fatalf("key %d added, reported absent", i)
		}
	}
	falsePositives := 0
	const fresh = 100_000
	for i := added; i < added+fresh; i++ {
		if !f.Absent(key(i)) {
			falsePositives++
		}
	}
	t.Logf("%d keys in %d segments, %d bytes: %.2f %% false positives", added, len(*f.segments.Load()), f.bytes(), 100*float64(falsePositives)/fresh)
	if rate := float64(falsePositives) / fresh; rate > 0.02 {
		t.Errorf("false positive rate %.4f over %d segments, want under 2%%", rate, len(*f.segments.Load()))
	}
	capacity := 0
	for _, seg := range *f.segments.Load() {
		capacity += seg.capacity
	}
	if perKey := float64(f.bytes()) / float64(capacity); perKey > 1.6 {
		t.Errorf("%.2f bytes a key of capacity", perKey)
	}
}

// Past its memory bound the filter retires rather than grow: lookups read
// the store again, and nothing it held is ever reported absent.
func TestLookupFilterRetiresPastItsBound(t *testing.T) {
	f := NewLookupFilter()
	f.maxBytes = 3 * len((*f.segments.Load())[0].words) * 8 // room for the first two segments
	f.phase.Store(filterOn)
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%d", i)) }
	const within = 3 * filterFirstCapacity // what the first two segments take
	for i := 0; i < within; i++ {
		f.Add(key(i))
	}
	if f.phase.Load() != filterOn {
		t.Fatal("retired within its bound")
	}
	for i := within; i < within+10; i++ {
		f.Add(key(i))
	}
	if f.phase.Load() != filterRetired {
		t.Fatalf("%d bytes held past a bound of %d, still answering", f.bytes(), f.maxBytes)
	}
	if f.bytes() > f.maxBytes {
		t.Fatalf("%d bytes held, bound %d", f.bytes(), f.maxBytes)
	}
	for i := 0; i < within+10; i += 997 {
		if f.Absent(key(i)) {
			t.Fatalf("key %d reported absent by a retired filter", i)
		}
	}
}
