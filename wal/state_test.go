package wal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// stateModel is what a state store must hold: the user keys and values of
// every batch committed so far, and which keys were set exactly once since
// they were last deleted (the only keys SingleDelete may delete).
type stateModel struct {
	kv   map[string]string
	once map[string]bool
}

func newStateModel() *stateModel {
	return &stateModel{kv: map[string]string{}, once: map[string]bool{}}
}

// stateKeySpace is how many distinct keys random batches write: small, so
// that keys are overwritten and deleted often.
const stateKeySpace = 300

// randomBatch fills b with 1 to 20 random writes, applies them to m, and
// returns b. Values are up to valueBytesMax long.
func (m *stateModel) randomBatch(rng *rand.Rand, b *StateBatch, valueBytesMax int) *StateBatch {
	for range 1 + rng.IntN(20) {
		key := fmt.Sprintf("k%04d", rng.IntN(stateKeySpace))
		_, exists := m.kv[key]
		switch r := rng.IntN(100); {
		case r < 15 && m.once[key]:
			if err := b.SingleDelete([]byte(key)); err != nil {
				panic(err)
			}
			delete(m.kv, key)
			delete(m.once, key)
		case r < 35 && exists:
			if err := b.Delete([]byte(key)); err != nil {
				panic(err)
			}
			delete(m.kv, key)
			delete(m.once, key)
		default:
			// A random word repeated: values differ, and cost little to make.
			word := binary.LittleEndian.AppendUint64(nil, rng.Uint64())
			size := 1 + rng.IntN(valueBytesMax)
			v := bytes.Repeat(word, size/8+1)[:size]
			if err := b.Set([]byte(key), v); err != nil {
				panic(err)
			}
			m.kv[key] = string(v)
			m.once[key] = !exists
		}
	}
	return b
}

// digest is StateStore.Digest of the model, computed from the definition:
// SHA-256 over uvarint key length, key, uvarint value length, value, in key
// order.
func (m *stateModel) digest() [32]byte { return digestOf(m.kv) }

func digestOf(kv map[string]string) [32]byte {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		v := kv[k]
		h.Write(binary.AppendUvarint(nil, uint64(len(k))))
		h.Write([]byte(k))
		h.Write(binary.AppendUvarint(nil, uint64(len(v))))
		h.Write([]byte(v))
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func openStateOn(t testing.TB, fs vfs.FS, opts Options) *StateStore {
	t.Helper()
	return openOn(t, OpenState, fs, opts)
}

// stateContent returns every user key and value in the store.
func stateContent(t testing.TB, s *StateStore) map[string]string {
	t.Helper()
	it, err := s.NewIter(stateUserKeysFrom, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertState checks that s holds exactly want at applied, by iteration,
// point reads and Digest.
func assertState(t testing.TB, s *StateStore, applied uint64, want map[string]string) {
	t.Helper()
	if got := s.Applied(); got != applied {
		t.Fatalf("applied = %d, want %d", got, applied)
	}
	got := stateContent(t, s)
	if !maps.Equal(got, want) {
		var diff []string
		for k := range want {
			if g, ok := got[k]; !ok {
				diff = append(diff, "missing "+k)
			} else if g != want[k] {
				diff = append(diff, "changed "+k)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				diff = append(diff, "extra "+k)
			}
		}
		slices.Sort(diff)
		t.Fatalf("content at applied %d: %d keys, want %d; first differences: %v", applied, len(got), len(want), diff[:min(len(diff), 8)])
	}
	// Point reads of a few keys (the iteration compared them all; a Get
	// is costly under the race detector, which turns on Pebble's
	// invariant checks).
	checked := 0
	for k, v := range want {
		if checked++; checked > 8 {
			break
		}
		found, err := s.Get([]byte(k), func(got []byte) {
			if string(got) != v {
				t.Errorf("get %s: value differs", k)
			}
		})
		if err != nil || !found {
			t.Fatalf("get %s: found %v, %v", k, found, err)
		}
	}
	sum, at, err := s.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if at != applied || sum != digestOf(want) {
		t.Fatalf("digest at %d differs from the content's (at %d)", at, applied)
	}
	restoring, err := s.Restoring()
	if err != nil || restoring {
		t.Fatalf("restoring = %v, %v; want false", restoring, err)
	}
}

func TestStateStoreRoundTrip(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openStateOn(t, fs, Options{})
	if s.Applied() != 0 {
		t.Fatalf("applied of a new store = %d", s.Applied())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := newStateModel()
	var applied uint64
	for range 50 {
		applied += 1 + uint64(rng.IntN(3))
		if err := s.Commit(m.randomBatch(rng, s.NewBatch(), 100), applied); err != nil {
			t.Fatal(err)
		}
	}
	assertState(t, s, applied, m.kv)

	// Bounded iteration, and a miss.
	it, err := s.NewIter([]byte("k0100"), []byte("k0200"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for ok := it.First(); ok; ok = it.Next() {
		if k := string(it.Key()); k < "k0100" || k >= "k0200" || m.kv[k] != string(it.Value()) {
			t.Fatalf("bounded iterator at %q", k)
		}
		n++
	}
	it.Close()
	want := 0
	for k := range m.kv {
		if k >= "k0100" && k < "k0200" {
			want++
		}
	}
	if n != want {
		t.Fatalf("bounded iterator saw %d keys, want %d", n, want)
	}
	if found, err := s.Get([]byte("absent"), func([]byte) { t.Fatal("called for a missing key") }); found || err != nil {
		t.Fatalf("get of a missing key: %v, %v", found, err)
	}

	// A snapshot keeps its view and its applied index while commits go on.
	sn, err := s.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	before := maps.Clone(m.kv)
	if err := s.Commit(m.randomBatch(rng, s.NewBatch(), 100), applied+1); err != nil {
		t.Fatal(err)
	}
	applied++
	if sn.Applied() != applied-1 {
		t.Fatalf("snapshot applied = %d, want %d", sn.Applied(), applied-1)
	}
	var dump bytes.Buffer
	size, err := sn.DumpSize()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sn.WriteDump(&dump); err != nil || n != size || int64(dump.Len()) != size {
		t.Fatalf("dump: %d bytes written, %d in buffer, DumpSize %d, err %v", n, dump.Len(), size, err)
	}
	sn.Close()
	if !bytes.Equal(dump.Bytes(), encodeDump(applied-1, before)) {
		t.Fatal("dump differs from the documented format")
	}

	// Reopen after Sync: everything is there.
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get([]byte("k0001"), func([]byte) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v, want ErrClosed", err)
	}
	s = openStateOn(t, fs, Options{})
	assertState(t, s, applied, m.kv)
	// And a crash right after Sync loses nothing either.
	c := openStateOn(t, fs.CrashClone(vfs.CrashCloneCfg{}), Options{})
	assertState(t, c, applied, m.kv)
}

// encodeDump is the dump format as package wal's documentation draws it,
// written independently of WriteDump.
func encodeDump(applied uint64, kv map[string]string) []byte {
	var b []byte
	b = append(b, "PAYSTATE"...)
	b = append(b, 1)
	b = binary.BigEndian.AppendUint64(b, applied)
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(kv[k])))
		b = append(b, kv[k]...)
	}
	b = append(b, 0)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestStateStoreCrashReopensToCommittedPrefix crashes the store at random
// moments — after commits that were not synced, right after a Sync, while a
// Sync or a memtable flush runs — and checks that the clone opens to exactly
// what was committed up to some batch: never half a batch, never content
// that disagrees with its applied index, and never less than the last Sync.
func TestStateStoreCrashReopensToCommittedPrefix(t *testing.T) {
	t.Parallel()
	for _, tt := range []crashCase{
		{"synced data only", 0, 0},
		{"all unsynced data", 0, 100},
		{"memtable flushes, synced data only", 64 << 10, 0},
		{"memtable flushes, half the unsynced data", 64 << 10, 50},
		{"memtable flushes, all unsynced data", 64 << 10, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(11, uint64(tt.unsyncedPerCent)+tt.memTableBytes))
			fs := vfs.NewCrashableMem()
			opts := Options{MemTableBytes: tt.memTableBytes}
			s := openStateOn(t, fs, opts)
			m := newStateModel()
			history := map[uint64]map[string]string{0: {}} // applied index → content
			var applied, synced uint64
			var lostSome, lostAll int // crashes that lost some or all commits since the last Sync
			for step := range 240 {
				applied += 1 + uint64(rng.IntN(3))
				if err := s.Commit(m.randomBatch(rng, s.NewBatch(), 2000), applied); err != nil {
					t.Fatal(err)
				}
				history[applied] = maps.Clone(m.kv)
				if step%12 != 11 {
					continue
				}
				var crashed *vfs.MemFS
				cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: tt.unsyncedPerCent, RNG: rng}
				how := rng.IntN(3)
				switch how {
				case 0: // commits since the last Sync are not on disk
					crashed = fs.CrashClone(cfg)
				case 1: // right after a Sync
					if err := s.Sync(); err != nil {
						t.Fatal(err)
					}
					synced = applied
					crashed = fs.CrashClone(cfg)
				case 2: // while a Sync runs
					var wg sync.WaitGroup
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := s.Sync(); err != nil {
							t.Error(err)
						}
					}()
					crashed = fs.CrashClone(cfg)
					wg.Wait()
				}
				c, err := OpenState(testDir, Options{FS: crashed, MemTableBytes: tt.memTableBytes})
				if err != nil {
					t.Fatalf("step %d: open after crash: %v", step, err)
				}
				at := c.Applied()
				switch {
				case at < applied && at > synced:
					lostSome++ // came back to a memtable flush of its own
				case at < applied:
					lostAll++
				}
				want, ok := history[at]
				if !ok || at < synced || at > applied {
					c.Close()
					t.Fatalf("step %d: applied after crash = %d: not a committed index in [%d, %d]", step, at, synced, applied)
				}
				assertState(t, c, at, want)
				// The crashed store goes on from there.
				cm := &stateModel{kv: maps.Clone(want), once: map[string]bool{}}
				if err := c.Commit(cm.randomBatch(rng, c.NewBatch(), 100), at+1); err != nil {
					t.Fatal(err)
				}
				assertState(t, c, at+1, cm.kv)
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				if how == 2 { // the Sync has returned since: it is durable now
					synced = applied
				}
			}
			t.Logf("crashes that lost commits since the last sync: some %d, all %d; flushes %d", lostSome, lostAll, s.db.Metrics().Flush.Count)
			if lostSome+lostAll == 0 {
				t.Error("no crash lost a commit: the test did not crash where it means to")
			}
		})
	}
}

// randomState fills a new store with random batches up to applied and
// returns it with its content.
func randomState(t testing.TB, seed uint64, batches int, applied uint64) (*StateStore, *vfs.MemFS, map[string]string) {
	t.Helper()
	fs := vfs.NewCrashableMem()
	s := openStateOn(t, fs, Options{})
	rng := rand.New(rand.NewPCG(seed, 0))
	m := newStateModel()
	for i := range batches {
		if err := s.Commit(m.randomBatch(rng, s.NewBatch(), 1000), applied-uint64(batches-1-i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return s, fs, m.kv
}

// dumpOf returns a dump of s as it is now.
func dumpOf(t testing.TB, s *StateStore) []byte {
	t.Helper()
	sn, err := s.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	var buf bytes.Buffer
	if _, err := sn.WriteDump(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Restore from another store's dump gives that store's digest, replaces
// every key the target had, and is durable once it returns.
func TestStateStoreRestoreFromDump(t *testing.T) {
	src, _, srcKV := randomState(t, 1, 60, 500)
	dump := dumpOf(t, src)
	// The source moves on; the dump does not.
	if err := src.Commit(newStateModel().randomBatch(rand.New(rand.NewPCG(9, 9)), src.NewBatch(), 10), 501); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name   string
		target func(t *testing.T) (*StateStore, *vfs.MemFS)
	}{
		{"into an empty store", func(t *testing.T) (*StateStore, *vfs.MemFS) {
			fs := vfs.NewCrashableMem()
			return openStateOn(t, fs, Options{}), fs
		}},
		{"over other content", func(t *testing.T) (*StateStore, *vfs.MemFS) {
			s, fs, _ := randomState(t, 2, 40, 90) // same key space, other values
			return s, fs
		}},
		{"over other content not yet synced", func(t *testing.T) (*StateStore, *vfs.MemFS) {
			s, fs, _ := randomState(t, 3, 40, 90)
			if err := s.Commit(newStateModel().randomBatch(rand.New(rand.NewPCG(4, 4)), s.NewBatch(), 100), 91); err != nil {
				t.Fatal(err)
			}
			return s, fs
		}},
		{"over keys at the top of the key space", func(t *testing.T) (*StateStore, *vfs.MemFS) {
			s, fs, _ := randomState(t, 6, 10, 90)
			b := s.NewBatch()
			for _, k := range []string{"\x01", "\xfe", "\xff", "\xff\xff\xff\xff", "\xff\xff\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x01"} {
				if err := b.Set([]byte(k), []byte("caller's key")); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Commit(b, 91); err != nil {
				t.Fatal(err)
			}
			return s, fs
		}},
		{"ahead of the dump", func(t *testing.T) (*StateStore, *vfs.MemFS) {
			s, fs, _ := randomState(t, 5, 10, 900)
			return s, fs
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, fs := tt.target(t)
			applied, err := s.Restore(bytes.NewReader(dump))
			if err != nil || applied != 500 {
				t.Fatalf("restore: %d, %v", applied, err)
			}
			assertState(t, s, 500, srcKV)
			c := openStateOn(t, fs.CrashClone(vfs.CrashCloneCfg{}), Options{})
			assertState(t, c, 500, srcKV)
		})
	}
}

// crashingReader hands Restore its dump in small pieces and takes a crash
// clone of fs when Restore asks for piece number at (counting from 1).
type crashingReader struct {
	r       io.Reader
	fs      *vfs.MemFS
	at, n   int
	crashed *vfs.MemFS
}

const crashingReaderChunkBytes = 512

func (c *crashingReader) Read(p []byte) (int, error) {
	c.n++
	if c.n == c.at {
		c.crashed = c.fs.CrashClone(vfs.CrashCloneCfg{})
	}
	return c.r.Read(p[:min(len(p), crashingReaderChunkBytes)])
}

// A crash while Restore reads its dump leaves a store that says it is
// restoring (or, before Restore began to change it, the old store intact);
// restoring again from the same dump then gives the dump's state.
func TestStateStoreCrashDuringRestore(t *testing.T) {
	t.Parallel()
	src, _, srcKV := randomState(t, 21, 60, 700)
	dump := dumpOf(t, src)
	pieces := (len(dump) + crashingReaderChunkBytes - 1) / crashingReaderChunkBytes
	if pieces < 10 {
		t.Fatalf("test bug: a dump of %d bytes is too small to crash in", len(dump))
	}
	for _, at := range []int{1, 2, 3, pieces / 2, pieces} {
		t.Run(fmt.Sprint("piece=", at), func(t *testing.T) {
			t.Parallel()
			s, fs, oldKV := randomState(t, 22, 30, 40)
			cr := &crashingReader{r: bytes.NewReader(dump), fs: fs, at: at}
			if _, err := s.Restore(cr); err != nil {
				t.Fatal(err)
			}
			if cr.crashed == nil {
				t.Fatalf("Restore read %d pieces, never piece %d", cr.n, at)
			}
			assertState(t, s, 700, srcKV)

			c, err := OpenState(testDir, Options{FS: cr.crashed})
			if err != nil {
				t.Fatalf("open after a crash during restore: %v", err)
			}
			defer c.Close()
			restoring, err := c.Restoring()
			if err != nil {
				t.Fatal(err)
			}
			if at == 1 { // the header is read before anything is written
				if restoring {
					t.Fatal("restoring before the restore changed anything")
				}
				assertState(t, c, 40, oldKV)
			} else if !restoring {
				t.Fatalf("a crash at piece %d of %d: the store does not say it is restoring (applied %d)", at, pieces, c.Applied())
			}
			// What Node.recoverState does: restore again.
			if _, err := c.Restore(bytes.NewReader(dump)); err != nil {
				t.Fatal(err)
			}
			assertState(t, c, 700, srcKV)
		})
	}
}

// Restore refuses a damaged dump. Once it has begun to replace the content
// it leaves the store marked restoring, durably, so that a node does not
// start on half a state; a dump refused at its header changes nothing.
func TestStateStoreRestoreRefusesDamagedDump(t *testing.T) {
	t.Parallel()
	src, _, srcKV := randomState(t, 31, 20, 300)
	good := dumpOf(t, src)
	const head = 8 + 1 + 8
	withCRC := func(b []byte) []byte { // b with a valid trailing checksum
		b = slices.Clone(b)
		binary.BigEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
		return b
	}
	flip := func(i int) func() []byte {
		return func() []byte {
			b := slices.Clone(good)
			b[i] ^= 0x10
			return b
		}
	}
	recordsWith := func(key, value string) []byte { // a dump of one record
		b := slices.Clone(good[:head])
		b = binary.AppendUvarint(b, uint64(len(key)))
		b = append(b, key...)
		b = binary.AppendUvarint(b, uint64(len(value)))
		b = append(b, value...)
		return withCRC(append(b, 0, 0, 0, 0, 0))
	}
	for _, tt := range []struct {
		name       string
		dump       func() []byte
		wantMarked bool // whether the content was already replaced
		wantErr    error
	}{
		{"empty", func() []byte { return nil }, false, nil},
		{"cut in the header", func() []byte { return good[:head-3] }, false, nil},
		{"not a dump", flip(2), false, nil},
		{"unknown version", func() []byte {
			b := slices.Clone(good)
			b[8] = 2
			return withCRC(b)
		}, false, nil},
		{"cut after the header", func() []byte { return good[:head] }, true, nil},
		{"cut in a record", func() []byte { return good[:len(good)/2] }, true, nil},
		{"cut before the end mark", func() []byte { return good[:len(good)-5] }, true, nil},
		{"cut in the checksum", func() []byte { return good[:len(good)-2] }, true, nil},
		{"a value byte flipped", flip(len(good) / 2), true, ErrCorrupt},
		{"the applied index flipped", flip(12), true, ErrCorrupt},
		{"the checksum flipped", flip(len(good) - 1), true, ErrCorrupt},
		{"a reserved key", func() []byte { return recordsWith("\x00applied", "\x00\x00\x00\x00\x00\x00\x00\x09") }, true, nil},
		{"a key longer than the limit", func() []byte {
			b := binary.AppendUvarint(slices.Clone(good[:head]), dumpRecordBytesMax+1)
			return withCRC(append(b, 0, 0, 0, 0))
		}, true, nil},
		{"a value longer than the limit", func() []byte {
			b := binary.AppendUvarint(slices.Clone(good[:head]), 1)
			b = append(b, 'k')
			b = binary.AppendUvarint(b, dumpRecordBytesMax+1)
			return withCRC(append(b, 0, 0, 0, 0))
		}, true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, fs, oldKV := randomState(t, 32, 20, 50)
			_, err := s.Restore(bytes.NewReader(tt.dump()))
			if err == nil {
				t.Fatal("restore of a damaged dump: no error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("restore: %v, want %v", err, tt.wantErr)
			}
			if s.Applied() != 50 {
				t.Fatalf("applied after a refused restore = %d, want 50", s.Applied())
			}
			check := func(s *StateStore, when string) {
				t.Helper()
				restoring, err := s.Restoring()
				if err != nil {
					t.Fatal(err)
				}
				if restoring != tt.wantMarked {
					t.Fatalf("%s: restoring = %v, want %v (err was %v)", when, restoring, tt.wantMarked, err)
				}
				if !tt.wantMarked {
					assertState(t, s, 50, oldKV)
				}
			}
			check(s, "after the refused restore")
			// The marker is on disk: a crash now, or a restart, keeps it.
			c := openStateOn(t, fs.CrashClone(vfs.CrashCloneCfg{}), Options{})
			check(c, "after a crash")
			// A good dump then clears it.
			if _, err := c.Restore(bytes.NewReader(good)); err != nil {
				t.Fatal(err)
			}
			assertState(t, c, 300, srcKV)
		})
	}
}
