package http_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"payments/raft"
)

// clusterPeers binds n Raft listeners on loopback for a cluster of nodes
// named n1, n2, ….
func clusterPeers(t *testing.T, n int) ([]raft.Peer, []net.Listener) {
	t.Helper()
	peers, lns := make([]raft.Peer, n), make([]net.Listener, n)
	for i := range n {
		lns[i] = listenLoopback(t)
		peers[i] = raft.Peer{ID: fmt.Sprintf("n%d", i+1), RaftAddr: lns[i].Addr().String()}
	}
	return peers, lns
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// openClusterNode opens member i of the bootstrapped cluster of peers on
// its listener ln, with timeouts short enough for tests. The caller closes
// it.
func openClusterNode(t *testing.T, peers []raft.Peer, i int, ln net.Listener) *raft.Node {
	t.Helper()
	node, err := raft.Open(raft.Config{
		ID: peers[i].ID, DataDir: t.TempDir(), RaftAddr: peers[i].RaftAddr, Listener: ln, Peers: peers,
		Bootstrap:        true,
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return node
}
