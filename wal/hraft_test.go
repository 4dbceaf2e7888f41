package wal

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	hraft "github.com/hashicorp/raft"
)

// countFSM counts applied commands; its snapshot is the count.
type countFSM struct {
	mu sync.Mutex
	n  uint64
}

func (f *countFSM) Apply(*hraft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return nil
}

func (f *countFSM) count() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *countFSM) Snapshot() (hraft.FSMSnapshot, error) { return countSnapshot(f.count()), nil }

func (f *countFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var b [8]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n = binary.BigEndian.Uint64(b[:])
	return nil
}

type countSnapshot uint64

func (c countSnapshot) Persist(sink hraft.SnapshotSink) error {
	if _, err := sink.Write(binary.BigEndian.AppendUint64(nil, uint64(c))); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (countSnapshot) Release() {}

// startRaft starts a single-node hashicorp/raft on store, behind a LogCache as
// the service does, and waits until it leads.
func startRaft(t *testing.T, store *Store, fsm hraft.FSM, snaps hraft.SnapshotStore, bootstrap bool) *hraft.Raft {
	t.Helper()
	conf := hraft.DefaultConfig()
	conf.LocalID = "node-1"
	conf.LogOutput = io.Discard
	conf.HeartbeatTimeout = 50 * time.Millisecond
	conf.ElectionTimeout = 50 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.TrailingLogs = 50
	conf.SnapshotThreshold = 1 << 20 // snapshots only when the test asks
	_, trans := hraft.NewInmemTransport("node-1")
	logs, err := hraft.NewLogCache(64, store)
	if err != nil {
		t.Fatal(err)
	}
	r, err := hraft.NewRaft(conf, fsm, logs, store, snaps, trans)
	if err != nil {
		t.Fatalf("new raft: %v", err)
	}
	if bootstrap {
		cfg := hraft.Configuration{Servers: []hraft.Server{{ID: conf.LocalID, Address: trans.LocalAddr()}}}
		if err := r.BootstrapCluster(cfg).Error(); err != nil {
			t.Fatalf("bootstrap: %v", err)
		}
	}
	// LeaderCh keeps the latest change for a late reader.
	timeout := time.After(5 * time.Second)
	for r.State() != hraft.Leader {
		select {
		case <-r.LeaderCh():
		case <-timeout:
			t.Fatal("no leader after 5s")
		}
	}
	return r
}

func applyN(t *testing.T, r *hraft.Raft, n int) {
	t.Helper()
	futures := make([]hraft.ApplyFuture, n)
	for i := range futures {
		futures[i] = r.Apply([]byte("cmd"), time.Second)
	}
	for _, f := range futures {
		if err := f.Error(); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
}

// TestHashicorpRaft runs the real library on the store: a fresh node must
// start (which needs the exact "not found"), snapshots compact the log, and a
// restart rebuilds the state from the snapshot and the log.
func TestHashicorpRaft(t *testing.T) {
	fs := vfs.NewCrashableMem()
	snaps := hraft.NewInmemSnapshotStore()

	store, err := Open(testDir, Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	fsm := &countFSM{}
	r := startRaft(t, store, fsm, snaps, true)
	applyN(t, r, 300)
	if err := r.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	applyN(t, r, 100)
	first, _ := store.FirstIndex()
	last, _ := store.LastIndex()
	if first <= 1 || last < 400 {
		t.Fatalf("log %d-%d after a snapshot; want a compacted prefix and 400+ entries", first, last)
	}
	if err := r.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store = mustOpen(t, fs, Options{})
	assertBounds(t, store, first, last)
	fsm = &countFSM{}
	r = startRaft(t, store, fsm, snaps, false)
	defer func() {
		if err := r.Shutdown().Error(); err != nil {
			t.Error(err)
		}
	}()
	if err := r.Barrier(time.Second).Error(); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	if got := fsm.count(); got != 400 {
		t.Fatalf("fsm applied %d commands after restart, want 400", got)
	}
	if err := r.BootstrapCluster(hraft.Configuration{}).Error(); !errors.Is(err, hraft.ErrCantBootstrap) {
		t.Fatalf("bootstrap of a node with state: err = %v, want ErrCantBootstrap", err)
	}
}
