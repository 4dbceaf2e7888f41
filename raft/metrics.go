package raft

import (
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// Observers are callbacks the node calls for its metrics. They run on the
// write path (LogAppend, Commit) or on Raft's snapshot goroutine, so they
// must be cheap and safe for concurrent use; a nil one is skipped.
type Observers struct {
	// LogAppend: a batch of log entries written with one fsync, and how
	// many entries it held.
	LogAppend func(elapsed time.Duration, entries int)
	// Commit: from proposing an entry (a batch of commands) to its being
	// applied, or failing.
	Commit func(elapsed time.Duration)
	// SnapshotPersist: a snapshot made durable (a sync of the state store).
	SnapshotPersist func(elapsed time.Duration)
}

// Stats are the node's Raft state at one moment, for the metrics. Reading
// them takes a few of Raft's locks: once per scrape, not per request.
type Stats struct {
	State             string // Follower, Candidate, Leader or Shutdown
	Leader            bool   // leads and has caught up (IsLeader)
	LeaderKnown       bool
	Term              uint64
	LastLogIndex      uint64
	CommitIndex       uint64
	AppliedIndex      uint64 // Raft's: entries handed to the state machine
	StateIndex        uint64 // the state store's: what reads see
	LastContactAgo    time.Duration
	LastContactNever  bool  // a follower that never heard from a leader
	OpenRecords       int64 // the ledger's records in memory (the hot state)
	SnapshotDumpBytes int64 // the last state dump sent to a follower; 0 before any
}

// Stats returns the node's Raft state.
func (n *Node) Stats() Stats {
	s := Stats{
		State:             n.raft.State().String(),
		Leader:            n.IsLeader(),
		Term:              n.raft.CurrentTerm(),
		LastLogIndex:      n.raft.LastIndex(),
		CommitIndex:       n.raft.CommitIndex(),
		AppliedIndex:      n.raft.AppliedIndex(),
		StateIndex:        n.state.Applied(),
		OpenRecords:       n.fsm.openRecords.Load(),
		SnapshotDumpBytes: n.snapshotDumpBytes.Load(),
	}
	_, s.LeaderKnown = n.Leader()
	// A leader is its own contact; a follower's is the leader's last
	// message (hashicorp's Stats reports the same).
	if n.raft.State() != hraft.Leader {
		if last := n.raft.LastContact(); last.IsZero() {
			s.LastContactNever = true
		} else {
			s.LastContactAgo = time.Since(last)
		}
	}
	return s
}

// LogFsyncLatency is the log store's histogram of its fsyncs, in
// nanoseconds (see wal.Store.FsyncLatency).
func (n *Node) LogFsyncLatency() prometheus.Metric { return n.store.FsyncLatency() }

// LogDiskBytes is the size of the Raft log's files; StateDiskBytes that of
// the state store (the history, and the open records' durable copy).
func (n *Node) LogDiskBytes() uint64 { return n.store.DiskBytes() }

// StateDiskBytes is the size of the state store's files.
func (n *Node) StateDiskBytes() uint64 { return n.state.DiskBytes() }

// DataDir is where the node keeps its log, state and snapshots.
func (n *Node) DataDir() string { return n.cfg.DataDir }
