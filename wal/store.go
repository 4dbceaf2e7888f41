package wal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	hraft "github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrCorrupt is wrapped by every error that reports damaged storage: a record
// that fails its checksum, a key that disagrees with its record, a log that is
// not contiguous, or a Pebble WAL or MANIFEST that Pebble would silently
// shorten.
var ErrCorrupt = errors.New("wal: corrupt log")

// errNotFound is what Get and GetUint64 return for a missing key. hashicorp/raft
// tells "missing" from "failed" by comparing err.Error() with "not found"
// (raft.go, api.go), so the text must stay exactly that and must never be
// wrapped.
var errNotFound = errors.New("not found")

// ErrClosed is returned by every call on a store after Close.
var ErrClosed = errors.New("wal: store closed")

const (
	memTableBytesDefault = 32 << 20
	// memTableBytesMax keeps memtables, and so WAL files and replay time,
	// bounded; Pebble itself refuses 4 GiB or more.
	memTableBytesMax  = 1 << 30
	cacheBytesDefault = 16 << 20
)

var (
	_ hraft.LogStore          = (*Store)(nil)
	_ hraft.StableStore       = (*Store)(nil)
	_ hraft.MonotonicLogStore = (*Store)(nil)
)

// Options configure Open. The zero value is ready to use.
type Options struct {
	// FS is where Pebble's files live. Nil means vfs.Default, creating files
	// and directories for the owner only (ownerOnlyFS); tests pass
	// vfs.NewCrashableMem() or an errorfs wrapper.
	FS vfs.FS
	// Logger receives the store's warnings and Pebble's own messages (info at
	// debug level, errors at error level). Nil discards everything.
	Logger *slog.Logger
	// MemTableBytes is the size of one Pebble memtable, and so roughly how
	// much log a Pebble WAL holds and Open replays. Zero means 32 MiB.
	MemTableBytes uint64
	// CacheBytes is the size of Pebble's block cache. Zero means 16 MiB.
	CacheBytes int64
	// OnLogAppend, if set, is told how long each StoreLogs batch took to
	// commit (its fsync included) and how many entries it held, for the
	// node's metrics. It runs on Raft's write path: it must be cheap.
	OnLogAppend func(elapsed time.Duration, entries int)
}

// Store is a Raft log and stable store on Pebble. See the package
// documentation for what is safe to call concurrently.
type Store struct {
	lifecycle
	db   *pebble.DB
	lock *pebble.Lock

	// logMu serializes StoreLogs and DeleteRange so that bounds moves in the
	// order the log does. Stable writes do not take it.
	logMu  sync.Mutex
	bounds atomic.Pointer[logBounds]

	onAppend     func(time.Duration, int) // Options.OnLogAppend
	fsyncLatency prometheus.Histogram     // Pebble's, of its WAL's fsyncs
}

// logBounds is the first and last index of the log. The zero value is the
// empty log. Values are never modified after they are published.
type logBounds struct {
	first, last uint64
	nonEmpty    bool
	// gapped is set once a write leaves a gap. Until then DeleteRange can
	// compute the new bounds without an iterator, which matters because a
	// new iterator re-fragments every range deletion still in the memtable.
	gapped bool
}

// Open opens or creates the store in dir. Before Pebble replays its WAL, Open
// checks that no WAL has a damaged record followed by valid ones; after, it
// reads and verifies every record. Either failure returns an error wrapping
// ErrCorrupt, and the node should refuse to serve rather than repair.
func Open(dir string, opts Options) (*Store, error) {
	memTableBytes := opts.MemTableBytes
	if memTableBytes == 0 {
		memTableBytes = memTableBytesDefault
	}
	if memTableBytes > memTableBytesMax {
		return nil, fmt.Errorf("wal: memtable of %d bytes exceeds %d", memTableBytes, memTableBytesMax)
	}
	lock, err := lockDir(dir, &opts)
	if err != nil {
		return nil, err
	}
	s := &Store{lock: lock, lifecycle: lifecycle{name: "store", logger: opts.Logger}, onAppend: opts.OnLogAppend}
	s.bounds.Store(&logBounds{})
	db, err := openPebble(dir, s.pebbleOptions(opts, lock, memTableBytes, cacheBytesDefault))
	if err != nil {
		return nil, err
	}
	s.db = db
	s.fsyncLatency = db.Metrics().LogWriter.FsyncLatency
	if err := s.verify(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	return s, nil
}

// lockDir fills in opts' file system and logger, creates dir and takes
// Pebble's directory lock on it. Holding the lock, so that no other process
// writes Pebble's WAL while it is read, it checks that WAL
// (checkPebbleLogs).
func lockDir(dir string, opts *Options) (*pebble.Lock, error) {
	if opts.FS == nil {
		opts.FS = defaultFS()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := mkdirAllSynced(opts.FS, dir, dirMode); err != nil {
		return nil, fmt.Errorf("wal: create %s: %w", dir, err)
	}
	lock, err := pebble.LockDirectory(dir, opts.FS)
	if err != nil {
		return nil, fmt.Errorf("wal: lock %s: %w", dir, err)
	}
	if err := checkPebbleLogs(opts.FS, dir); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	return lock, nil
}

// openPebble opens Pebble in dir under opts.Lock, which it releases when
// it fails; a corrupt store's error wraps ErrCorrupt.
func openPebble(dir string, opts *pebble.Options) (*pebble.DB, error) {
	db, err := openPebbleRecovered(dir, opts)
	if err != nil {
		_ = opts.Lock.Close()
		if pebble.IsCorruptionError(err) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	return db, nil
}

// openPebbleRecovered is pebble.Open with our logger's fatal panics turned
// into errors.
func openPebbleRecovered(dir string, opts *pebble.Options) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(pebbleFatal)
			if !ok {
				panic(r)
			}
			db, err = nil, errors.New(f.msg)
		}
	}()
	return pebble.Open(dir, opts)
}

// Close closes Pebble and releases the directory lock. It waits for calls in
// progress; calls after it return an error. Closing twice is a no-op.
func (s *Store) Close() error {
	if err := s.close(s.db, s.lock); err != nil {
		return fmt.Errorf("wal: close: %w", err)
	}
	return nil
}

// IsMonotonic tells hashicorp/raft that this log never has gaps, so that after
// a snapshot is installed it deletes the old log instead of leaving a gap that
// the next Open would refuse.
func (s *Store) IsMonotonic() bool { return true }

// commit applies b with one fsync. A failed WAL write or sync leaves the batch
// visible in Pebble's memtable without being durable, so the store fails
// rather than serve it.
func (s *Store) commit(b *pebble.Batch) (err error) {
	defer s.recoverFatal(&err)
	if err := b.Commit(pebble.Sync); err != nil {
		return s.fail(err)
	}
	return nil
}

// pebbleOptions are the Pebble options both stores start from: opts' file
// system and logger (as lockDir filled them in), the directory lock, the
// memtable size, and the cache opts sets or else cacheBytes. The newest
// format writes WAL chunks that carry a synced offset, which lets Pebble's
// own replay tell some corruption from a torn tail; a new store has no
// older readers to stay compatible with. A block that fails its checksum,
// possibly in a background compaction, fails the store; the read that hit
// it, if any, also returns an error.
func (l *lifecycle) pebbleOptions(opts Options, lock *pebble.Lock, memTableBytes uint64, cacheBytes int64) *pebble.Options {
	if opts.CacheBytes > 0 {
		cacheBytes = opts.CacheBytes
	}
	return &pebble.Options{
		FS:     opts.FS,
		Lock:   lock,
		Logger: PebbleLogger{L: opts.Logger, Component: "pebble"},
		EventListener: &pebble.EventListener{
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				l.fail(fmt.Errorf("%w: pebble: %s", ErrCorrupt, info))
			},
		},
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       memTableBytes,
		CacheSize:          cacheBytes,
	}
}

// pebbleFatal is the panic value of PebbleLogger.Fatalf.
type pebbleFatal struct{ msg string }

// Error is the message, so that a panic nobody recovers reads as it.
func (f pebbleFatal) Error() string { return f.msg }

// PebbleLogger routes Pebble's messages to slog, tagged with Component.
// Fatalf must not return: Pebble calls it on a failed WAL sync and, if it
// returned, would report the commit as successful. It panics instead; the
// stores of this package recover the panic in the goroutine that called
// Pebble and fail. In Pebble's background goroutines, and in a database of
// another package, the panic ends the process, as Pebble intends.
type PebbleLogger struct {
	L         *slog.Logger
	Component string
}

func (p PebbleLogger) Infof(format string, args ...any) {
	if p.L.Enabled(context.Background(), slog.LevelDebug) {
		p.L.Debug(fmt.Sprintf(format, args...), "component", p.Component)
	}
}

func (p PebbleLogger) Errorf(format string, args ...any) {
	p.L.Error(fmt.Sprintf(format, args...), "component", p.Component)
}

func (p PebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.L.Error(msg, "component", p.Component, "fatal", true)
	panic(pebbleFatal{msg: msg})
}

// mkdirAllSynced creates dir and any missing parents, and syncs the parent
// of each directory it created: until then a crash may lose the new
// directory's entry, and with it everything synced inside it.
func mkdirAllSynced(fs vfs.FS, dir string, perm os.FileMode) error {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := fs.Stat(d); err == nil {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := fs.MkdirAll(dir, perm); err != nil {
		return err
	}
	for _, d := range created {
		parent := filepath.Dir(d)
		if parent == d {
			continue
		}
		f, err := fs.OpenDir(parent)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync %s: %w", parent, err)
		}
	}
	return nil
}

// FsyncLatency is Pebble's histogram of the fsyncs of its WAL, which is
// this log's: one per StoreLogs batch. Its observations are nanoseconds
// (pebble.FsyncLatencyBuckets). It is read by the node's metrics.
func (s *Store) FsyncLatency() prometheus.Metric { return s.fsyncLatency }

// DiskBytes is the size of the log's files.
func (s *Store) DiskBytes() uint64 {
	return s.diskBytes(s.db)
}
