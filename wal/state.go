package wal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// StateStore is the replicated state machine's store: a Pebble instance of
// its own, beside the log, that holds whatever the state machine writes
// under keys it chooses, with the index of the last log entry applied. The
// state machine commits one batch at a time, each up to a log index.
//
// The store has no write-ahead log of its own: the Raft log is the durable
// record. A batch is in memory until Pebble flushes its memtable to a
// table; after a crash the store comes back to the last batch flushed (a
// memtable holds whole batches), and the log is applied again from there.
// Sync flushes, so that everything committed is on disk; the FSM calls it
// before a snapshot lets Raft delete the log behind it.
//
// Like Store, it knows nothing of payments. Keys starting with 0x00 are
// its own (the applied index, the restore marker); callers' keys must not.
type StateStore struct {
	lifecycle
	db   *pebble.DB
	lock *pebble.Lock

	applied atomic.Uint64
}

// Keys of the store's own.
var (
	stateAppliedKey   = []byte("\x00applied")
	stateRestoringKey = []byte("\x00restoring")
	stateUserKeysFrom = []byte{0x01} // every caller's key is at or after this
)

// Pebble reserves its memtables' memory in the block cache: the cache must
// be well above twice the memtable, or reads evict everything and every
// lookup reads its table's bloom filter from disk. 256 MiB also keeps the
// filters and indexes of some ten million payouts' records in memory.
const (
	stateMemTableBytes = 32 << 20
	stateCacheBytes    = 256 << 20
)

// OpenState opens or creates the state store in dir, with the same checks
// of Pebble's own log as Open.
func OpenState(dir string, opts Options) (*StateStore, error) {
	memTableBytes := opts.MemTableBytes
	if memTableBytes == 0 {
		memTableBytes = stateMemTableBytes
	}
	lock, err := lockDir(dir, &opts)
	if err != nil {
		return nil, err
	}
	s := &StateStore{lock: lock, lifecycle: lifecycle{name: "state store", logger: opts.Logger}}
	popts := s.pebbleOptions(opts, lock, memTableBytes, stateCacheBytes)
	popts.DisableWAL = true // see StateStore
	// Every flush spans the whole key space (records, lists, lookups,
	// pages: each batch writes some of each), so every compaction of
	// level 0 rewrites all of the base level it overlaps. Letting
	// level 0 grow to 16 tables before compacting it, over a small base
	// level, makes those rewrites fewer: compactions took 8-10 % of the
	// server's CPU under uniform payouts, against 15-19 % at 8 tables
	// over 256 MiB (go tool pprof, make bench). The cost is more tables
	// for a read to consult in level 0, where bloom filters answer most
	// point reads.
	popts.L0CompactionThreshold = 16
	popts.L0StopWritesThreshold = 48
	popts.LBaseMaxBytes = 64 << 20
	popts.TargetFileSizes[0] = 16 << 20
	// Flushes are cut into tables of 4 MiB along the base level's
	// boundaries, and every level below 0 is made of 4 MiB tables, so
	// that a compaction takes one narrow key range at a time instead of a
	// whole level: a long compaction holds one of the machine's cores for
	// its whole length, and under sustained load it showed as the slowest
	// windows. Over a 10-minute soak the longest compaction went from
	// 2.8 s (and growing with the store) to 1.9 s, and the slowest
	// 5-second window from 0.61 of the median to 0.77 (bench/HISTORY.md, Sustained
	// load). Small tables mean more of them: past Pebble's 1,000 open
	// tables, reads of old history reopen theirs.
	popts.FlushSplitBytes = 4 << 20
	for level := 1; level < len(popts.TargetFileSizes); level++ {
		popts.TargetFileSizes[level] = 4 << 20
	}
	// Point reads of records and lookups that miss (a new reference) are
	// the hot reads: bloom filters spare them most tables.
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	db, err := openPebble(dir, popts)
	if err != nil {
		return nil, err
	}
	s.db = db
	v, closer, err := db.Get(stateAppliedKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		_ = s.Close()
		return nil, fmt.Errorf("wal: open %s: read applied index: %w", dir, err)
	default:
		if len(v) != 8 {
			closer.Close()
			_ = s.Close()
			return nil, fmt.Errorf("wal: open %s: %w: applied index of %d bytes", dir, ErrCorrupt, len(v))
		}
		s.applied.Store(binary.BigEndian.Uint64(v))
		closer.Close()
	}
	return s, nil
}

// Applied is the index of the last log entry whose batch is committed.
func (s *StateStore) Applied() uint64 { return s.applied.Load() }

// Restoring reports whether a restore from a dump began and did not finish:
// the store's content is then neither the old state nor the new one, and
// the restore must be run again before the store is used.
func (s *StateStore) Restoring() (bool, error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.leave()
	_, closer, err := s.db.Get(stateRestoringKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, s.readError("read restore marker", err)
	}
	closer.Close()
	return true, nil
}

// StateBatch is the writes of one batch of applied log entries.
type StateBatch struct{ b *pebble.Batch }

// NewBatch returns an empty batch. Commit or Close it.
func (s *StateStore) NewBatch() *StateBatch { return &StateBatch{b: s.db.NewBatch()} }

// Set writes value under key.
func (b *StateBatch) Set(key, value []byte) error { return b.b.Set(key, value, nil) }

// SingleDelete deletes a key that was set once since it was last deleted.
func (b *StateBatch) SingleDelete(key []byte) error { return b.b.SingleDelete(key, nil) }

// Delete deletes a key.
func (b *StateBatch) Delete(key []byte) error { return b.b.Delete(key, nil) }

// Len is the size of the batch in bytes.
func (b *StateBatch) Len() int { return b.b.Len() }

// Close releases a batch that was not committed.
func (b *StateBatch) Close() { _ = b.b.Close() }

// Commit applies the batch with the index of the last log entry it covers,
// atomically, and closes it; it is durable once flushed (Sync). A failed
// commit fails the store: Pebble may have made part of it visible.
func (s *StateStore) Commit(b *StateBatch, applied uint64) (err error) {
	defer b.Close()
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	defer s.recoverFatal(&err)
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], applied)
	if err := b.b.Set(stateAppliedKey, v[:], nil); err != nil {
		return fmt.Errorf("wal: state batch: %w", err)
	}
	if err := b.b.Commit(pebble.NoSync); err != nil {
		return s.fail(err)
	}
	s.applied.Store(applied)
	return nil
}

// Sync makes every committed batch durable: it flushes the memtables to
// tables and waits. Commits go on meanwhile, into a new memtable.
func (s *StateStore) Sync() (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	defer s.recoverFatal(&err)
	if err := s.db.Flush(); err != nil {
		return s.fail(err)
	}
	return nil
}

// Get calls fn with the value stored under key, and reports whether there
// was one. The value is valid only during fn.
func (s *StateStore) Get(key []byte, fn func(value []byte)) (found bool, err error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.leave()
	defer s.recoverFatal(&err)
	return get(s.db, key, fn, s.readError)
}

type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func get(g getter, key []byte, fn func([]byte), readError func(string, error) error) (bool, error) {
	v, closer, err := g.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, readError(fmt.Sprintf("get %q", key), err)
	}
	fn(v)
	closer.Close()
	return true, nil
}

// StateIter is an iterator over the store, seeing it as it was when the
// iterator was made. Close it promptly: the store's Close waits for it.
type StateIter struct {
	*pebble.Iterator
	done func()
}

// Close releases the iterator.
func (it *StateIter) Close() error {
	err := it.Iterator.Close()
	if it.done != nil {
		it.done()
		it.done = nil
	}
	return err
}

// NewIter returns an iterator over the keys in [lower, upper).
func (s *StateStore) NewIter(lower, upper []byte) (*StateIter, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	it, err := newIter(s.db, lower, upper, s.readError)
	if err != nil {
		s.leave()
		return nil, err
	}
	it.done = s.leave
	return it, nil
}

type iterMaker interface {
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// newIter is an iterator of m over the keys in [lower, upper).
func newIter(m iterMaker, lower, upper []byte, readError func(string, error) error) (*StateIter, error) {
	it, err := m.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, readError("iterate", err)
	}
	return &StateIter{Iterator: it}, nil
}

// StateSnapshot is a consistent view of the store at one moment.
type StateSnapshot struct {
	s       *StateStore
	snap    *pebble.Snapshot
	applied uint64
}

// NewSnapshot returns a view of the store as it is now. Close it.
func (s *StateStore) NewSnapshot() (*StateSnapshot, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	// The applied index comes from the snapshot itself, so that the two
	// agree whatever commits meanwhile.
	snap := s.db.NewSnapshot()
	sn := &StateSnapshot{s: s, snap: snap}
	if _, err := get(snap, stateAppliedKey, func(v []byte) {
		if len(v) == 8 {
			sn.applied = binary.BigEndian.Uint64(v)
		}
	}, s.readError); err != nil {
		sn.Close()
		return nil, err
	}
	return sn, nil
}

// Applied is the applied index the snapshot is at.
func (sn *StateSnapshot) Applied() uint64 { return sn.applied }

// Get is StateStore.Get on the snapshot.
func (sn *StateSnapshot) Get(key []byte, fn func(value []byte)) (bool, error) {
	return get(sn.snap, key, fn, sn.s.readError)
}

// NewIter is StateStore.NewIter on the snapshot.
func (sn *StateSnapshot) NewIter(lower, upper []byte) (*StateIter, error) {
	return newIter(sn.snap, lower, upper, sn.s.readError)
}

// Close releases the snapshot.
func (sn *StateSnapshot) Close() {
	if sn.snap != nil {
		_ = sn.snap.Close()
		sn.snap = nil
		sn.s.leave()
	}
}

// Dump format, version 1: the whole store as a stream, to seed another
// node (Raft's snapshot install).
//
//	magic    "PAYSTATE"               8 bytes
//	version  1                        1 byte
//	applied  the applied index        8 bytes, big-endian
//	records  each: uvarint key length, key, uvarint value length, value,
//	         in key order; the store's own keys are not in it
//	end      a zero key length        1 byte
//	crc      CRC-32C of every byte above, big-endian, 4 bytes
const (
	dumpMagic   = "PAYSTATE"
	dumpVersion = 1
)

// DumpSize returns the size in bytes of the snapshot's dump.
func (sn *StateSnapshot) DumpSize() (int64, error) {
	n := int64(len(dumpMagic) + 1 + 8 + 1 + 4)
	err := sn.each(func(k, v []byte) error {
		n += int64(uvarintLen(len(k)) + len(k) + uvarintLen(len(v)) + len(v))
		return nil
	})
	return n, err
}

// WriteDump writes the snapshot's dump to w and returns its size.
func (sn *StateSnapshot) WriteDump(w io.Writer) (int64, error) {
	dw := &dumpWriter{w: bufio.NewWriterSize(w, 256<<10), crc: crc32.New(castagnoli)}
	var head [len(dumpMagic) + 1 + 8]byte
	copy(head[:], dumpMagic)
	head[len(dumpMagic)] = dumpVersion
	binary.BigEndian.PutUint64(head[len(dumpMagic)+1:], sn.applied)
	dw.write(head[:])
	err := sn.each(func(k, v []byte) error {
		dw.uvarint(len(k))
		dw.write(k)
		dw.uvarint(len(v))
		dw.write(v)
		return dw.err
	})
	if err != nil {
		return dw.n, err
	}
	dw.uvarint(0)
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], dw.crc.Sum32())
	dw.write(crc[:])
	if dw.err == nil {
		dw.err = dw.w.Flush()
	}
	return dw.n, dw.err
}

func (sn *StateSnapshot) each(fn func(k, v []byte) error) error {
	it, err := sn.NewIter(stateUserKeysFrom, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

type dumpWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
	err error
}

func (d *dumpWriter) write(b []byte) {
	if d.err != nil {
		return
	}
	d.crc.Write(b)
	_, d.err = d.w.Write(b)
	d.n += int64(len(b))
}

func (d *dumpWriter) uvarint(v int) {
	var b [binary.MaxVarintLen64]byte
	d.write(b[:binary.PutUvarint(b[:], uint64(v))])
}

func uvarintLen(v int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(v))
}

// dumpRecordBytesMax bounds one key or value in a dump.
const dumpRecordBytesMax = 64 << 20

// Restore replaces the store's content with a dump read from r and returns
// the applied index it was taken at. The store is marked restoring first,
// durably, and unmarked once everything is written and flushed, so that a
// crash in between is seen by Restoring.
func (s *StateStore) Restore(r io.Reader) (applied uint64, err error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	defer s.recoverFatal(&err)
	br := bufio.NewReaderSize(r, 256<<10)
	cr := &crcReader{r: br, crc: crc32.New(castagnoli)}
	var head [len(dumpMagic) + 1 + 8]byte
	if _, err := io.ReadFull(cr, head[:]); err != nil {
		return 0, fmt.Errorf("wal: read dump header: %w", err)
	}
	if string(head[:len(dumpMagic)]) != dumpMagic || head[len(dumpMagic)] != dumpVersion {
		return 0, fmt.Errorf("wal: not a state dump of version %d", dumpVersion)
	}
	applied = binary.BigEndian.Uint64(head[len(dumpMagic)+1:])

	// Every caller's key goes, whatever its bytes: the range ends just
	// past the last key there is.
	end := []byte{0xff}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: stateUserKeysFrom})
	if err != nil {
		return 0, s.readError("iterate", err)
	}
	if it.Last() {
		end = append(bytes.Clone(it.Key()), 0)
	}
	if err := it.Close(); err != nil {
		return 0, s.readError("iterate", err)
	}
	mark := s.db.NewBatch()
	_ = mark.Set(stateRestoringKey, nil, nil)
	_ = mark.DeleteRange(stateUserKeysFrom, end, nil)
	if err := mark.Commit(pebble.NoSync); err != nil {
		return 0, s.fail(err)
	}
	if err := s.db.Flush(); err != nil {
		return 0, s.fail(err)
	}
	b := s.db.NewBatch()
	var buf []byte
	for {
		klen, err := binary.ReadUvarint(cr)
		if err != nil {
			b.Close()
			return 0, fmt.Errorf("wal: read dump: %w", err)
		}
		if klen == 0 {
			break
		}
		if klen > dumpRecordBytesMax {
			b.Close()
			return 0, fmt.Errorf("wal: dump key of %d bytes", klen)
		}
		key := make([]byte, klen)
		if _, err := io.ReadFull(cr, key); err != nil {
			b.Close()
			return 0, fmt.Errorf("wal: read dump: %w", err)
		}
		vlen, err := binary.ReadUvarint(cr)
		if err != nil || vlen > dumpRecordBytesMax {
			b.Close()
			return 0, fmt.Errorf("wal: read dump value of %d bytes: %v", vlen, err)
		}
		if cap(buf) < int(vlen) {
			buf = make([]byte, vlen)
		}
		buf = buf[:vlen]
		if _, err := io.ReadFull(cr, buf); err != nil {
			b.Close()
			return 0, fmt.Errorf("wal: read dump: %w", err)
		}
		if len(key) == 0 || key[0] == 0 {
			b.Close()
			return 0, fmt.Errorf("wal: dump holds a reserved key %q", key)
		}
		_ = b.Set(key, buf, nil)
		if b.Len() >= 16<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return 0, s.fail(err)
			}
			b = s.db.NewBatch()
		}
	}
	want := cr.crc.Sum32()
	var crc [4]byte
	if _, err := io.ReadFull(br, crc[:]); err != nil {
		b.Close()
		return 0, fmt.Errorf("wal: read dump checksum: %w", err)
	}
	if got := binary.BigEndian.Uint32(crc[:]); got != want {
		b.Close()
		return 0, fmt.Errorf("wal: %w: dump checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], applied)
	_ = b.Set(stateAppliedKey, v[:], nil)
	_ = b.Delete(stateRestoringKey, nil)
	if err := b.Commit(pebble.NoSync); err != nil {
		return 0, s.fail(err)
	}
	if err := s.db.Flush(); err != nil {
		return 0, s.fail(err)
	}
	s.applied.Store(applied)
	return applied, nil
}

type crcReader struct {
	r   *bufio.Reader
	crc hash.Hash32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc.Write(p[:n])
	return n, err
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.crc.Write([]byte{b})
	}
	return b, err
}

// Digest returns the SHA-256 of every key and value in the store but its
// own, in key order, and the applied index they are at: two replicas at
// the same index must have the same digest.
func (s *StateStore) Digest() (sum [32]byte, applied uint64, err error) {
	sn, err := s.NewSnapshot()
	if err != nil {
		return sum, 0, err
	}
	defer sn.Close()
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	err = sn.each(func(k, v []byte) error {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(k)))])
		h.Write(k)
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
		h.Write(v)
		return nil
	})
	copy(sum[:], h.Sum(nil))
	return sum, sn.applied, err
}

// Metrics is Pebble's report on the store: levels, compactions, caches.
func (s *StateStore) Metrics() string {
	if err := s.enter(); err != nil {
		return err.Error()
	}
	defer s.leave()
	return s.db.Metrics().String()
}

// DiskBytes is the size of the store's files.
func (s *StateStore) DiskBytes() uint64 {
	return s.diskBytes(s.db)
}

// Close closes Pebble and releases the directory lock. It waits for calls
// in progress (iterators and snapshots included).
func (s *StateStore) Close() error {
	if err := s.close(s.db, s.lock); err != nil {
		return fmt.Errorf("wal: close state store: %w", err)
	}
	return nil
}

// PointReader reads keys of the store through one iterator kept open: its
// reads skip the set-up that each StateStore.Get pays, and all see the
// store as it was when the reader was made. The FSM makes one per applied
// batch, during which nothing commits. Not safe for concurrent use; Close
// it.
type PointReader struct {
	s  *StateStore
	it *pebble.Iterator
}

// NewPointReader returns a PointReader of the store as it is now.
func (s *StateStore) NewPointReader() (*PointReader, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		s.leave()
		return nil, s.readError("iterate", err)
	}
	return &PointReader{s: s, it: it}, nil
}

// Get is StateStore.Get, as of when the reader was made.
func (r *PointReader) Get(key []byte, fn func(value []byte)) (bool, error) {
	if !r.it.SeekPrefixGE(key) {
		if err := r.it.Error(); err != nil {
			return false, r.s.readError(fmt.Sprintf("get %q", key), err)
		}
		return false, nil
	}
	if !bytes.Equal(r.it.Key(), key) {
		return false, nil
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		return false, r.s.readError(fmt.Sprintf("get %q", key), err)
	}
	fn(v)
	return true, nil
}

// NewIter is StateStore.NewIter: a fresh iterator, which sees the store as
// it is now.
func (r *PointReader) NewIter(lower, upper []byte) (*StateIter, error) {
	return newIter(r.s.db, lower, upper, r.s.readError)
}

// Close releases the reader.
func (r *PointReader) Close() {
	if r.it != nil {
		_ = r.it.Close()
		r.it = nil
		r.s.leave()
	}
}
