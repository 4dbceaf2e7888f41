package kv

import (
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// LookupFilter is a Bloom filter over every lookup key in the state store
// (ledger/doc.go: a kind's 'l' keys, mostly organizations' references,
// whose prefixes AddPrefix names). Nearly
// every create carries a reference never seen before, and proving that
// with the state store costs a read through every level of the LSM, twice
// (the account actor's idempotency check, then Apply's); the filter proves
// it from memory. It only ever answers "certainly absent": a key it may
// hold is read from the state store as before, so a false positive costs a
// read and never an answer.
//
// Lookup keys are set once and never removed, so the filter only grows:
// 12 bits a key (1.5 bytes a payout; up to twice that while its newest
// segment fills), in segments that double in size, so that it never has
// to be rebuilt. When the next segment would take it past filterBytesMax
// (after some 134 million references, holding 191 MiB) it retires rather
// than grow, and lookups read the store again. It is not stored. At start
// it is incomplete, and answers nothing, until Fill has added every key
// the state store held; Apply adds each new key as it makes it, before
// the batch that writes it is committed, so a reader that could see the
// key in the state store sees it in the filter.
//
// One goroutine adds at a time (mu: the applying goroutine, and the one
// filling the filter at start); readers never lock.
type LookupFilter struct {
	seed     maphash.Seed
	prefixes [][]byte // the lookup keys' prefixes, one for each kind with lookups
	maxBytes int      // filterBytesMax, but in tests

	mu       sync.Mutex
	segments atomic.Pointer[[]*filterSegment]
	phase    atomic.Int32 // filling, on, or retired
}

// The phases of a filter: it answers only when on. A filter is retired
// when the state store under it is replaced (a follower installing its
// leader's state): readers that still hold it then read the store.
const (
	filterFilling int32 = iota
	filterOn
	filterRetired
)

// filterSegment is a blocked Bloom filter: each key sets filterProbes bits
// in one 512-bit block, so that a test costs one cache miss.
type filterSegment struct {
	words    []atomic.Uint64 // 8 words a block
	blocks   uint64
	capacity int // keys it takes before the next segment starts
	keys     int // under LookupFilter.mu
}

const (
	filterBitsPerKey     = 12
	filterProbes         = 8 // about 0.5 % false positives a segment at 12 bits a key
	filterFirstCapacity  = 1 << 16
	filterBytesMax       = 256 << 20
	filterWordsPerBlock  = 8
	filterBitsPerBlock   = filterWordsPerBlock * 64
	filterBlockIndexMask = filterBitsPerBlock - 1
)

func NewLookupFilter() *LookupFilter {
	f := &LookupFilter{seed: maphash.MakeSeed(), maxBytes: filterBytesMax}
	segs := []*filterSegment{newFilterSegment(filterFirstCapacity)}
	f.segments.Store(&segs)
	return f
}

func newFilterSegment(capacity int) *filterSegment {
	blocks := uint64(capacity*filterBitsPerKey+filterBitsPerBlock-1) / filterBitsPerBlock
	return &filterSegment{words: make([]atomic.Uint64, blocks*filterWordsPerBlock), blocks: blocks, capacity: capacity}
}

// block is the block of a key's hash: its high half, scaled to the blocks.
func (s *filterSegment) block(h uint64) []atomic.Uint64 {
	b := (h >> 32) * s.blocks >> 32
	return s.words[b*filterWordsPerBlock : (b+1)*filterWordsPerBlock]
}

// The probes within a block: a start and an odd step, from bits of the hash
// that neither each other nor the block's use, so that keys sharing a block
// rarely share their bits.
func probeStep(h uint64) uint64 { return h>>9 | 1 }

func (s *filterSegment) set(h uint64) {
	blk := s.block(h)
	delta := probeStep(h)
	for i := 0; i < filterProbes; i++ {
		bit := h & filterBlockIndexMask
		blk[bit/64].Or(1 << (bit % 64))
		h += delta
	}
}

func (s *filterSegment) mayHold(h uint64) bool {
	blk := s.block(h)
	delta := probeStep(h)
	for i := 0; i < filterProbes; i++ {
		bit := h & filterBlockIndexMask
		if blk[bit/64].Load()&(1<<(bit%64)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

// add records key; the applying goroutine calls it for each lookup key it
// makes, before the batch that writes it is committed.
func (f *LookupFilter) Add(key []byte) {
	if f.phase.Load() == filterRetired {
		return
	}
	h := maphash.Bytes(f.seed, key)
	f.mu.Lock()
	segs := *f.segments.Load()
	last := segs[len(segs)-1]
	if last.keys >= last.capacity {
		if f.bytes()+2*len(last.words)*8 > f.maxBytes {
			// Too big to keep: stop answering, and adding.
			f.phase.Store(filterRetired)
			f.mu.Unlock()
			return
		}
		last = newFilterSegment(2 * last.capacity)
		grown := append(segs[:len(segs):len(segs)], last)
		f.segments.Store(&grown)
	}
	last.keys++
	last.set(h)
	f.mu.Unlock()
}

// absent reports whether key is certainly not in the state store, nor in
// a batch being applied. False means "maybe": read the state store.
func (f *LookupFilter) Absent(key []byte) bool {
	if f.phase.Load() != filterOn {
		return false
	}
	h := maphash.Bytes(f.seed, key)
	for _, s := range *f.segments.Load() {
		if s.mayHold(h) {
			return false
		}
	}
	return true
}

// Find returns the value (a record's id) that r holds at lookup key key,
// unless f proves the key absent without reading r.
func (f *LookupFilter) Find(r Reader, key []byte) (string, bool) {
	if f.Absent(key) {
		return "", false
	}
	var id string
	ok, err := r.Get(key, func(v []byte) { id = string(v) })
	Must(err)
	return id, ok
}

// bytes is the memory the filter holds.
func (f *LookupFilter) bytes() int {
	n := 0
	for _, s := range *f.segments.Load() {
		n += len(s.words) * 8
	}
	return n
}

// FillChunk bounds the keys one iterator reads while the filter fills, so
// that no iterator pins the state store's memtables and tables for long.
const FillChunk = 1 << 16

// Fill adds every lookup key r holds, chunk keys an iterator (FillChunk),
// then lets the filter answer. Keys are never removed, and every key made
// since the filter was (by Apply) is in it already, so a scan in chunks,
// each from a fresh iterator, misses none. stop, polled between chunks,
// abandons the fill.
func (f *LookupFilter) Fill(r Reader, stop func() bool, chunk int) (err error) {
	defer RecoverStoreError(&err)
	for _, prefix := range f.prefixes {
		lower, upper := prefix, PrefixEnd(prefix)
		for lower != nil {
			if stop() {
				return errFillStopped
			}
			n := 0
			var next []byte
			Scan(r, lower, upper, false, func(key, _ []byte) bool {
				if n == chunk {
					next = append([]byte(nil), key...)
					return false
				}
				f.Add(key)
				n++
				return true
			})
			lower = next
		}
	}
	if !f.phase.CompareAndSwap(filterFilling, filterOn) {
		return errFillStopped
	}
	return nil
}

var errFillStopped = errors.New("ledger: lookup filter fill stopped")

// AddPrefix adds the keys under prefix (a kind's lookup keys) to those
// Fill reads.
func (f *LookupFilter) AddPrefix(prefix []byte) {
	f.prefixes = append(f.prefixes, prefix)
}

// On reports whether f holds every lookup key and answers.
func (f *LookupFilter) On() bool { return f.phase.Load() == filterOn }

// Retire stops f answering for good, before the state store under it is
// replaced (see Fill).
func (f *LookupFilter) Retire() { f.phase.Store(filterRetired) }
