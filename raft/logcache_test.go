package raft

import (
	"bytes"
	"testing"

	hraft "github.com/hashicorp/raft"
)

// TestLogCacheBounds checks that the cache answers from memory within its
// limits, from the store past them, and never holds more than its bytes.
func TestLogCacheBounds(t *testing.T) {
	store := hraft.NewInmemStore()
	c := newLogCache(store, 8, 100)
	put := func(from, to uint64, size int) {
		t.Helper()
		var logs []*hraft.Log
		for i := from; i <= to; i++ {
			logs = append(logs, &hraft.Log{Index: i, Term: 1, Type: hraft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, size)})
		}
		if err := c.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	cached := func(i uint64) bool {
		c.mu.RLock()
		defer c.mu.RUnlock()
		l := c.ring[i%uint64(len(c.ring))]
		return i >= c.first && i <= c.last && l != nil && l.Index == i
	}
	put(1, 20, 10) // count limit: the last 8
	for i := uint64(1); i <= 20; i++ {
		if want := i > 12; cached(i) != want {
			t.Errorf("entry %d cached %v, want %v", i, cached(i), want)
		}
		var l hraft.Log
		if err := c.GetLog(i, &l); err != nil || l.Index != i || len(l.Data) != 10 || l.Data[0] != byte(i) {
			t.Fatalf("GetLog(%d) = %+v, %v", i, l, err)
		}
	}
	put(21, 23, 40) // byte limit: 3 × 40 > 100, so only the last 2 of them
	if c.bytes > 100 || !cached(23) || !cached(22) || cached(21) || cached(20) {
		t.Fatalf("after large entries: %d bytes, first %d last %d", c.bytes, c.first, c.last)
	}
	put(24, 24, 500) // one entry over the limit stays, alone
	if !cached(24) || cached(23) || c.bytes != 500 {
		t.Fatalf("after a huge entry: %d bytes, first %d last %d", c.bytes, c.first, c.last)
	}
	if err := c.DeleteRange(20, 24); err != nil {
		t.Fatal(err)
	}
	if cached(24) || c.bytes != 0 {
		t.Fatal("DeleteRange left entries cached")
	}
	put(20, 21, 10) // after a truncation, entries start the cache afresh
	var l hraft.Log
	if !cached(21) || c.GetLog(21, &l) != nil || l.Data[0] != 21 {
		t.Fatalf("after truncation: first %d last %d", c.first, c.last)
	}
	put(5, 5, 10) // an entry that does not follow the cached ones
	if cached(21) || !cached(5) || c.bytes != 10 {
		t.Fatalf("after a gap: first %d last %d bytes %d", c.first, c.last, c.bytes)
	}
}
