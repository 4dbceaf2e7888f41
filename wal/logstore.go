package wal

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cockroachdb/pebble/v2"
	hraft "github.com/hashicorp/raft"
)

// logKeyEnd is the exclusive upper bound of every log key.
var logKeyEnd = []byte{prefixLog + 1}

// storeLogsBytesMax bounds one StoreLogs batch. Raft sends at most
// MaxAppendEntries (1024 at most) entries at a time; a batch this large is a
// bug upstream, and Pebble panics on batches of 4 GiB.
const storeLogsBytesMax = 256 << 20

// FirstIndex returns the first index in the log, or 0 for an empty log. It
// reads memory only.
func (s *Store) FirstIndex() (uint64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.bounds.Load().first, nil
}

// LastIndex returns the last index in the log, or 0 for an empty log. It reads
// memory only.
func (s *Store) LastIndex() (uint64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.bounds.Load().last, nil
}

// GetLog reads the entry at index into l. It returns hraft.ErrLogNotFound,
// unwrapped because hashicorp/raft compares it with ==, when there is no such
// entry, and an error wrapping ErrCorrupt, after which the store refuses every
// call, when the entry fails its checksum.
func (s *Store) GetLog(index uint64, l *hraft.Log) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	defer s.recoverFatal(&err)
	v, closer, err := s.db.Get(logKey(index))
	if errors.Is(err, pebble.ErrNotFound) {
		return hraft.ErrLogNotFound
	}
	if err != nil {
		return s.readError(fmt.Sprintf("get log %d", index), err)
	}
	defer closer.Close()
	if err := decodeLogRecord(v, l); err != nil {
		return s.fail(fmt.Errorf("%w: log %d: %w", ErrCorrupt, index, err))
	}
	if l.Index != index {
		return s.fail(fmt.Errorf("%w: log %d: record holds index %d", ErrCorrupt, index, l.Index))
	}
	return nil
}

// StoreLog stores one entry; see StoreLogs.
func (s *Store) StoreLog(l *hraft.Log) error {
	return s.StoreLogs([]*hraft.Log{l})
}

// StoreLogs stores the entries as one Pebble batch with one fsync: after a
// crash either all of them are in the log or none is. An entry with an
// existing index replaces it. hashicorp/raft only ever appends contiguously
// here (see IsMonotonic); a write that leaves a gap is accepted, as the
// LogStore contract requires, but logged, because the next Open refuses it.
func (s *Store) StoreLogs(logs []*hraft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()

	size := 0
	for _, l := range logs {
		if l == nil {
			return errors.New("wal: store logs: nil entry")
		}
		n, err := logRecordLen(l)
		if err != nil {
			return fmt.Errorf("wal: store logs: %w", err)
		}
		size += logKeyLen + n + 16 // 16: Pebble's per-entry overhead, roughly
	}
	if size > storeLogsBytesMax {
		return fmt.Errorf("wal: store logs: batch of %d bytes exceeds %d", size, storeLogsBytesMax)
	}
	b := s.db.NewBatchWithSize(size)
	defer b.Close()
	lo, hi := logs[0].Index, logs[0].Index
	runs := true // the batch's indexes run up by one
	for i, l := range logs {
		n, _ := logRecordLen(l)
		op := b.SetDeferred(logKeyLen, n)
		putLogKey(op.Key, l.Index)
		encodeLogRecord(op.Value, l)
		if err := op.Finish(); err != nil {
			return fmt.Errorf("wal: store logs: %w", err)
		}
		lo, hi = min(lo, l.Index), max(hi, l.Index)
		if i > 0 && l.Index != logs[i-1].Index+1 {
			runs = false
		}
	}

	s.logMu.Lock()
	defer s.logMu.Unlock()
	start := time.Now()
	if err := s.commit(b); err != nil {
		return fmt.Errorf("wal: store logs %d-%d: %w", lo, hi, err)
	}
	if s.onAppend != nil {
		s.onAppend(time.Since(start), len(logs))
	}
	cur := s.bounds.Load()
	next := logBounds{first: lo, last: hi, nonEmpty: true, gapped: !runs}
	if cur.nonEmpty {
		next.first, next.last = min(cur.first, lo), max(cur.last, hi)
		touches := (lo <= cur.last || lo == cur.last+1) && (hi >= cur.first || hi+1 == cur.first)
		next.gapped = cur.gapped || !runs || !touches
	}
	s.bounds.Store(&next)
	if next.gapped && !cur.gapped {
		s.logger.Warn("wal: stored log entries leave a gap; the next open will refuse this log",
			"first", lo, "last", hi, "log_first", cur.first, "log_last", cur.last)
	}
	return nil
}

// DeleteRange deletes the entries from lo to hi inclusive as one range
// deletion with one fsync. hashicorp/raft deletes a prefix after a snapshot
// and a suffix when a new leader overwrites conflicting entries.
func (s *Store) DeleteRange(lo, hi uint64) error {
	if lo > hi {
		return nil
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	end := logKeyEnd
	if hi < math.MaxUint64 {
		end = logKey(hi + 1)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(logKey(lo), end, nil); err != nil {
		return fmt.Errorf("wal: delete logs %d-%d: %w", lo, hi, err)
	}

	s.logMu.Lock()
	defer s.logMu.Unlock()
	if err := s.commit(b); err != nil {
		return fmt.Errorf("wal: delete logs %d-%d: %w", lo, hi, err)
	}
	cur := s.bounds.Load()
	if !cur.nonEmpty || hi < cur.first || lo > cur.last {
		return nil
	}
	next := *cur
	switch {
	case lo <= cur.first && hi >= cur.last:
		next = logBounds{}
	case lo <= cur.first && !cur.gapped:
		next.first = hi + 1
	case hi >= cur.last && !cur.gapped:
		next.last = lo - 1
	case lo <= cur.first:
		first, ok, err := s.seekIndex(logKey(hi+1), logKeyEnd, false)
		if err != nil {
			return s.fail(fmt.Errorf("find first index after deleting %d-%d: %w", lo, hi, err))
		}
		next.first = first
		if !ok {
			next = logBounds{}
		}
	case hi >= cur.last:
		last, ok, err := s.seekIndex([]byte{prefixLog}, logKey(lo), true)
		if err != nil {
			return s.fail(fmt.Errorf("find last index after deleting %d-%d: %w", lo, hi, err))
		}
		next.last = last
		if !ok {
			next = logBounds{}
		}
	default:
		next.gapped = true
		s.logger.Warn("wal: deleted log entries from the middle; the next open will refuse this log",
			"first", lo, "last", hi)
	}
	s.bounds.Store(&next)
	return nil
}

// seekIndex returns the first (or, with last, the last) log index in
// [lower, upper).
func (s *Store) seekIndex(lower, upper []byte, last bool) (index uint64, ok bool, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	var valid bool
	if last {
		valid = it.Last()
	} else {
		valid = it.First()
	}
	if !valid {
		return 0, false, it.Error()
	}
	index, ok = parseLogKey(it.Key())
	if !ok {
		return 0, false, fmt.Errorf("%w: malformed log key %x", ErrCorrupt, it.Key())
	}
	return index, true, nil
}
