package wal

import (
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"

	raftbench "github.com/hashicorp/raft/bench"
)

// The benchmarks run hashicorp's raftbench against a fresh store on the real
// disk (b.TempDir), so the write benchmarks measure fsyncs.

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	b.ReportAllocs()
	return s
}

func BenchmarkFirstIndex(b *testing.B)  { raftbench.FirstIndex(b, benchStore(b)) }
func BenchmarkLastIndex(b *testing.B)   { raftbench.LastIndex(b, benchStore(b)) }
func BenchmarkGetLog(b *testing.B)      { raftbench.GetLog(b, benchStore(b)) }
func BenchmarkStoreLog(b *testing.B)    { raftbench.StoreLog(b, benchStore(b)) }
func BenchmarkStoreLogs(b *testing.B)   { raftbench.StoreLogs(b, benchStore(b)) }
func BenchmarkDeleteRange(b *testing.B) { raftbench.DeleteRange(b, benchStore(b)) }
func BenchmarkSet(b *testing.B)         { raftbench.Set(b, benchStore(b)) }
func BenchmarkGet(b *testing.B)         { raftbench.Get(b, benchStore(b)) }
func BenchmarkSetUint64(b *testing.B)   { raftbench.SetUint64(b, benchStore(b)) }
func BenchmarkGetUint64(b *testing.B)   { raftbench.GetUint64(b, benchStore(b)) }

// BenchmarkStoreLogs64 stores what a leader's group commit writes at raft's
// default MaxAppendEntries: 64 entries of 256 bytes in one fsync.
func BenchmarkStoreLogs64(b *testing.B) {
	s := benchStore(b)
	logs := make([]*hraft.Log, 64)
	for i := range logs {
		logs[i] = &hraft.Log{Term: 1, Type: hraft.LogCommand, Data: make([]byte, 256), AppendedAt: time.Now()}
	}
	b.SetBytes(int64(len(logs) * 256))
	next := uint64(1)
	for b.Loop() {
		for _, l := range logs {
			l.Index = next
			next++
		}
		if err := s.StoreLogs(logs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompact deletes a contiguous log's prefix ten entries at a time,
// as raft does after a snapshot; raftbench's DeleteRange uses a log with gaps,
// which takes the slower path that seeks for the new first index.
func BenchmarkCompact(b *testing.B) {
	s := benchStore(b)
	const step = 10
	for i := uint64(1); i <= uint64(b.N)*step; i += 1000 {
		if err := s.StoreLogs(entries(i, i+999)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for n := range uint64(b.N) {
		if err := s.DeleteRange(n*step+1, n*step+step); err != nil {
			b.Fatal(err)
		}
	}
}
