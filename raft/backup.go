package raft

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	hraft "github.com/hashicorp/raft"

	"payments/ledger"
	"payments/ledger/disputes"
	"payments/wal"
)

// BackupView is a point-in-time view of the applied state, pinned for an
// online backup: writes go on while it is read. The backup's writer (see
// cmd/payments' backup format) reads from it the files the state references
// and then the state's dump, so both are of the same applied index.
type BackupView struct {
	snap *wal.StateSnapshot
}

// OpenBackupView pins the applied state. Close it promptly: it holds the
// state store's files on disk while open.
func (n *Node) OpenBackupView() (*BackupView, error) {
	snap, err := n.state.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return &BackupView{snap: snap}, nil
}

// Applied returns the applied index the view is at.
func (v *BackupView) Applied() uint64 { return v.snap.Applied() }

// FileDigests returns, sorted, the SHA-256 of every uploaded file the view's
// state records: the blobs a backup of it must hold.
func (v *BackupView) FileDigests() []string {
	set := disputes.FileDigests(ledger.NewReader(ledger.KVOf(v.snap), &ledger.Views{}))
	return slices.Sorted(maps.Keys(set))
}

// WriteDump writes the view's state as a dump (package wal's format: the
// applied index, every record, a CRC-32C) to w and returns its size.
func (v *BackupView) WriteDump(w io.Writer) (int64, error) { return v.snap.WriteDump(w) }

// Close releases the view.
func (v *BackupView) Close() { v.snap.Close() }

// RestoreBackup seeds dataDir, which must be empty or absent, from a
// backup's state dump read from r, for the node id of a new cluster of
// peers (of one, at raftAddr, when peers is empty): the state store gets
// the dump's records at its applied index, and a Raft snapshot at that
// index, with the new cluster's configuration, stands in for the log
// before it. The backup's files are the caller's to restore. Every node
// of a new cluster is restored from the same backup; they then start
// without --bootstrap.
func RestoreBackup(dataDir string, r io.Reader, id, raftAddr string, peers []Peer) (applied uint64, err error) {
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return 0, fmt.Errorf("raft: restore: %s is not empty", dataDir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return 0, err
	}
	state, err := wal.OpenState(filepath.Join(dataDir, "state"), wal.Options{})
	if err != nil {
		return 0, fmt.Errorf("raft: restore: open state store: %w", err)
	}
	defer func() {
		if cerr := state.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if applied, err = state.Restore(r); err != nil {
		return 0, fmt.Errorf("raft: restore: %w", err)
	}
	if err := state.Sync(); err != nil {
		return 0, err
	}
	cluster := hraft.Configuration{}
	if len(peers) == 0 {
		cluster.Servers = []hraft.Server{{ID: hraft.ServerID(id), Address: hraft.ServerAddress(raftAddr), Suffrage: hraft.Voter}}
	}
	for _, p := range peers {
		cluster.Servers = append(cluster.Servers, hraft.Server{ID: hraft.ServerID(p.ID), Address: hraft.ServerAddress(p.RaftAddr), Suffrage: hraft.Voter})
	}
	files, err := hraft.NewFileSnapshotStore(dataDir, 2, io.Discard)
	if err != nil {
		return 0, err
	}
	_, trans := hraft.NewInmemTransport("")
	// Index 0 is no index to Raft: an empty backup stands at 1.
	index := max(applied, 1)
	sink, err := files.Create(hraft.SnapshotVersionMax, index, 1, cluster, index, trans)
	if err != nil {
		return 0, err
	}
	if _, err := sink.Write(encodeRef(applied)); err != nil {
		sink.Cancel()
		return 0, err
	}
	if err := sink.Close(); err != nil {
		return 0, err
	}
	return applied, nil
}
