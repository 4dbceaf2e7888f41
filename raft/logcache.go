package raft

import (
	"fmt"
	"sync"

	hraft "github.com/hashicorp/raft"
)

// Limits of the log cache: the most recent entries, up to logCacheEntriesMax
// of them and logCacheBytesMax of their data, whichever is reached first.
//
// hashicorp's LogCache bounds entries only, and an entry is a batch of up
// to 2,048 commands (actors.Proposer): under load, 4,096 cached entries held
// hundreds of MiB of commands already applied, which is most of the RSS
// growth the throughput issue's soak saw (bench/PERFORMANCE.md), and the
// results of their commands with them (see StoreLogs). Followers
// and the read index read recent entries through the cache; an older one
// comes from the log store.
const (
	logCacheEntriesMax = 4096
	logCacheBytesMax   = 32 << 20
)

// logCache is a LogStore that keeps the most recent entries it stored in
// memory, within a count and a byte limit. It is safe for concurrent use.
type logCache struct {
	store    hraft.LogStore
	bytesMax int

	mu    sync.RWMutex
	ring  []*hraft.Log // entry i in ring[i % len(ring)], for i in [first, last]
	first uint64       // the oldest cached index; empty when first > last
	last  uint64
	bytes int // len(Data) summed over the cached entries
}

var _ hraft.LogStore = (*logCache)(nil)

func newLogCache(store hraft.LogStore, entriesMax, bytesMax int) *logCache {
	return &logCache{store: store, bytesMax: bytesMax, ring: make([]*hraft.Log, entriesMax), first: 1}
}

// IsMonotonic passes the store's answer on, as hashicorp's cache does.
func (c *logCache) IsMonotonic() bool {
	if s, ok := c.store.(hraft.MonotonicLogStore); ok {
		return s.IsMonotonic()
	}
	return false
}

func (c *logCache) GetLog(idx uint64, log *hraft.Log) error {
	c.mu.RLock()
	var cached *hraft.Log
	if idx >= c.first && idx <= c.last {
		cached = c.ring[idx%uint64(len(c.ring))]
	}
	c.mu.RUnlock()
	if cached != nil && cached.Index == idx {
		*log = *cached
		return nil
	}
	return c.store.GetLog(idx, log)
}

func (c *logCache) StoreLog(log *hraft.Log) error { return c.StoreLogs([]*hraft.Log{log}) }

// StoreLogs stores logs, then caches them, evicting the oldest entries
// past the limits. Entries that do not follow the cached ones (after a
// truncation) start the cache afresh.
func (c *logCache) StoreLogs(logs []*hraft.Log) error {
	if err := c.store.StoreLogs(logs); err != nil {
		return fmt.Errorf("unable to store logs within log store, err: %q", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := uint64(len(c.ring))
	for _, l := range logs {
		if c.first <= c.last && l.Index != c.last+1 {
			c.resetLocked()
		}
		if c.first > c.last {
			c.first, c.last = l.Index, l.Index-1
		}
		if c.last-c.first+1 == n { // full: the slot is the oldest entry's
			c.evictOldestLocked()
		}
		// A copy: hashicorp's leader hands over the Log inside its
		// future, and caching that pointer kept each future alive, with
		// the FSM's response to it (every command's result, payouts and
		// events included) until the entry left the cache.
		cp := *l
		c.ring[l.Index%n] = &cp
		c.last = l.Index
		c.bytes += len(l.Data)
		for c.bytes > c.bytesMax && c.first < c.last {
			c.evictOldestLocked()
		}
	}
	return nil
}

func (c *logCache) evictOldestLocked() {
	slot := c.first % uint64(len(c.ring))
	if old := c.ring[slot]; old != nil {
		c.bytes -= len(old.Data)
		c.ring[slot] = nil
	}
	c.first++
}

func (c *logCache) resetLocked() {
	clear(c.ring)
	c.first, c.last, c.bytes = 1, 0, 0
}

func (c *logCache) FirstIndex() (uint64, error) { return c.store.FirstIndex() }

func (c *logCache) LastIndex() (uint64, error) { return c.store.LastIndex() }

// DeleteRange empties the cache, as hashicorp's does, and deletes from the
// store.
func (c *logCache) DeleteRange(min, max uint64) error {
	c.mu.Lock()
	c.resetLocked()
	c.mu.Unlock()
	return c.store.DeleteRange(min, max)
}
