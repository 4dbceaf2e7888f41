package requestlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"payments/wal"
)

// Defaults of Options.
const (
	RetentionDefault     = 720 * time.Hour
	MaxBytesDefault      = 1 << 30
	PruneIntervalDefault = time.Minute

	memTableBytes   = 4 << 20
	cacheBytes      = 16 << 20
	targetFileBytes = 256 << 10 // of L0; each deeper level's twice the one above
	// pruneBatchesMax is how many batches one pruning step deletes, so that
	// a large backlog is removed in bounded steps.
	pruneBatchesMax = 1024
	// pruneSlackDivisor: a log pruned for its size goes down to its bound
	// less a sixteenth (lowWater), so that a full log is pruned once per
	// sixteenth of its bound written, not after every commit. Each pruning
	// leaves range tombstones in the memtables, and every iterator opened
	// fragments all of them: pruned after every commit, a full log spent a
	// third of the node's CPU there and halved its throughput.
	pruneSlackDivisor = 16
	fieldLenMax       = 255 // an id or an organization
	recordVersion     = 2
	entryVersion      = 1
	headerBytes       = 1 + 4 + 8
	// ordinalBits of a position number a record within its batch.
	ordinalBits = 20
	batchLenMax = 1<<ordinalBits - 1
)

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("requestlog: store closed")

// ErrCorrupt is wrapped by the error of a read that met a damaged record.
var ErrCorrupt = errors.New("requestlog: corrupt record")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Options configure Open. The zero value is ready to use.
type Options struct {
	FS        vfs.FS        // nil: the real file system
	Logger    *slog.Logger  // nil: discard
	Retention time.Duration // how long a record is kept; zero: RetentionDefault
	MaxBytes  int64         // the live records' bytes kept at most; zero: MaxBytesDefault
	// UnattributedMaxBytes bounds the records of no organization (failed
	// authentications with unknown keys: anyone can make them) within
	// MaxBytes, so that they cannot push organizations' records out;
	// zero: a tenth of MaxBytes.
	UnattributedMaxBytes int64
	PruneInterval        time.Duration // how often old records are pruned; zero: PruneIntervalDefault
	// Now is the clock retention is judged by; nil: time.Now. For tests.
	Now func() time.Time
}

// Store is a node's request log on Pebble. See the package documentation
// for who may call what concurrently.
type Store struct {
	records *pebble.DB // 'b' | first seq → a batch's block of records
	loose   *pebble.DB // 'r' | seq → a late record, or one of no organization
	index   *pebble.DB // 'x' | batch → the batch's entry
	opts    Options

	// The batch in the making, Append's until Commit: its block, and the
	// records that go to loose.
	block                []byte
	blockFirst, blockMax uint64 // the block's lowest and highest positions; 0: empty
	looseBatch           *pebble.Batch
	pending              []pending
	recordsMax           uint64 // the highest position records holds; the recorder's

	next atomic.Uint64 // the last position NextSeq drew

	// mu orders Commit and pruning, and guards heads and lastBatch.
	mu        sync.RWMutex
	heads     map[string]uint64 // each organization's newest batch
	lastBatch uint64

	liveBytes    atomic.Int64
	unattributed atomic.Int64 // of liveBytes, the records of no organization

	gate    sync.RWMutex // calls in progress hold it for reading; Close for writing
	closed  bool
	prune   chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

// pending is a record appended since the last Commit.
type pending struct {
	org   string
	seq   uint64
	at    int64 // unix ns
	bytes int64
}

// Open opens or creates the request log in dir and starts its pruning.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Retention <= 0 {
		opts.Retention = RetentionDefault
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = MaxBytesDefault
	}
	if opts.UnattributedMaxBytes <= 0 {
		opts.UnattributedMaxBytes = opts.MaxBytes / 10
	}
	if opts.PruneInterval <= 0 {
		opts.PruneInterval = PruneIntervalDefault
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
		// Requests carry personal data even redacted (ids, paths, client
		// addresses): the directory is the owner's only.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("requestlog: %w", err)
		}
		if err := setAsideOldFormat(dir, opts.Logger); err != nil {
			return nil, err
		}
	}
	s := &Store{opts: opts, heads: map[string]uint64{},
		prune: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	var err error
	if s.records, err = openDB(fs, filepath.Join(dir, "records"), opts.Logger); err != nil {
		return nil, err
	}
	if s.loose, err = openDB(fs, filepath.Join(dir, "loose"), opts.Logger); err != nil {
		s.records.Close()
		return nil, err
	}
	if s.index, err = openDB(fs, filepath.Join(dir, "index"), opts.Logger); err != nil {
		s.records.Close()
		s.loose.Close()
		return nil, err
	}
	if err := s.load(); err != nil {
		s.records.Close()
		s.loose.Close()
		s.index.Close()
		return nil, err
	}
	s.looseBatch = s.loose.NewBatch()
	go s.pruneLoop()
	return s, nil
}

func openDB(fs vfs.FS, dir string, logger *slog.Logger) (*pebble.DB, error) {
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("requestlog: %w", err)
	}
	opts := &pebble.Options{
		FS:                 fs,
		Logger:             wal.PebbleLogger{L: logger, Component: "requestlog"},
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       memTableBytes,
		CacheSize:          cacheBytes,
	}
	// Records are small and read rarely: writing them uncompressed costs
	// less CPU than the disk it would save (MaxBytes bounds them either way).
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	// Small files: a flush overlaps the one before only by the records of
	// requests that ended after a later one began, and what a compaction
	// rewrites for that is a file on each side; the rest move down whole.
	opts.TargetFileSizes[0] = targetFileBytes
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("requestlog: open %s: %w", dir, err)
	}
	return db, nil
}

// setAsideOldFormat moves a log of the first format (one Pebble directly in
// dir, with an index of ids) aside, to dir + ".v1", so that this version
// starts a fresh one and the operator can keep or delete the old one.
func setAsideOldFormat(dir string, logger *slog.Logger) error {
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		return nil
	}
	aside := dir + ".v1"
	if err := os.Rename(dir, aside); err != nil {
		return fmt.Errorf("requestlog: setting aside the log of an earlier format: %w", err)
	}
	logger.Warn("request log: the log of an earlier format was set aside; a new one starts (delete the old one when no longer needed)",
		"setAside", aside)
	return os.MkdirAll(dir, 0o700)
}

// load reads the positions and the batch entries: the organizations'
// newest batches and the live bytes.
func (s *Store) load() error {
	var last [2]uint64
	for i, db := range []*pebble.DB{s.records, s.loose} {
		it, err := db.NewIter(nil)
		if err != nil {
			return fmt.Errorf("requestlog: %w", err)
		}
		if it.Last() && len(it.Key()) == 9 {
			last[i] = binary.BigEndian.Uint64(it.Key()[1:])
			if db == s.records {
				// The block's highest position, not its first.
				for rest := it.Value(); len(rest) > 0; {
					seq, _, next, ok := nextInBlock(rest)
					if !ok {
						it.Close()
						return fmt.Errorf("%w: block %x", ErrCorrupt, it.Key()[1:])
					}
					last[i], rest = max(last[i], seq), next
				}
			}
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("requestlog: %w", err)
		}
	}
	s.recordsMax = last[0]
	s.next.Store(max(last[0], last[1], uint64(time.Now().UnixMicro())))

	it, err := s.index.NewIter(&pebble.IterOptions{LowerBound: []byte{'x'}, UpperBound: []byte{'y'}})
	if err != nil {
		return fmt.Errorf("requestlog: %w", err)
	}
	defer it.Close()
	var live, un int64
	for valid := it.First(); valid; valid = it.Next() {
		no, e, err := decodeEntryKV(it.Key(), it.Value())
		if err != nil {
			return err
		}
		live += e.bytes
		un += e.unattributed
		for _, sec := range e.orgs {
			s.heads[sec.org] = no
		}
		s.lastBatch = no
	}
	s.liveBytes.Store(live)
	s.unattributed.Store(un)
	return it.Error()
}

// Close stops pruning, drops an uncommitted batch and closes Pebble.
func (s *Store) Close() error {
	s.gate.Lock()
	defer s.gate.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.stop)
	<-s.stopped
	s.looseBatch.Close()
	return errors.Join(s.index.Close(), s.loose.Close(), s.records.Close())
}

func (s *Store) enter() error {
	s.gate.RLock()
	if s.closed {
		s.gate.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.gate.RUnlock() }

func recordKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'r'}, seq)
}

func blockKey(first uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'b'}, first)
}

func entryKey(batch uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'x'}, batch)
}

// NextSeq draws the position of a record still to be appended: the
// caller names the record by it before the request is answered (package
// http puts it in the request id, so that a lookup by id needs no index).
// The counter starts at the larger of the last stored position + 1 and the
// time in microseconds, so positions drawn after a restart that lost
// unsynced records are not handed out twice. Safe for concurrent use.
func (s *Store) NextSeq() uint64 { return s.next.Add(1) }

// Append adds a record, at the position seq NextSeq drew, to the batch the
// next Commit writes. value is copied. An id or organization longer than
// 255 bytes, or either empty or holding a zero byte, is refused, as is a
// zero seq.
func (s *Store) Append(seq uint64, id, org string, at time.Time, value []byte) error {
	if seq == 0 || !validField(id) || len(org) > fieldLenMax || strings.IndexByte(org, 0) >= 0 {
		return fmt.Errorf("requestlog: seq %d, id %q or organization %q is not storable", seq, id, org)
	}
	if len(s.pending) == batchLenMax {
		return fmt.Errorf("requestlog: more than %d records in one batch", batchLenMax)
	}
	valueLen := headerBytes + 1 + len(id) + 1 + len(org) + len(value)
	if seq > s.recordsMax && org != "" {
		// Into the batch's block: one key for the whole batch.
		s.block = binary.BigEndian.AppendUint64(s.block, seq)
		s.block = binary.AppendUvarint(s.block, uint64(valueLen))
		s.block = appendRecord(s.block, id, org, at, value)
		if s.blockFirst == 0 || seq < s.blockFirst {
			s.blockFirst = seq
		}
		s.blockMax = max(s.blockMax, seq)
	} else {
		// The value is written in place in the batch: no copy is made.
		op := s.looseBatch.SetDeferred(1+8, valueLen)
		op.Key[0] = 'r'
		binary.BigEndian.PutUint64(op.Key[1:], seq)
		appendRecord(op.Value[:0], id, org, at, value)
		if err := op.Finish(); err != nil {
			return fmt.Errorf("requestlog: %w", err)
		}
	}
	s.pending = append(s.pending, pending{org: org, seq: seq, at: at.UnixNano(), bytes: int64(9 + valueLen)})
	return nil
}

// appendRecord appends a record's stored form (the package doc's layout).
func appendRecord(b []byte, id, org string, at time.Time, value []byte) []byte {
	start := len(b)
	b = append(b, recordVersion, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(at.UnixNano()))
	b = append(b, byte(len(id)))
	b = append(b, id...)
	b = append(b, byte(len(org)))
	b = append(b, org...)
	b = append(b, value...)
	binary.BigEndian.PutUint32(b[start+1:], crc32.Checksum(b[start+5:], crcTable))
	return b
}

// nextInBlock reads the first record of a block: its position, its stored
// form and the rest of the block.
func nextInBlock(b []byte) (seq uint64, record, rest []byte, ok bool) {
	if len(b) < 8 {
		return 0, nil, nil, false
	}
	seq = binary.BigEndian.Uint64(b)
	n, k := binary.Uvarint(b[8:])
	if k <= 0 || n > uint64(len(b)-8-k) {
		return 0, nil, nil, false
	}
	b = b[8+k:]
	return seq, b[:n], b[n:], true
}

func validField(v string) bool {
	return v != "" && len(v) <= fieldLenMax && strings.IndexByte(v, 0) < 0
}

// Commit writes the records appended since the last Commit, then their
// batch's entry in the index, both unsynced.
func (s *Store) Commit() error {
	if len(s.pending) == 0 {
		return nil
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	blockFirst := s.blockFirst
	defer func() {
		s.block, s.blockFirst, s.blockMax = s.block[:0], 0, 0
		s.looseBatch.Reset()
		s.pending = s.pending[:0]
	}()
	if blockFirst != 0 {
		if err := s.records.Set(blockKey(blockFirst), s.block, pebble.NoSync); err != nil {
			return fmt.Errorf("requestlog: commit: %w", err)
		}
		s.recordsMax = max(s.recordsMax, s.blockMax)
	}
	if !s.looseBatch.Empty() {
		if err := s.looseBatch.Commit(pebble.NoSync); err != nil {
			return fmt.Errorf("requestlog: commit: %w", err)
		}
	}
	no := s.lastBatch + 1
	e := s.entryOf(no)
	e.block = blockFirst
	// The entry counts toward MaxBytes too (within a byte: it holds the
	// count).
	e.bytes += int64(9 + len(e.encode()))
	v := e.encode()
	if err := s.index.Set(entryKey(no), v, pebble.NoSync); err != nil {
		return fmt.Errorf("requestlog: commit: %w", err)
	}
	s.lastBatch = no
	for _, sec := range e.orgs {
		s.heads[sec.org] = no
	}
	live := s.liveBytes.Add(e.bytes)
	un := s.unattributed.Add(e.unattributed)
	if live > s.opts.MaxBytes || un > s.opts.UnattributedMaxBytes {
		select {
		case s.prune <- struct{}{}:
		default:
		}
	}
	return nil
}

// entryOf builds batch no's entry from the pending records: each
// organization's records newest first, linked to its previous batch.
func (s *Store) entryOf(no uint64) entry {
	slices.SortFunc(s.pending, func(a, b pending) int {
		if c := strings.Compare(a.org, b.org); c != 0 {
			return c
		}
		switch {
		case a.seq > b.seq:
			return -1
		case a.seq < b.seq:
			return 1
		}
		return 0
	})
	e := entry{}
	for i, p := range s.pending {
		e.newestAt = max(e.newestAt, p.at)
		e.maxSeq = max(e.maxSeq, p.seq)
		e.bytes += p.bytes
		if p.org == "" {
			e.unattributed += p.bytes
		}
		if i == 0 || p.org != s.pending[i-1].org {
			e.orgs = append(e.orgs, section{org: p.org, prev: s.heads[p.org]})
		}
		sec := &e.orgs[len(e.orgs)-1]
		sec.seqs = append(sec.seqs, p.seq)
	}
	return e
}

// Bytes is what the live records and their batches' entries count toward
// MaxBytes.
func (s *Store) Bytes() int64 { return s.liveBytes.Load() }

// UnattributedBytes is what the records of no organization count toward
// UnattributedMaxBytes.
func (s *Store) UnattributedBytes() int64 { return s.unattributed.Load() }

// record is a decoded record value; its slices alias the bytes read.
type record struct {
	at      time.Time
	id, org []byte
	value   []byte
}

func decodeRecord(v []byte) (record, error) {
	if len(v) < headerBytes+2 || v[0] != recordVersion ||
		binary.BigEndian.Uint32(v[1:]) != crc32.Checksum(v[5:], crcTable) {
		return record{}, ErrCorrupt
	}
	r := record{at: time.Unix(0, int64(binary.BigEndian.Uint64(v[5:])))}
	rest := v[headerBytes:]
	n := int(rest[0])
	if len(rest) < 1+n+1 {
		return record{}, ErrCorrupt
	}
	r.id, rest = rest[1:1+n], rest[1+n:]
	m := int(rest[0])
	if len(rest) < 1+m {
		return record{}, ErrCorrupt
	}
	r.org, r.value = rest[1:1+m], rest[1+m:]
	return r, nil
}

func (s *Store) expired(at time.Time) bool {
	return at.Before(s.opts.Now().Add(-s.opts.Retention))
}

// Get returns a copy of the bytes of request id, appended at position seq,
// if it belongs to org and is within its retention; false otherwise.
func (s *Store) Get(seq uint64, id, org string) ([]byte, bool, error) {
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.leave()
	if !validField(id) {
		return nil, false, nil
	}
	v, closer, found, err := s.read(seq)
	if !found || err != nil {
		return nil, false, err
	}
	defer closer.Close()
	r, err := decodeRecord(v)
	if err != nil {
		return nil, false, fmt.Errorf("%w: seq %x", err, seq)
	}
	if string(r.org) != org || string(r.id) != id || s.expired(r.at) {
		return nil, false, nil
	}
	return bytes.Clone(r.value), true, nil
}

// Scan calls fn with org's records within their retention, newest batch
// first and newest first within a batch, starting below position before
// (math.MaxUint64: from the newest), until fn returns false. pos is the
// record's position in that order, for the next Scan's before; value is
// valid only during the call.
func (s *Store) Scan(org string, before uint64, fn func(pos uint64, at time.Time, value []byte) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.mu.RLock()
	no, found := s.heads[org]
	s.mu.RUnlock()
	if !found {
		return nil
	}
	if before != math.MaxUint64 {
		no = min(no, before>>ordinalBits)
	}
	for no != 0 {
		e, found, err := s.readEntry(no)
		if err != nil || !found {
			return err // not found: pruned, and every older batch with it
		}
		i, ok := slices.BinarySearchFunc(e.orgs, org, func(sec section, org string) int { return strings.Compare(sec.org, org) })
		if !ok {
			return nil // its records of org were pruned, and older ones with them
		}
		sec := e.orgs[i]
		for ord, seq := range sec.seqs {
			pos := no<<ordinalBits | uint64(batchLenMax-ord)
			if pos >= before {
				continue
			}
			more, err := s.visit(seq, org, pos, fn)
			if err != nil || !more {
				return err
			}
		}
		no = sec.prev
	}
	return nil
}

// visit calls fn with the record at seq if it is org's and live; more is
// false once fn or the retention ends the scan.
func (s *Store) visit(seq uint64, org string, pos uint64, fn func(pos uint64, at time.Time, value []byte) bool) (more bool, err error) {
	v, closer, found, err := s.read(seq)
	if err != nil {
		return false, err
	}
	if !found {
		return true, nil // pruned meanwhile
	}
	defer closer.Close()
	r, err := decodeRecord(v)
	if err != nil {
		return false, fmt.Errorf("%w: seq %x", err, seq)
	}
	if string(r.org) != org {
		return true, nil
	}
	if s.expired(r.at) {
		return false, nil // every older record is older still
	}
	return fn(pos, r.at, r.value), nil
}

// read returns the record at seq: in the block of records whose first
// position is the highest at or below seq, or else in loose.
func (s *Store) read(seq uint64) ([]byte, io.Closer, bool, error) {
	if seq < math.MaxUint64 {
		it, err := s.records.NewIter(&pebble.IterOptions{LowerBound: []byte{'b'}, UpperBound: blockKey(seq + 1)})
		if err != nil {
			return nil, nil, false, fmt.Errorf("requestlog: %w", err)
		}
		if it.Last() {
			for rest := it.Value(); len(rest) > 0; {
				at, record, next, ok := nextInBlock(rest)
				if !ok {
					err := fmt.Errorf("%w: block %x", ErrCorrupt, it.Key()[1:])
					it.Close()
					return nil, nil, false, err
				}
				if at == seq {
					return record, it, true, nil
				}
				rest = next
			}
		}
		if err := it.Close(); err != nil {
			return nil, nil, false, fmt.Errorf("requestlog: %w", err)
		}
	}
	v, closer, err := s.loose.Get(recordKey(seq))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("requestlog: %w", err)
	}
	return v, closer, true, nil
}

func (s *Store) readEntry(no uint64) (entry, bool, error) {
	v, closer, err := s.index.Get(entryKey(no))
	if errors.Is(err, pebble.ErrNotFound) {
		return entry{}, false, nil
	}
	if err != nil {
		return entry{}, false, fmt.Errorf("requestlog: %w", err)
	}
	defer closer.Close()
	e, err := decodeEntry(v)
	if err != nil {
		return entry{}, false, fmt.Errorf("%w: batch %d", err, no)
	}
	return e, true, nil
}

// Prune deletes the records past their retention and, oldest first, those
// that take the log past MaxBytes, then the oldest records of no
// organization beyond their share. It returns how many records it deleted.
func (s *Store) Prune() (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.pruneAll()
}

func (s *Store) pruneAll() (int, error) {
	removed := 0
	// The targets are fixed for the whole pruning: a log over a bound goes
	// down to its low water, one under it prunes only what expired.
	liveTarget, unTarget := s.opts.MaxBytes, s.opts.UnattributedMaxBytes
	if s.liveBytes.Load() > liveTarget {
		liveTarget = lowWater(liveTarget)
	}
	if s.unattributed.Load() > unTarget {
		unTarget = lowWater(unTarget)
	}
	steps := []func() (int, bool, error){
		func() (int, bool, error) { return s.pruneStep(liveTarget) },
		func() (int, bool, error) { return s.pruneUnattributedStep(unTarget) },
	}
	for _, step := range steps {
		for {
			n, more, err := step()
			removed += n
			if err != nil {
				return removed, err
			}
			if !more {
				break
			}
			select {
			case <-s.stop:
				return removed, nil
			default:
			}
		}
	}
	return removed, nil
}

// lowWater is what a log over bound is pruned down to (pruneSlackDivisor).
func lowWater(bound int64) int64 { return bound - bound/pruneSlackDivisor }

// pruneStep deletes, oldest first, up to pruneBatchesMax whole batches
// whose newest record is past its retention or that take the log beyond
// target bytes, and says whether there may be more to delete. Records and
// entries go as range deletions: both logs' keys grow with time, so
// pruning drops whole files rather than writing a tombstone per key. The
// records go by position, up to the highest the pruned batches hold: a
// record of a later batch below it (a request that started before and
// ended after a pruned one's) goes with them; it is the older.
func (s *Store) pruneStep(target int64) (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.index.NewIter(&pebble.IterOptions{LowerBound: []byte{'x'}, UpperBound: []byte{'y'}})
	if err != nil {
		return 0, false, fmt.Errorf("requestlog: %w", err)
	}
	defer it.Close()
	live, un := s.liveBytes.Load(), s.unattributed.Load()
	var lastNo, maxSeq, lastBlock uint64
	batches, records := 0, 0
	var orgs []string
	for valid := it.First(); valid && batches < pruneBatchesMax; valid = it.Next() {
		no, e, err := decodeEntryKV(it.Key(), it.Value())
		if err != nil {
			return records, false, err
		}
		if !s.expired(time.Unix(0, e.newestAt)) && live <= target {
			break
		}
		lastNo, maxSeq, lastBlock = no, max(maxSeq, e.maxSeq), max(lastBlock, e.block)
		live -= e.bytes
		un -= e.unattributed
		for _, sec := range e.orgs {
			orgs = append(orgs, sec.org)
			records += len(sec.seqs)
		}
		batches++
	}
	if batches == 0 {
		return 0, false, it.Error()
	}
	// The records first: a crash between the two leaves entries whose
	// records are gone, which reads skip and the next pruning deletes.
	if lastBlock != 0 {
		if err := s.records.DeleteRange([]byte{'b'}, blockKey(lastBlock+1), pebble.NoSync); err != nil {
			return 0, false, fmt.Errorf("requestlog: prune: %w", err)
		}
	}
	if err := s.loose.DeleteRange([]byte{'r'}, recordKey(maxSeq+1), pebble.NoSync); err != nil {
		return 0, false, fmt.Errorf("requestlog: prune: %w", err)
	}
	if err := s.index.DeleteRange([]byte{'x'}, entryKey(lastNo+1), pebble.NoSync); err != nil {
		return 0, false, fmt.Errorf("requestlog: prune: %w", err)
	}
	for _, org := range orgs {
		if s.heads[org] <= lastNo {
			delete(s.heads, org)
		}
	}
	s.liveBytes.Store(max(live, 0))
	s.unattributed.Store(max(un, 0))
	return records, batches == pruneBatchesMax, nil
}

// pruneUnattributedStep deletes, oldest first, the records of no
// organization of up to pruneBatchesMax batches while they exceed target
// bytes, rewriting those batches' entries without them.
func (s *Store) pruneUnattributedStep(target int64) (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unattributed.Load() <= target {
		return 0, false, nil
	}
	it, err := s.index.NewIter(&pebble.IterOptions{LowerBound: []byte{'x'}, UpperBound: []byte{'y'}})
	if err != nil {
		return 0, false, fmt.Errorf("requestlog: %w", err)
	}
	defer it.Close()
	lb, ib := s.loose.NewBatch(), s.index.NewBatch()
	defer lb.Close()
	defer ib.Close()
	live, un := s.liveBytes.Load(), s.unattributed.Load()
	batches, records := 0, 0
	for valid := it.First(); valid && batches < pruneBatchesMax && un > target; valid = it.Next() {
		no, e, err := decodeEntryKV(it.Key(), it.Value())
		if err != nil {
			return records, false, err
		}
		if len(e.orgs) == 0 || e.orgs[0].org != "" {
			continue // sorted: the empty organization comes first
		}
		for _, seq := range e.orgs[0].seqs {
			lb.Delete(recordKey(seq), nil) // never in a block
		}
		records += len(e.orgs[0].seqs)
		e.orgs = e.orgs[1:]
		live -= e.unattributed
		un -= e.unattributed
		e.bytes -= e.unattributed
		e.unattributed = 0
		// The entry shrinks too; what it counts follows, within a byte.
		shrunk := int64(len(e.encode()) - len(it.Value()))
		e.bytes += shrunk
		live += shrunk
		ib.Set(entryKey(no), e.encode(), nil)
		if s.heads[""] == no {
			delete(s.heads, "")
		}
		batches++
	}
	if batches == 0 {
		return 0, false, it.Error()
	}
	if err := lb.Commit(pebble.NoSync); err != nil {
		return 0, false, fmt.Errorf("requestlog: prune: %w", err)
	}
	if err := ib.Commit(pebble.NoSync); err != nil {
		return 0, false, fmt.Errorf("requestlog: prune: %w", err)
	}
	s.liveBytes.Store(max(live, 0))
	s.unattributed.Store(max(un, 0))
	return records, batches == pruneBatchesMax, nil
}

func (s *Store) pruneLoop() {
	defer close(s.stopped)
	tick := time.NewTicker(s.opts.PruneInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		case <-s.prune:
		}
		// Close waits for this loop, so the loop's own calls skip the gate.
		removed, err := s.pruneAll()
		if err != nil {
			s.opts.Logger.Error("pruning the request log", "err", err)
		}
		if removed > 0 {
			s.opts.Logger.Debug("pruned the request log", "records", removed, "bytes", s.liveBytes.Load())
		}
	}
}
