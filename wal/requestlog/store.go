package requestlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Defaults of Options.
const (
	RetentionDefault     = 720 * time.Hour
	MaxBytesDefault      = 1 << 30
	PruneIntervalDefault = time.Minute

	memTableBytes = 4 << 20
	cacheBytes    = 16 << 20
	// pruneBatchMax is how many records one pruning batch deletes, so that
	// a large backlog is removed in bounded steps.
	pruneBatchMax = 1024
	fieldLenMax   = 255 // an id or an organization
	recordVersion = 1
	headerBytes   = 1 + 4 + 8
)

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("requestlog: store closed")

// ErrCorrupt is wrapped by the error of a read that met a damaged record.
var ErrCorrupt = errors.New("requestlog: corrupt record")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var bytesKey = []byte("mbytes")

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
	db   *pebble.DB
	opts Options

	batch               *pebble.Batch // Append's, until Commit
	pendingBytes        int64
	pendingUnattributed int64
	seq                 uint64 // the last seq appended; the recorder's

	mu           sync.Mutex // orders commits of the live byte count
	liveBytes    atomic.Int64
	unattributed atomic.Int64 // of liveBytes, the records of no organization

	gate    sync.RWMutex // calls in progress hold it for reading; Close for writing
	closed  bool
	prune   chan struct{}
	stop    chan struct{}
	stopped chan struct{}
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
	}
	db, err := pebble.Open(dir, &pebble.Options{
		FS:                 fs,
		Logger:             pebbleLogger{opts.Logger},
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       memTableBytes,
		CacheSize:          cacheBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("requestlog: open %s: %w", dir, err)
	}
	s := &Store{db: db, opts: opts, batch: db.NewBatch(),
		prune: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	if v, closer, err := db.Get(bytesKey); err == nil {
		if len(v) == 16 {
			s.liveBytes.Store(int64(binary.BigEndian.Uint64(v)))
			s.unattributed.Store(int64(binary.BigEndian.Uint64(v[8:])))
		}
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		db.Close()
		return nil, fmt.Errorf("requestlog: %w", err)
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{'r'}, UpperBound: []byte{'s'}})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("requestlog: %w", err)
	}
	if it.Last() && len(it.Key()) == 9 {
		s.seq = binary.BigEndian.Uint64(it.Key()[1:])
	}
	it.Close()
	go s.pruneLoop()
	return s, nil
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
	s.batch.Close()
	return s.db.Close()
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

func idKey(id string) []byte { return append([]byte{'i'}, id...) }

func orgPrefix(org string) []byte {
	k := make([]byte, 0, 2+len(org)+8)
	k = append(k, 'o')
	k = append(k, org...)
	return append(k, 0)
}

// Append adds a record to the batch the next Commit writes. value is
// copied. An id or organization longer than 255 bytes, or either empty or
// holding a zero byte, is refused.
func (s *Store) Append(id, org string, at time.Time, value []byte) error {
	if !validField(id) || len(org) > fieldLenMax || bytes.IndexByte([]byte(org), 0) >= 0 {
		return fmt.Errorf("requestlog: id %q or organization %q is not storable", id, org)
	}
	s.seq++
	rk := recordKey(s.seq)
	rv := make([]byte, headerBytes, headerBytes+2+len(id)+len(org)+len(value))
	rv[0] = recordVersion
	binary.BigEndian.PutUint64(rv[5:], uint64(at.UnixNano()))
	rv = append(rv, byte(len(id)))
	rv = append(rv, id...)
	rv = append(rv, byte(len(org)))
	rv = append(rv, org...)
	rv = append(rv, value...)
	binary.BigEndian.PutUint32(rv[1:], crc32.Checksum(rv[5:], crcTable))
	ik, seqBytes := idKey(id), rk[1:]
	ok := append(orgPrefix(org), seqBytes...)
	s.batch.Set(rk, rv, nil)
	s.batch.Set(ik, seqBytes, nil)
	s.batch.Set(ok, nil, nil)
	n := recordBytes(len(rv), len(id), len(org))
	s.pendingBytes += n
	if org == "" {
		s.pendingUnattributed += n
	}
	return nil
}

func validField(v string) bool {
	return v != "" && len(v) <= fieldLenMax && bytes.IndexByte([]byte(v), 0) < 0
}

// recordBytes is what a record counts toward MaxBytes: its three keys and
// their values.
func recordBytes(valueLen, idLen, orgLen int) int64 {
	return int64(9+valueLen) + int64(1+idLen+8) + int64(1+orgLen+1+8)
}

// Commit writes the records appended since the last Commit, unsynced.
func (s *Store) Commit() error {
	if s.batch.Empty() {
		return nil
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.mu.Lock()
	live := s.liveBytes.Load() + s.pendingBytes
	un := s.unattributed.Load() + s.pendingUnattributed
	s.batch.Set(bytesKey, bytesValue(live, un), nil)
	err := s.batch.Commit(pebble.NoSync)
	if err == nil {
		s.liveBytes.Store(live)
		s.unattributed.Store(un)
	}
	s.mu.Unlock()
	s.batch.Reset()
	s.pendingBytes, s.pendingUnattributed = 0, 0
	if err != nil {
		return fmt.Errorf("requestlog: commit: %w", err)
	}
	if live > s.opts.MaxBytes || un > s.opts.UnattributedMaxBytes {
		select {
		case s.prune <- struct{}{}:
		default:
		}
	}
	return nil
}

// Bytes is what the live records count toward MaxBytes.
func (s *Store) Bytes() int64 { return s.liveBytes.Load() }

// UnattributedBytes is what the records of no organization count toward
// UnattributedMaxBytes.
func (s *Store) UnattributedBytes() int64 { return s.unattributed.Load() }

func bytesValue(live, unattributed int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(live)), uint64(unattributed))
}

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

// Get returns a copy of the bytes of request id if it belongs to org and is
// within its retention; false otherwise.
func (s *Store) Get(id, org string) ([]byte, bool, error) {
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.leave()
	if !validField(id) {
		return nil, false, nil
	}
	seq, closer, err := s.db.Get(idKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("requestlog: %w", err)
	}
	rk := append([]byte{'r'}, seq...)
	closer.Close()
	v, closer, err := s.db.Get(rk)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("requestlog: %w", err)
	}
	defer closer.Close()
	r, err := decodeRecord(v)
	if err != nil {
		return nil, false, fmt.Errorf("%w: seq %x", err, rk[1:])
	}
	if string(r.org) != org || string(r.id) != id || s.expired(r.at) {
		return nil, false, nil
	}
	return bytes.Clone(r.value), true, nil
}

// Scan calls fn with org's records within their retention, newest first,
// starting below position before (math.MaxUint64: from the newest), until
// fn returns false. pos is the record's position, for the next Scan's
// before; value is valid only during the call.
func (s *Store) Scan(org string, before uint64, fn func(pos uint64, at time.Time, value []byte) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	prefix := orgPrefix(org)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: binary.BigEndian.AppendUint64(bytes.Clone(prefix), before)})
	if err != nil {
		return fmt.Errorf("requestlog: %w", err)
	}
	defer it.Close()
	rk := make([]byte, 9)
	rk[0] = 'r'
	for valid := it.Last(); valid; valid = it.Prev() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			continue
		}
		copy(rk[1:], k[len(prefix):])
		v, closer, err := s.db.Get(rk)
		if errors.Is(err, pebble.ErrNotFound) {
			continue // pruned meanwhile
		}
		if err != nil {
			return fmt.Errorf("requestlog: %w", err)
		}
		r, derr := decodeRecord(v)
		if derr != nil {
			closer.Close()
			return fmt.Errorf("%w: seq %x", derr, rk[1:])
		}
		if s.expired(r.at) {
			closer.Close()
			return nil // every older record is older still
		}
		more := fn(binary.BigEndian.Uint64(rk[1:]), r.at, r.value)
		closer.Close()
		if !more {
			return nil
		}
	}
	return it.Error()
}

// Prune deletes the records past their retention and, oldest first, those
// that take the log past MaxBytes. It returns how many it deleted.
func (s *Store) Prune() (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	removed := 0
	for _, step := range []func() (int, bool, error){s.pruneStep, s.pruneUnattributedStep} {
		for {
			n, more, err := step()
			removed += n
			if err != nil {
				return removed, err
			}
			if !more {
				break
			}
		}
	}
	return removed, nil
}

// pruneStep deletes up to pruneBatchMax records in one batch and says
// whether there may be more to delete.
func (s *Store) pruneStep() (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{'r'}, UpperBound: []byte{'s'}})
	if err != nil {
		return 0, false, fmt.Errorf("requestlog: %w", err)
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	live, un, n := s.liveBytes.Load(), s.unattributed.Load(), 0
	for valid := it.First(); valid && n < pruneBatchMax; valid = it.Next() {
		r, err := decodeRecord(it.Value())
		if err != nil {
			return n, false, fmt.Errorf("%w: seq %x", err, it.Key()[1:])
		}
		if !s.expired(r.at) && live <= s.opts.MaxBytes {
			break
		}
		seq := it.Key()[1:]
		b.Delete(it.Key(), nil)
		b.Delete(append(orgPrefix(string(r.org)), seq...), nil)
		// The id's entry goes only if it still names this record.
		ik := idKey(string(r.id))
		if cur, closer, err := s.db.Get(ik); err == nil {
			if bytes.Equal(cur, seq) {
				b.Delete(ik, nil)
			}
			closer.Close()
		}
		size := recordBytes(len(it.Value()), len(r.id), len(r.org))
		live -= size
		if len(r.org) == 0 {
			un -= size
		}
		n++
	}
	if n == 0 {
		return 0, false, it.Error()
	}
	return n, n == pruneBatchMax, s.commitPrune(b, live, un)
}

func (s *Store) commitPrune(b *pebble.Batch, live, un int64) error {
	live, un = max(live, 0), max(un, 0)
	b.Set(bytesKey, bytesValue(live, un), nil)
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("requestlog: prune: %w", err)
	}
	s.liveBytes.Store(live)
	s.unattributed.Store(un)
	return nil
}

// pruneUnattributedStep deletes, oldest first, up to pruneBatchMax records
// of no organization while they exceed UnattributedMaxBytes.
func (s *Store) pruneUnattributedStep() (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live, un, n := s.liveBytes.Load(), s.unattributed.Load(), 0
	if un <= s.opts.UnattributedMaxBytes {
		return 0, false, nil
	}
	prefix := orgPrefix("")
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: []byte{'o', 1}})
	if err != nil {
		return 0, false, fmt.Errorf("requestlog: %w", err)
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	rk := make([]byte, 9)
	rk[0] = 'r'
	for valid := it.First(); valid && n < pruneBatchMax && un > s.opts.UnattributedMaxBytes; valid = it.Next() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			continue
		}
		copy(rk[1:], k[len(prefix):])
		b.Delete(k, nil)
		v, closer, err := s.db.Get(rk)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, false, fmt.Errorf("requestlog: %w", err)
		}
		r, derr := decodeRecord(v)
		if derr != nil {
			closer.Close()
			return n, false, fmt.Errorf("%w: seq %x", derr, rk[1:])
		}
		size := recordBytes(len(v), len(r.id), len(r.org))
		ik := idKey(string(r.id))
		closer.Close()
		b.Delete(bytes.Clone(rk), nil)
		if cur, closer, err := s.db.Get(ik); err == nil {
			if bytes.Equal(cur, rk[1:]) {
				b.Delete(ik, nil)
			}
			closer.Close()
		}
		live, un = live-size, un-size
		n++
	}
	if n == 0 {
		return 0, false, it.Error()
	}
	return n, n == pruneBatchMax, s.commitPrune(b, live, un)
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
		removed := 0
		for _, step := range []func() (int, bool, error){s.pruneStep, s.pruneUnattributedStep} {
			for {
				n, more, err := step()
				removed += n
				if err != nil {
					s.opts.Logger.Error("pruning the request log", "err", err)
					break
				}
				if !more {
					break
				}
				select {
				case <-s.stop:
					return
				default:
				}
			}
		}
		if removed > 0 {
			s.opts.Logger.Debug("pruned the request log", "records", removed, "bytes", s.liveBytes.Load())
		}
	}
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "component", "requestlog")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "requestlog")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "requestlog", "fatal", true)
	panic(msg)
}
