package sim

import (
	"errors"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"
)

// The network's faults as Raft sees them: a cut link loses requests one
// way and answers the other (the request is served, its answer lost); a
// node down loses everything; heal restores every link but not a node
// that is down.
func TestNetworkFaults(t *testing.T) {
	net := newNetwork(1)
	a, b := newTransport(net, "a"), newTransport(net, "b")
	a.inner.Connect("b", b.inner)
	b.inner.Connect("a", a.inner)
	served := make(chan struct{}, 16)
	go func() {
		for rpc := range b.Consumer() {
			served <- struct{}{}
			rpc.Respond(&hraft.RequestVoteResponse{Granted: true}, nil)
		}
	}()
	vote := func() (bool, error) {
		var resp hraft.RequestVoteResponse
		err := a.RequestVote("b", "b", &hraft.RequestVoteRequest{}, &resp)
		select {
		case <-served:
			return true, err
		case <-time.After(100 * time.Millisecond):
			return false, err
		}
	}
	tests := []struct {
		name       string
		fault      func()
		wantServed bool
		wantErr    bool
	}{
		{"healthy", func() {}, true, false},
		{"a→b cut: the request is lost", func() { net.setCut("a", "b", true) }, false, true},
		{"b→a cut: served, the answer lost", func() { net.setCut("b", "a", true) }, true, true},
		{"b down", func() { net.setDown("b", true) }, false, true},
		{"every message dropped", func() { net.setLossy(1, 0) }, false, true},
		{"healed", func() {}, true, false},
	}
	for _, tt := range tests {
		net.heal()
		net.setDown("b", false)
		tt.fault()
		servedIt, err := vote()
		if servedIt != tt.wantServed || (err != nil) != tt.wantErr {
			t.Errorf("%s: served %v, err %v; want served %v, error %v", tt.name, servedIt, err, tt.wantServed, tt.wantErr)
		}
		if err != nil && !errors.Is(err, errUnreachable) {
			t.Errorf("%s: error %v is not the network's", tt.name, err)
		}
	}
	net.heal()
	net.setDown("b", true)
	net.heal()
	if _, err := vote(); err == nil {
		t.Error("heal brought a node that is down back")
	}
}
