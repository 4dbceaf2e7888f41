// Package raft replicates the ledger with hashicorp/raft: the FSM adapter
// that applies committed entries to ledger.State, the TCP transport, the
// bootstrap of a new cluster (one node by default, or a fixed list of
// peers), leadership notifications, and snapshots with log truncation.
//
// # Durability
//
// The log lives in package wal (Pebble, one fsync per batch). An entry is
// acknowledged to the proposer only once it is committed on a quorum,
// applied, and its batch committed to the state store, so that reads on
// this node see it.
//
// # The state store
//
// The FSM applies committed entries to ledger.State and commits what they
// changed to a wal.StateStore (a Pebble of its own, with no write-ahead log
// of its own) in write batches, each with the index of its last entry.
// Commits run beside Apply: while one batch commits (a goroutine of its
// own), the entries Raft hands over next are applied, and flushed together
// into the next batch once it is done. A loaded node so writes fewer,
// larger batches, and never applies and commits in turn.
//
// Raft answers an entry's future when ApplyBatch returns, which may be
// before its batch is committed. So the node waits for the FSM's committed
// index (fsm.waitCommitted) before it answers from it: a proposer's
// Pending.Wait returns once readers see its batch, and a new leader
// announces itself only once readers see every entry before its Barrier.
// Readers read the store and never wait for Apply. On start the ledger
// loads its open records from the store, and Raft replays the log after
// the latest snapshot; entries the store already has are skipped, so a
// store that got ahead of the snapshot before a crash is not applied
// twice.
//
// # Snapshots
//
// A snapshot is the state store itself: Snapshot returns once the batch
// in flight, if any, is committed, and Persist flushes the store's
// memtable to disk (Sync) and writes a small reference to it — the
// applied index — instead of a copy of history, so a snapshot costs a
// flush whatever the history. Raft may then truncate
// the log behind it. When the leader sends a snapshot to a follower that
// is too far behind (or new, or wiped), snapshotStore.Open turns the
// reference into a dump of the leader's store at a consistent point (a
// Pebble snapshot), history included; the follower's Restore replaces its
// store with it, marked "restoring" until it is whole. A node that starts
// with a store marked restoring, or behind a snapshot it received,
// restores from that snapshot again; one behind its own reference lost
// synced writes, and refuses to start.
//
// # Leadership
//
// A node announces itself leader (Leadership, IsLeader) only after a Barrier:
// once it has applied every entry of earlier terms and their batches are
// committed, so reads on it include every acknowledged write.
//
// # Never
//
// This package holds no business rules: it moves bytes between the log and
// ledger.State.Apply.
package raft
