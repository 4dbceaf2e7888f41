package actorstest

import (
	"testing"
	"time"

	"payments/actors"
	"payments/raft"
)

// leaderWait is how long a single node may take to elect itself.
const leaderWait = 10 * time.Second

// OpenNode opens a single-node Raft cluster in a temporary directory of
// t's, with timeouts short enough for tests, and closes it when t ends.
func OpenNode(t testing.TB) *raft.Node {
	t.Helper()
	node, err := raft.Open(raft.Config{
		DataDir:            t.TempDir(),
		HeartbeatTimeout:   50 * time.Millisecond,
		ElectionTimeout:    50 * time.Millisecond,
		LeaderLeaseTimeout: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	return node
}

// Start starts the actors cfg describes on node (cfg.State is node, and so
// is cfg.Log unless the caller set one in between), waits until node leads
// and tells the actors so. They stop when t ends, before node closes.
func Start(t testing.TB, node *raft.Node, cfg actors.Config) *actors.System {
	t.Helper()
	cfg.State = node
	if cfg.Log == nil {
		cfg.Log = node
	}
	sys := actors.Start(cfg)
	t.Cleanup(sys.Stop)
	select {
	case leading := <-node.Leadership():
		if !leading {
			t.Fatal("single node did not become leader")
		}
	case <-time.After(leaderWait):
		t.Fatal("no leader after 10s")
	}
	sys.SetLeading(true)
	return sys
}
