// Package raft replicates the ledger with hashicorp/raft: the FSM adapter
// that applies committed entries to ledger.State, the TCP transport, the
// bootstrap of a new cluster (one node by default, or a fixed list of
// peers), leadership notifications, and snapshots with log truncation.
//
// # Durability
//
// The log lives in package wal (Pebble, one fsync per batch). An entry is
// acknowledged to the proposer only once it is committed on a quorum and
// applied. On start, the node restores its latest snapshot and replays the
// log after it; the ledger's determinism makes the result byte-identical.
//
// # Snapshots
//
// Snapshot freezes the ledger's tables in O(1) (copy-on-write overlays);
// Persist encodes the frozen view on raft's snapshot goroutine while Apply
// goes on; Release folds the overlays back. hashicorp's FileSnapshotStore
// fsyncs the snapshot and its directory.
//
// # Leadership
//
// A node announces itself leader (Leadership, IsLeader) only after a Barrier:
// once it has applied every entry of earlier terms, so reads on it include
// every acknowledged write.
//
// # Never
//
// This package holds no business rules: it moves bytes between the log and
// ledger.State.Apply.
package raft
