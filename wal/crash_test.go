package wal

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	hraft "github.com/hashicorp/raft"
)

// crashCase is a crash test's setting: the memtable's size (0: the
// default; a small one flushes often) and the share of the data written
// but not synced that a crash keeps.
type crashCase struct {
	name            string
	memTableBytes   uint64
	unsyncedPerCent int
}

// TestCrashKeepsStoredEntries crashes after every few calls, keeping a random
// share of the unsynced data, and checks that the clone opens with exactly
// what the calls that returned had stored.
func TestCrashKeepsStoredEntries(t *testing.T) {
	for _, tt := range []crashCase{
		{"synced data only", 0, 0},
		{"half the unsynced data", 0, 50},
		{"all unsynced data", 0, 100},
		{"flushes and recycled wals", 64 << 10, 50},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tt.unsyncedPerCent)))
			fs := vfs.NewCrashableMem()
			opts := Options{MemTableBytes: tt.memTableBytes}
			s := mustOpen(t, fs, opts)
			first, last := uint64(0), uint64(0)
			var term uint64
			for step := range 300 {
				switch r := rng.IntN(10); {
				case r < 7:
					n := 1 + uint64(rng.IntN(8))
					mustStore(t, s, entries(last+1, last+n))
					if first == 0 {
						first = 1
					}
					last += n
				case r < 8 && last > first+10:
					upTo := first + uint64(rng.IntN(int(last-first)/2))
					if err := s.DeleteRange(first, upTo); err != nil {
						t.Fatal(err)
					}
					first = upTo + 1
				default:
					term++
					if err := s.SetUint64([]byte("CurrentTerm"), term); err != nil {
						t.Fatal(err)
					}
				}
				if step%25 != 24 {
					continue
				}
				crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: tt.unsyncedPerCent, RNG: rng})
				c, err := Open(testDir, Options{FS: crashed, MemTableBytes: tt.memTableBytes})
				if err != nil {
					t.Fatalf("step %d: open after crash: %v", step, err)
				}
				assertBounds(t, c, first, last)
				assertEntries(t, c, first, last)
				if term > 0 {
					if got, err := c.GetUint64([]byte("CurrentTerm")); err != nil || got != term {
						t.Fatalf("step %d: current term = %d, %v; want %d", step, got, err, term)
					}
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// rewrite opens the closed store's directory with plain Pebble and applies
// change to it, to plant damage our records must catch though Pebble's own
// checksums are fine.
func rewrite(t *testing.T, fs vfs.FS, change func(db *pebble.DB) error) {
	t.Helper()
	db, err := pebble.Open(testDir, &pebble.Options{FS: fs, Logger: PebbleLogger{L: discardLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := change(db); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// flip is a change that flips one bit of byte i of the value under key.
func flip(key []byte, i int) func(*pebble.DB) error {
	return func(db *pebble.DB) error {
		v, err := flipped(db, key, i)
		if err != nil {
			return err
		}
		return db.Set(key, v, pebble.Sync)
	}
}

// flipped returns the value under key with one bit of byte i flipped.
func flipped(db *pebble.DB, key []byte, i int) ([]byte, error) {
	v, closer, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	out := append([]byte(nil), v...)
	out[i%len(out)] ^= 0x08
	return out, nil
}

func TestOpenRefusesDamagedRecords(t *testing.T) {
	tests := []struct {
		name   string
		change func(db *pebble.DB) error
		want   string
	}{
		{"log data", flip(logKey(5), logHeaderLen+3), "log 5: record: checksum"},
		{"log version byte", flip(logKey(5), 0), "unknown format version"},
		{"log checksum", flip(logKey(1), 2), "log 1: record: checksum"},
		{"log cut short", func(db *pebble.DB) error {
			v, closer, err := db.Get(logKey(10))
			if err != nil {
				return err
			}
			short := append([]byte(nil), v[:len(v)-1]...)
			closer.Close()
			return db.Set(logKey(10), short, pebble.Sync)
		}, "log 10: record"},
		{"record under the wrong index", func(db *pebble.DB) error {
			v, err := appendLogRecord(nil, entry(6))
			if err != nil {
				return err
			}
			return db.Set(logKey(5), v, pebble.Sync)
		}, "log 5: record holds index 6"},
		{"missing entry", func(db *pebble.DB) error {
			return db.Delete(logKey(5), pebble.Sync)
		}, "not contiguous: 6 follows 4"},
		{"malformed log key", func(db *pebble.DB) error {
			return db.Set([]byte("l1234"), []byte{1}, pebble.Sync)
		}, "malformed log key"},
		{"stable value", flip(stableKey([]byte("CurrentTerm")), stableHeaderLen+1), `stable key "CurrentTerm": record: checksum`},
		{"stable record under the wrong key", func(db *pebble.DB) error {
			v, err := appendStableRecord(nil, []byte("LastVoteTerm"), []byte{0, 0, 0, 0, 0, 0, 0, 1})
			if err != nil {
				return err
			}
			return db.Set(stableKey([]byte("CurrentTerm")), v, pebble.Sync)
		}, `record holds key "LastVoteTerm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			s := mustOpen(t, fs, Options{})
			mustStore(t, s, entries(1, 10))
			if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
				t.Fatal(err)
			}
			mustClose(t, s)
			rewrite(t, fs, tt.change)
			_, err := Open(testDir, Options{FS: fs})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("open: err = %v, want ErrCorrupt mentioning %q", err, tt.want)
			}
		})
	}
}

// TestOpenRefusesDamagedSSTable flips a byte inside an sstable: Pebble's
// block checksum catches it while Open reads every record, and Open returns
// ErrCorrupt.
func TestOpenRefusesDamagedSSTable(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, Options{})
	mustStore(t, s, entries(1, 2000))
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, s)
	sst := lastFileIn(t, fs, func(name string) bool { return strings.HasSuffix(name, ".sst") })
	xorByte(t, fs, sst, 1000, 0x01) // inside the first data block
	if _, err := Open(testDir, Options{FS: fs}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open: err = %v, want ErrCorrupt", err)
	}
}

// TestDamageFoundAfterOpenFailsStore plants damage under a running store (as
// a bad disk block would): the read that finds it returns ErrCorrupt and every
// later call errors.
func TestDamageFoundAfterOpenFailsStore(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  []byte
		read func(s *Store) error
	}{
		{"log", logKey(3), func(s *Store) error { return s.GetLog(3, new(hraft.Log)) }},
		{"stable", stableKey([]byte("CurrentTerm")), func(s *Store) error {
			_, err := s.GetUint64([]byte("CurrentTerm"))
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openMem(t)
			mustStore(t, s, entries(1, 5))
			if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
				t.Fatal(err)
			}
			v, err := flipped(s.db, tt.key, 20)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.db.Set(tt.key, v, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if err := tt.read(s); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read of damaged record: err = %v, want ErrCorrupt", err)
			}
			assertFailed(t, s)
		})
	}
}

// assertFailed checks that every method of a failed store returns an error,
// and an error that raft cannot take for "missing".
func assertFailed(t *testing.T, s *Store) {
	t.Helper()
	calls := map[string]func() error{
		"FirstIndex":  func() error { _, err := s.FirstIndex(); return err },
		"LastIndex":   func() error { _, err := s.LastIndex(); return err },
		"GetLog":      func() error { return s.GetLog(1, new(hraft.Log)) },
		"StoreLogs":   func() error { return s.StoreLogs(entries(6, 6)) },
		"DeleteRange": func() error { return s.DeleteRange(1, 1) },
		"Set":         func() error { return s.Set([]byte("k"), []byte("v")) },
		"Get":         func() error { _, err := s.Get([]byte("absent")); return err },
		"SetUint64":   func() error { return s.SetUint64([]byte("k"), 1) },
		"GetUint64":   func() error { _, err := s.GetUint64([]byte("absent")); return err },
	}
	for name, call := range calls {
		err := call()
		if err == nil || err == hraft.ErrLogNotFound || err.Error() == "not found" {
			t.Errorf("%s on a failed store: err = %v", name, err)
		}
	}
}

// TestStoreLogsIOErrorIsAllOrNothing injects a failed write or fsync of
// Pebble's WAL: StoreLogs returns an error, the store refuses further use,
// and after a crash or a restart the batch is in the log whole or not at all.
func TestStoreLogsIOErrorIsAllOrNothing(t *testing.T) {
	// Pebble's WAL writes with Write and syncs with SyncData.
	for name, kind := range map[string]errorfs.OpKind{"write": errorfs.OpFileWrite, "sync": errorfs.OpFileSyncData} {
		t.Run(name, func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			var broken errorfs.Toggle
			broken.Injector = errorfs.InjectorFunc(func(op errorfs.Op) error {
				if op.Kind == kind && strings.HasSuffix(op.Path, ".log") {
					return errorfs.ErrInjected
				}
				return nil
			})
			s, err := Open(testDir, Options{FS: errorfs.Wrap(mem, &broken)})
			if err != nil {
				t.Fatal(err)
			}
			mustStore(t, s, entries(1, 10))
			broken.On()
			if err := s.StoreLogs(entries(11, 20)); err == nil {
				t.Fatal("store logs with a failing WAL: no error")
			}
			assertFailed(t, s)
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			crashedAll := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 1))})
			_ = s.Close() // may report the WAL error again
			broken.Off()

			for name, fs := range map[string]vfs.FS{"crash": crashed, "crash keeping unsynced data": crashedAll, "restart": mem} {
				c, err := Open(testDir, Options{FS: fs})
				if err != nil {
					t.Fatalf("%s: open: %v", name, err)
				}
				last, _ := c.LastIndex()
				if last != 10 && last != 20 {
					t.Fatalf("%s: last index = %d, want 10 or 20", name, last)
				}
				assertBounds(t, c, 1, last)
				assertEntries(t, c, 1, last)
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A store opened in directories it created survives a crash right after
// its first Sync: the new directories' entries were synced too.
func TestNewDirectoriesSurviveCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	dir := "/node/data/state"
	s, err := OpenState(dir, Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(b, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	c, err := OpenState(dir, Options{FS: fs.CrashClone(vfs.CrashCloneCfg{})})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Applied() != 7 {
		t.Fatalf("applied after a crash = %d, want the synced 7", c.Applied())
	}
	s.Close()
}
