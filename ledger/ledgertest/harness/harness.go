// Package harness is what the ledger's two test harnesses share: package
// ledger's own (harness_test.go), which reaches the kernel's internals, and
// ledgertest's, for the feature packages, which a test inside package
// ledger cannot import. It runs a ledger as the FSM does over a real state
// store (Pebble, on an in-memory file system), and knows the ledger's
// state machine only as Machine, so that it imports nothing of the ledger
// but its byte-level machinery.
package harness

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"payments/ledger/kv"
	"payments/wal"
)

// Fataler is what the harness needs of a testing.TB.
type Fataler interface {
	Helper()
	Fatal(args ...any)
}

// Machine is the ledger's state machine (ledger.State), over commands C
// with results R, as the FSM drives it.
type Machine[C, R any] interface {
	Apply(cmd C) R
	EndEntry()
	ReadThrough(r kv.Reader) (restore func())
	Flush(w kv.Writer)
	Committed()
}

// OpenStore opens an empty state store, closed when tb's test ends.
func OpenStore(tb testing.TB) *wal.StateStore {
	tb.Helper()
	store, err := wal.OpenState("/state", wal.Options{FS: vfs.NewMem()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return store
}

// Commit writes what m applied to store as the log index after *index,
// which it counts, and tells m it is committed.
func Commit[C, R any](tb Fataler, store *wal.StateStore, index *uint64, m Machine[C, R]) {
	tb.Helper()
	b := store.NewBatch()
	m.Flush(b)
	*index++
	if err := store.Commit(b, *index); err != nil {
		tb.Fatal(err)
	}
	m.Committed()
}

// ApplyBatch applies cmds to m as one log entry, not yet committed: a
// command finds what those before it in the entry wrote, not yet in the
// state store.
func ApplyBatch[C, R any](tb Fataler, store *wal.StateStore, m Machine[C, R], cmds []C) []R {
	tb.Helper()
	pr, err := store.NewPointReader()
	if err != nil {
		tb.Fatal(err)
	}
	restore := m.ReadThrough(kv.ReaderOf(pr))
	out := make([]R, len(cmds))
	for i, c := range cmds {
		out[i] = m.Apply(c)
	}
	m.EndEntry()
	restore()
	pr.Close()
	return out
}

// ApplyEntries applies each of entries to m as a log entry of its own, not
// yet committed: the FSM commits a batch of entries at once.
func ApplyEntries[C, R any](m Machine[C, R], entries [][]C) [][]R {
	out := make([][]R, len(entries))
	for i, cmds := range entries {
		for _, c := range cmds {
			out[i] = append(out[i], m.Apply(c))
		}
		m.EndEntry()
	}
	return out
}

// Dump returns store's contents (the dump a node sends a follower) with
// its applied index zeroed: two stores that hold the same dump hold the
// same ledger.
func Dump(tb Fataler, store *wal.StateStore) []byte {
	tb.Helper()
	sn, err := store.NewSnapshot()
	if err != nil {
		tb.Fatal(err)
	}
	defer sn.Close()
	var buf bytes.Buffer
	if _, err := sn.WriteDump(&buf); err != nil {
		tb.Fatal(err)
	}
	b := buf.Bytes()
	// The applied index follows the 8-byte magic and the version byte.
	clear(b[9:17])
	// The checksum covered it: recompute it over the bytes as they are.
	return Rechecksum(b)
}

// Rechecksum sets a dump's trailing CRC-32C to that of the bytes before
// it.
func Rechecksum(b []byte) []byte {
	binary.BigEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	return b
}
