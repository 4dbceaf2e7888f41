package raft_test

import (
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"payments/raft"
)

// The node reports its writes, commits and snapshots to its observers, and
// its Stats say where it stands: a leader and its followers after writes.
func TestObserversAndStats(t *testing.T) {
	var appends, entries, commits, persists atomic.Int64
	c := newCluster(t, 3)
	// Observers are given at Open: restart every node with them.
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.cfgs[i].Observe = raft.Observers{
			LogAppend: func(d time.Duration, n int) {
				appends.Add(1)
				entries.Add(int64(n))
			},
			Commit:          func(time.Duration) { commits.Add(1) },
			SnapshotPersist: func(time.Duration) { persists.Add(1) },
		}
		c.start(i)
	}
	var leader *raft.Node
	_, leader = c.leader()
	if _, err := apply(leader, org("org_a")); err != nil {
		t.Fatal(err)
	}
	if err := leader.Snapshot(); err != nil {
		t.Fatal(err)
	}
	c.waitApplied(leader.AppliedIndex())

	ls := leader.Stats()
	if ls.State != "Leader" || !ls.Leader || !ls.LeaderKnown || ls.Term == 0 || ls.CommitIndex == 0 ||
		ls.AppliedIndex < ls.CommitIndex || ls.StateIndex == 0 || ls.LastLogIndex < ls.CommitIndex || ls.OpenRecords == 0 {
		t.Errorf("leader stats: %+v", ls)
	}
	followers := 0
	for _, n := range c.nodes {
		if n == nil || n == leader {
			continue
		}
		followers++
		fs := n.Stats()
		if fs.State != "Follower" || fs.Leader || !fs.LeaderKnown || fs.Term != ls.Term || fs.LastContactNever || fs.LastContactAgo > 5*time.Second {
			t.Errorf("follower stats: %+v", fs)
		}
	}
	if followers != 2 {
		t.Fatalf("%d followers", followers)
	}
	if commits.Load() == 0 {
		t.Error("no commit observed")
	}
	if appends.Load() == 0 || entries.Load() < appends.Load() {
		t.Errorf("log appends observed: %d batches, %d entries", appends.Load(), entries.Load())
	}
	if persists.Load() == 0 {
		t.Error("no snapshot persist observed")
	}
	var m dto.Metric
	if err := leader.LogFsyncLatency().Write(&m); err != nil || m.Histogram.GetSampleCount() == 0 {
		t.Errorf("the log's fsync histogram: %v, %v", err, m.Histogram)
	}
	if leader.LogDiskBytes() == 0 || leader.StateDiskBytes() == 0 {
		t.Errorf("disk sizes: log %d, state %d", leader.LogDiskBytes(), leader.StateDiskBytes())
	}
}
