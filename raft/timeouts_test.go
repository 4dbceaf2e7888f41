package raft_test

import (
	"testing"
	"time"

	"payments/actors/actorstest/wait"
	"payments/raft"
)

// A node started alone runs with short timeouts (nobody to hear from);
// once another voter joins it takes the cluster's, after a restart too, and
// its own again when it is alone once more.
func TestTimeoutsFollowTheVoters(t *testing.T) {
	lns := listeners(t, 2)
	solo := raft.Config{ID: "n1", DataDir: t.TempDir(), RaftAddr: lns[0].Addr().String(), Listener: lns[0]}
	n1, err := raft.Open(solo)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { n1.Close() }()
	waitLeader(t, n1)
	if hb, el := n1.Timeouts(); hb != 100*time.Millisecond || el != 100*time.Millisecond {
		t.Fatalf("alone: timeouts %v %v, want 100ms", hb, el)
	}

	n2, err := raft.Open(raft.Config{ID: "n2", DataDir: t.TempDir(), RaftAddr: lns[1].Addr().String(), Listener: lns[1], Join: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	if _, err := n1.AddNonvoter("n2", lns[1].Addr().String(), ""); err != nil {
		t.Fatal(err)
	}
	if hb, _ := n1.Timeouts(); hb != 100*time.Millisecond {
		t.Fatalf("a non-voter changed the timeouts to %v", hb)
	}
	if err := n1.Promote("n2"); err != nil {
		t.Fatal(err)
	}
	if hb, el := n1.Timeouts(); hb != time.Second || el != time.Second {
		t.Fatalf("with two voters: timeouts %v %v, want 1s", hb, el)
	}

	// A restart reads the voters from its log.
	n1.Close()
	solo.Listener = nil
	if n1, err = raft.Open(solo); err != nil {
		t.Fatal(err)
	}
	waitAnyLeader(t, n1, n2)
	if hb, _ := n1.Timeouts(); hb != time.Second {
		t.Fatalf("restarted with two voters: heartbeat timeout %v, want 1s", hb)
	}

	// n1 leads (handed over if n2 won), then removes n2 and is alone.
	if !n1.IsLeader() {
		if err := n2.TransferLeadershipTo("n1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := n1.RemoveMember("n2"); err != nil {
		t.Fatal(err)
	}
	if hb, el := n1.Timeouts(); hb != 100*time.Millisecond || el != 100*time.Millisecond {
		t.Fatalf("alone again: timeouts %v %v, want 100ms", hb, el)
	}
}

// waitAnyLeader waits until one of nodes leads.
func waitAnyLeader(t *testing.T, nodes ...*raft.Node) {
	t.Helper()
	wait.For(t, 15*time.Second, pollInterval, "a leader", func() bool {
		for _, n := range nodes {
			if n.IsLeader() {
				return true
			}
		}
		return false
	})
}
