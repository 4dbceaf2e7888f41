package wal

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	hraft "github.com/hashicorp/raft"
)

const testDir = "db"

// openMem opens a store in a fresh crashable in-memory filesystem.
func openMem(t testing.TB) (*Store, *vfs.MemFS) {
	t.Helper()
	fs := vfs.NewCrashableMem()
	return mustOpen(t, fs, Options{}), fs
}

// mustOpen opens a store in testDir on fs and closes it when the test ends.
func mustOpen(t testing.TB, fs vfs.FS, opts Options) *Store {
	t.Helper()
	return openOn(t, Open, fs, opts)
}

// openOn opens a store of either kind with open in testDir on fs, and
// closes it when the test ends.
func openOn[S interface{ Close() error }](t testing.TB, open func(dir string, opts Options) (S, error), fs vfs.FS, opts Options) S {
	t.Helper()
	opts.FS = fs
	s, err := open(testDir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", testDir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// lastFileIn returns the path of the file in testDir that match accepts,
// the last by name where several do; the test fails where none does.
func lastFileIn(t testing.TB, fs vfs.FS, match func(name string) bool) string {
	t.Helper()
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, name := range names {
		if match(name) && name > last {
			last = name
		}
	}
	if last == "" {
		t.Fatalf("no such file in %s: %v", testDir, names)
	}
	return fs.PathJoin(testDir, last)
}

// entry is a log entry whose every field depends on its index, so that a
// misplaced or half-decoded entry shows.
func entry(index uint64) *hraft.Log {
	return &hraft.Log{
		Index:      index,
		Term:       index/10 + 1,
		Type:       hraft.LogType(index % 6),
		Data:       fmt.Appendf(nil, "payload of entry %d", index),
		Extensions: fmt.Appendf(nil, "ext %d", index),
		AppendedAt: time.Unix(1_700_000_000+int64(index), int64(index)*7919).UTC(),
	}
}

// entries returns entry(i) for i in [lo, hi].
func entries(lo, hi uint64) []*hraft.Log {
	var out []*hraft.Log
	for i := lo; i <= hi; i++ {
		out = append(out, entry(i))
	}
	return out
}

func mustStore(t testing.TB, s *Store, logs []*hraft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("store logs: %v", err)
	}
}

func mustClose(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func mustDeleteRange(t testing.TB, s *Store, lo, hi uint64) {
	t.Helper()
	if err := s.DeleteRange(lo, hi); err != nil {
		t.Fatalf("delete range [%d, %d]: %v", lo, hi, err)
	}
}

// assertBounds checks FirstIndex and LastIndex.
func assertBounds(t testing.TB, s *Store, first, last uint64) {
	t.Helper()
	gotFirst, err := s.FirstIndex()
	if err != nil {
		t.Fatalf("first index: %v", err)
	}
	gotLast, err := s.LastIndex()
	if err != nil {
		t.Fatalf("last index: %v", err)
	}
	if gotFirst != first || gotLast != last {
		t.Fatalf("bounds = %d-%d, want %d-%d", gotFirst, gotLast, first, last)
	}
}

// assertEntries checks that every index in [lo, hi] holds entry(i).
func assertEntries(t testing.TB, s *Store, lo, hi uint64) {
	t.Helper()
	for i := lo; i <= hi; i++ {
		var got hraft.Log
		if err := s.GetLog(i, &got); err != nil {
			t.Fatalf("get log %d: %v", i, err)
		}
		if want := entry(i); !reflect.DeepEqual(&got, want) {
			t.Fatalf("log %d = %+v, want %+v", i, got, *want)
		}
	}
}

func assertMissing(t testing.TB, s *Store, indexes ...uint64) {
	t.Helper()
	for _, i := range indexes {
		var got hraft.Log
		if err := s.GetLog(i, &got); err != hraft.ErrLogNotFound {
			t.Fatalf("get log %d: err = %v, want ErrLogNotFound", i, err)
		}
	}
}

func TestLogStore(t *testing.T) {
	s, _ := openMem(t)
	assertBounds(t, s, 0, 0)
	assertMissing(t, s, 0, 1, math.MaxUint64)

	mustStore(t, s, entries(1, 10))
	if err := s.StoreLog(entry(11)); err != nil {
		t.Fatal(err)
	}
	assertBounds(t, s, 1, 11)
	assertEntries(t, s, 1, 11)
	assertMissing(t, s, 0, 12)

	// A snapshot compacts a prefix.
	mustDeleteRange(t, s, 1, 4)
	assertBounds(t, s, 5, 11)
	assertMissing(t, s, 1, 4)
	assertEntries(t, s, 5, 11)

	// A new leader truncates a conflicting suffix, then appends.
	mustDeleteRange(t, s, 9, 11)
	assertBounds(t, s, 5, 8)
	assertMissing(t, s, 9, 11)
	mustStore(t, s, entries(9, 12))
	assertBounds(t, s, 5, 12)
	assertEntries(t, s, 5, 12)

	// Ranges outside the log change nothing; an inverted range is a no-op.
	for _, r := range [][2]uint64{{1, 4}, {13, 20}, {12, 11}} {
		mustDeleteRange(t, s, r[0], r[1])
	}
	assertBounds(t, s, 5, 12)

	// Deleting everything, as raft does after installing a snapshot on a
	// monotonic store, empties the log; appending restarts it anywhere.
	mustDeleteRange(t, s, 5, math.MaxUint64)
	assertBounds(t, s, 0, 0)
	assertMissing(t, s, 5, 12)
	mustStore(t, s, entries(100, 102))
	assertBounds(t, s, 100, 102)
	assertEntries(t, s, 100, 102)
}

func TestStoreLogsOverwrites(t *testing.T) {
	s, _ := openMem(t)
	mustStore(t, s, entries(1, 5))
	replaced := entry(3)
	replaced.Term, replaced.Data = 99, []byte("replaced")
	mustStore(t, s, []*hraft.Log{replaced})
	assertBounds(t, s, 1, 5)
	var got hraft.Log
	if err := s.GetLog(3, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, replaced) {
		t.Fatalf("log 3 = %+v, want %+v", got, *replaced)
	}
}

func TestStoreLogsRejects(t *testing.T) {
	s, _ := openMem(t)
	if err := s.StoreLogs([]*hraft.Log{entry(1), nil}); err == nil {
		t.Fatal("nil entry: no error")
	}
	huge := &hraft.Log{Index: 2, Data: make([]byte, storeLogsBytesMax)}
	if err := s.StoreLogs([]*hraft.Log{entry(1), huge}); err == nil {
		t.Fatal("oversized batch: no error")
	}
	if err := s.StoreLogs(nil); err != nil {
		t.Fatalf("no entries: %v", err)
	}
	assertBounds(t, s, 0, 0)
}

func TestStableStore(t *testing.T) {
	s, _ := openMem(t)
	for _, key := range [][]byte{[]byte("CurrentTerm"), {}, {0, 0xff}} {
		if _, err := s.Get(key); err == nil || err.Error() != "not found" {
			t.Fatalf("get %q: err = %v, want exactly \"not found\"", key, err)
		}
		if _, err := s.GetUint64(key); err == nil || err.Error() != "not found" {
			t.Fatalf("get uint64 %q: err = %v, want exactly \"not found\"", key, err)
		}
	}

	if err := s.Set([]byte("LastVoteCand"), []byte("node-2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("empty"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), math.MaxUint64-1); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "node-2" {
		t.Fatalf("get = %q, %v", v, err)
	}
	if v, err := s.Get([]byte("empty")); err != nil || len(v) != 0 {
		t.Fatalf("get empty = %q, %v", v, err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != math.MaxUint64-1 {
		t.Fatalf("get uint64 = %d, %v", v, err)
	}
	if _, err := s.GetUint64([]byte("LastVoteCand")); err == nil {
		t.Fatal("get uint64 of a 6-byte value: no error")
	}

	// Stable keys and log entries live side by side without mixing.
	mustStore(t, s, entries(1, 3))
	assertBounds(t, s, 1, 3)
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("get uint64 = %d, %v", v, err)
	}
}

func TestGetReturnsCopies(t *testing.T) {
	s, _ := openMem(t)
	if err := s.Set([]byte("k"), []byte("value")); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	copy(v, "XXXXX")
	if v, _ := s.Get([]byte("k")); string(v) != "value" {
		t.Fatalf("get after mutating a returned value = %q", v)
	}
	mustStore(t, s, entries(1, 1))
	var l hraft.Log
	if err := s.GetLog(1, &l); err != nil {
		t.Fatal(err)
	}
	l.Data = append(l.Data, "more"...) // must not spill into Extensions
	if want := entry(1).Extensions; !bytes.Equal(l.Extensions, want) {
		t.Fatalf("extensions = %q after appending to data, want %q", l.Extensions, want)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, Options{})
	mustStore(t, s, entries(1, 50))
	mustDeleteRange(t, s, 1, 9)
	if err := s.SetUint64([]byte("CurrentTerm"), 5); err != nil {
		t.Fatal(err)
	}
	mustClose(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := s.LastIndex(); err == nil {
		t.Fatal("last index after close: no error")
	}

	s = mustOpen(t, fs, Options{})
	assertBounds(t, s, 10, 50)
	assertEntries(t, s, 10, 50)
	assertMissing(t, s, 9)
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 5 {
		t.Fatalf("current term = %d, %v", v, err)
	}
}

func TestReopenAfterFlushes(t *testing.T) {
	// A small memtable makes Pebble flush to sstables and recycle WAL files,
	// so that reopening reads from both.
	fs := vfs.NewCrashableMem()
	opts := Options{FS: fs, MemTableBytes: 256 << 10}
	s := mustOpen(t, fs, opts)
	for i := uint64(1); i <= 3000; i += 10 {
		mustStore(t, s, entries(i, i+9))
	}
	mustDeleteRange(t, s, 1, 1000)
	mustClose(t, s)
	s = mustOpen(t, fs, opts)
	assertBounds(t, s, 1001, 3000)
	assertEntries(t, s, 1001, 3000)
}

// TestDeleteRangeWithGaps: the LogStore contract allows gaps (raftbench makes
// them), and then DeleteRange finds the new bounds by seeking.
func TestDeleteRangeWithGaps(t *testing.T) {
	var logs bytes.Buffer
	s := mustOpen(t, vfs.NewCrashableMem(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	mustStore(t, s, append(append(entries(1, 3), entries(10, 12)...), entries(20, 22)...))
	if !strings.Contains(logs.String(), "leave a gap") {
		t.Fatalf("no warning about the gap in %q", logs.String())
	}
	steps := []struct {
		lo, hi      uint64
		first, last uint64
	}{
		{1, 5, 10, 22},
		{15, 30, 10, 12},
		{11, 11, 10, 12},
		{0, 10, 12, 12},
		{12, 12, 0, 0},
	}
	for _, st := range steps {
		mustDeleteRange(t, s, st.lo, st.hi)
		assertBounds(t, s, st.first, st.last)
	}
}

func TestOpenRefusesGap(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, Options{})
	mustStore(t, s, entries(1, 5))
	// The LogStore contract allows a gap; hashicorp/raft does not make one
	// with a monotonic store, and the next Open refuses it.
	mustStore(t, s, entries(8, 9))
	assertBounds(t, s, 1, 9)
	mustClose(t, s)
	_, err := Open(testDir, Options{FS: fs})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open with a gap: err = %v, want ErrCorrupt", err)
	}
}

// TestPebbleLogsGoToLogger: Pebble's messages reach Options.Logger at debug
// level, and with no Logger nothing reaches the standard logger, where
// Pebble's default logger would write.
func TestPebbleLogsGoToLogger(t *testing.T) {
	var std bytes.Buffer
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })

	var ours bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&ours, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, opts := range []Options{{Logger: logger}, {}} {
		fs := vfs.NewCrashableMem()
		opts.MemTableBytes = 64 << 10
		s := mustOpen(t, fs, opts)
		for i := uint64(1); i <= 3000; i += 10 {
			mustStore(t, s, entries(i, i+9))
		}
		mustClose(t, s)
	}
	if !strings.Contains(ours.String(), "level=DEBUG") || !strings.Contains(ours.String(), "component=pebble") {
		t.Fatalf("no pebble message at debug level in %q", ours.String())
	}
	if std.Len() > 0 {
		t.Fatalf("pebble wrote to the standard logger: %q", std.String())
	}
}

func TestOpenTwiceFails(t *testing.T) {
	_, fs := openMem(t)
	if _, err := Open(testDir, Options{FS: fs}); err == nil {
		t.Fatal("second open of a locked directory: no error")
	}
}

// TestConcurrentUse runs raft's pattern of callers at once under the race
// detector: one appender, a compactor, readers, and stable writes.
func TestConcurrentUse(t *testing.T) {
	s, _ := openMem(t)
	const appends = 200
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(1); i <= appends; i++ {
			if err := s.StoreLogs(entries(2*i-1, 2*i)); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			last, _ := s.LastIndex()
			if last > 20 {
				if err := s.DeleteRange(0, last-20); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				first, _ := s.FirstIndex()
				last, _ := s.LastIndex()
				if first == 0 {
					continue
				}
				var l hraft.Log
				// The compactor may delete it meanwhile: not found is fine.
				err := s.GetLog(first+(last-first)/2, &l)
				if err != nil && err != hraft.ErrLogNotFound {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range uint64(100) {
			if err := s.SetUint64([]byte("CurrentTerm"), i); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	last, _ := s.LastIndex()
	if last != 2*appends {
		t.Fatalf("last index = %d, want %d", last, 2*appends)
	}
	first, _ := s.FirstIndex()
	assertEntries(t, s, first, last)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
