package wal

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	pebblewal "github.com/cockroachdb/pebble/v2/wal"
)

// batchesInWAL is how many two-entry StoreLogs calls the WAL tests make: with
// records of about 200 bytes that is three 32 KiB blocks.
const batchesInWAL = 500

// writeWAL stores batchesInWAL batches of two entries (indexes 1 to
// 2*batchesInWAL) and returns a crash clone taken after the last one returned:
// everything is in Pebble's WAL, nothing in an sstable.
func writeWAL(t *testing.T) *vfs.MemFS {
	t.Helper()
	s, fs := openMem(t)
	for i := uint64(1); i <= 2*batchesInWAL; i += 2 {
		mustStore(t, s, entries(i, i+1))
	}
	return fs.CrashClone(vfs.CrashCloneCfg{})
}

// lastWAL returns the path of the newest Pebble WAL in dir.
func lastWAL(t *testing.T, fs vfs.FS, dir string) string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, name := range slices.Backward(names) {
		if _, _, ok := pebblewal.ParseLogFilename(name); ok {
			return fs.PathJoin(dir, name)
		}
	}
	t.Fatalf("no WAL in %s: %v", dir, names)
	return ""
}

// walChunks returns the offsets and lengths of the valid chunks at the start
// of the WAL or MANIFEST at path, in order.
func walChunks(t *testing.T, fs vfs.FS, path string) [][2]int64 {
	t.Helper()
	num, _, _ := pebblewal.ParseLogFilename(fs.PathBase(path))
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := chunkScanner{f: f, logNum: uint32(num), manifest: strings.HasPrefix(fs.PathBase(path), "MANIFEST-")}
	var chunks [][2]int64
	for i := int64(0); ; i++ {
		n, err := s.readBlock(i)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < n; {
			length, _, _, reason := s.chunkAt(off, n)
			if reason != "" {
				break
			}
			chunks = append(chunks, [2]int64{i*chunkBlockLen + int64(off), int64(length)})
			off += length
		}
		if n < chunkBlockLen {
			return chunks
		}
	}
}

// xorByte flips bits of the byte at off in the file at path.
func xorByte(t *testing.T, fs vfs.FS, path string, off int64, mask byte) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// truncate cuts the file at path to size bytes; MemFS has no truncate, so it
// rewrites the file.
func truncate(t *testing.T, fs vfs.FS, path string, size int64) {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	w, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// countLogKeys opens dir with plain Pebble, no check of ours, and counts the
// log entries it replays.
func countLogKeys(t *testing.T, fs vfs.FS) int {
	t.Helper()
	db, err := pebble.Open(testDir, &pebble.Options{FS: fs, Logger: PebbleLogger{L: discardLogger()}})
	if err != nil {
		t.Fatalf("pebble alone: %v", err)
	}
	defer db.Close()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixLog}, UpperBound: logKeyEnd})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		n++
	}
	return n
}

// TestPebbleAloneDropsWritesAfterCorruptWALRecord shows why the check
// exists: one flipped byte early in a WAL, and plain Pebble opens without an
// error and without almost everything written after it.
func TestPebbleAloneDropsWritesAfterCorruptWALRecord(t *testing.T) {
	fs := writeWAL(t)
	path := lastWAL(t, fs, testDir)
	chunks := walChunks(t, fs, path)
	xorByte(t, fs, path, chunks[10][0]+chunks[10][1]/2, 0x10)
	if n := countLogKeys(t, fs); n >= 2*batchesInWAL/10 {
		t.Fatalf("pebble alone replayed %d entries; expected it to stop at the damaged record", n)
	}
}

func TestOpenRefusesCorruptWALRecord(t *testing.T) {
	tests := []struct {
		name string
		// at returns the offset and bit mask of the damage, given the WAL's
		// chunks.
		at func(chunks [][2]int64) (int64, byte)
	}{
		{"payload of the first record", func(c [][2]int64) (int64, byte) { return c[0][0] + c[0][1] - 1, 0x01 }},
		{"payload in the middle", func(c [][2]int64) (int64, byte) {
			m := c[len(c)/2]
			return m[0] + m[1]/2, 0x80
		}},
		{"checksum", func(c [][2]int64) (int64, byte) { return c[20][0], 0x04 }},
		{"length", func(c [][2]int64) (int64, byte) { return c[20][0] + 4, 0x01 }},
		{"type", func(c [][2]int64) (int64, byte) { return c[20][0] + 6, 0x10 }},
		// WAL 2 with its log number's low bit flipped reads as 3: Pebble takes
		// that for the trailer of a cleanly closed WAL and stops without even
		// a checksum check.
		{"log number made into an eof trailer", func(c [][2]int64) (int64, byte) { return c[20][0] + 7, 0x01 }},
		{"second to last record", func(c [][2]int64) (int64, byte) {
			p := c[len(c)-2]
			return p[0] + p[1] - 1, 0x01
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := writeWAL(t)
			path := lastWAL(t, fs, testDir)
			if !strings.HasSuffix(path, "000002.log") {
				t.Fatalf("WAL is %s; the log-number case assumes 000002.log", path)
			}
			off, mask := tt.at(walChunks(t, fs, path))
			xorByte(t, fs, path, off, mask)
			_, err := Open(testDir, Options{FS: fs})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestOpenAcceptsTornTail cuts or zeroes the WAL inside its last record, as a
// crash while that record was being written would: Open succeeds and every
// earlier record is intact.
func TestOpenAcceptsTornTail(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, fs vfs.FS, path string, last [2]int64)
	}{
		{"cut inside the header", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			truncate(t, fs, path, last[0]+5)
		}},
		{"cut inside the payload", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			truncate(t, fs, path, last[0]+last[1]/2)
		}},
		{"cut one byte short", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			truncate(t, fs, path, last[0]+last[1]-1)
		}},
		{"zeroed", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			zero(t, fs, path, last[0], last[1])
		}},
		// A limit of the check: damage in the last record of a WAL that was
		// not closed looks just like a torn write, and is accepted.
		{"damage in the last record", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			xorByte(t, fs, path, last[0]+last[1]-1, 0x01)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := writeWAL(t)
			path := lastWAL(t, fs, testDir)
			chunks := walChunks(t, fs, path)
			tt.damage(t, fs, path, chunks[len(chunks)-1])
			s := mustOpen(t, fs, Options{})
			last := uint64(2*batchesInWAL - 2) // the last batch is lost, whole
			assertBounds(t, s, 1, last)
			assertEntries(t, s, 1, last)
		})
	}
}

// zero overwrites n bytes at off with zeroes.
func zero(t *testing.T, fs vfs.FS, path string, off, n int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, n), off); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesDamageBeforeEOFTrailer damages the last record of a WAL that
// was closed cleanly: the EOF trailer after it proves the record was written
// whole, so this is not a torn tail.
func TestOpenRefusesDamageBeforeEOFTrailer(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, fs vfs.FS, path string, last [2]int64)
	}{
		// The trailer sits where the damaged chunk's header says it ends; the
		// stale bytes after it, as in a recycled file, hide the file's end.
		{"payload, stale tail", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			xorByte(t, fs, path, last[0]+last[1]-1, 0x01)
			appendBytes(t, fs, path, bytes.Repeat([]byte{0xa5}, 100))
		}},
		// The length is damaged, so only the file's last 11 bytes show the
		// trailer.
		{"length", func(t *testing.T, fs vfs.FS, path string, last [2]int64) {
			xorByte(t, fs, path, last[0]+4, 0x02)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, fs := openMem(t)
			mustStore(t, s, entries(1, 10))
			if err := s.Close(); err != nil { // Close does not flush: the entries stay in the WAL
				t.Fatal(err)
			}
			path := lastWAL(t, fs, testDir)
			chunks := walChunks(t, fs, path)
			tt.damage(t, fs, path, chunks[len(chunks)-1])
			if _, err := Open(testDir, Options{FS: fs}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "eof trailer") {
				t.Fatalf("open: err = %v, want ErrCorrupt citing the eof trailer", err)
			}
		})
	}
}

// appendBytes appends b to the file at path.
func appendBytes(t *testing.T, fs vfs.FS, path string, b []byte) {
	t.Helper()
	info, err := fs.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, info.Size()); err != nil {
		t.Fatal(err)
	}
}

// TestWALCheckWithRecycling uses a small memtable so that Pebble rotates,
// flushes and recycles WAL files, whose stale tails hold other logs' chunks.
// Crashes at many points must all reopen (no false alarm), and damage in a
// recycled file's live part must still be refused.
func TestWALCheckWithRecycling(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	opts := Options{MemTableBytes: 64 << 10}
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, opts)
	recycled := false
	next := uint64(1)
	for round := range 40 {
		for range 30 + rng.IntN(30) {
			mustStore(t, s, entries(next, next+2))
			next += 3
		}
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rng})
		damaged := fs.CrashClone(vfs.CrashCloneCfg{})
		path := lastWAL(t, damaged, testDir)
		info, err := damaged.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		chunks := walChunks(t, damaged, path)
		end := chunks[len(chunks)-1][0] + chunks[len(chunks)-1][1]
		if info.Size() > end+chunkBlockLen {
			recycled = true // stale data well past the live chunks
		}

		c, err := Open(testDir, Options{FS: crashed, MemTableBytes: opts.MemTableBytes})
		if err != nil {
			t.Fatalf("round %d: open after crash: %v", round, err)
		}
		assertBounds(t, c, 1, next-1)
		assertEntries(t, c, max(1, next-100), next-1)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}

		if len(chunks) > 3 {
			xorByte(t, damaged, path, chunks[1][0]+chunks[1][1]/2, 0x20)
			if _, err := Open(testDir, Options{FS: damaged, MemTableBytes: opts.MemTableBytes}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("round %d: open after damage: err = %v, want ErrCorrupt", round, err)
			}
		}
	}
	if !recycled {
		t.Fatal("no crash clone had a recycled WAL with a stale tail; the test lost its point")
	}
}

// TestOpenRefusesCorruptManifestRecord: Pebble reads its MANIFEST the way it
// reads a WAL, stopping quietly at a damaged record, which would forget the
// sstables recorded after it.
func TestOpenRefusesCorruptManifestRecord(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := Options{FS: fs, MemTableBytes: 64 << 10}
	s := mustOpen(t, fs, opts)
	for i := uint64(1); i <= 3000; i += 10 {
		mustStore(t, s, entries(i, i+9)) // enough for several flushes
	}
	mustClose(t, s)
	path := lastFileIn(t, fs, func(name string) bool { return strings.HasPrefix(name, "MANIFEST-") })
	chunks := walChunks(t, fs, path)
	if len(chunks) < 3 {
		t.Fatalf("%s has %d records; want a few to damage one in the middle", path, len(chunks))
	}
	c := chunks[len(chunks)/2]
	xorByte(t, fs, path, c[0]+c[1]-1, 0x40)
	if _, err := Open(testDir, opts); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open: err = %v, want ErrCorrupt", err)
	}
	// Plain Pebble opens, forgets the sstables recorded after the damage,
	// and deletes them as unreferenced.
	if n := countLogKeys(t, fs); n >= 3000 {
		t.Fatalf("pebble alone replayed all %d entries; expected it to lose some", n)
	}
}

// TestWALCheckOnDisk runs the check against real files: a clean Close leaves
// the entries in the WAL (Pebble does not flush on Close).
func TestWALCheckOnDisk(t *testing.T) {
	write := func(t *testing.T) (dir, path string) {
		dir = filepath.Join(t.TempDir(), "db")
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := uint64(1); i <= 200; i += 2 {
			mustStore(t, s, entries(i, i+1))
		}
		mustClose(t, s)
		return dir, lastWAL(t, vfs.Default, dir)
	}
	t.Run("damage in the middle", func(t *testing.T) {
		dir, path := write(t)
		chunks := walChunks(t, vfs.Default, path)
		xorByte(t, vfs.Default, path, chunks[50][0]+30, 0x02)
		if _, err := Open(dir, Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("open: err = %v, want ErrCorrupt", err)
		}
	})
	t.Run("torn tail", func(t *testing.T) {
		dir, path := write(t)
		chunks := walChunks(t, vfs.Default, path)
		last := chunks[len(chunks)-1]
		if err := os.Truncate(path, last[0]+last[1]/2); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer s.Close()
		assertBounds(t, s, 1, 198)
		assertEntries(t, s, 1, 198)
	})
}
