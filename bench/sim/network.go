package sim

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	hraft "github.com/hashicorp/raft"
)

// network is the faulty wire between the nodes' in-memory transports. A
// message from one node to another passes when neither end is down and the
// link is not cut; it may then be dropped, or delayed, at the rates the
// schedule sets. A reply travels the reverse link and is lost the same way,
// so a cut in one direction is an asymmetric partition: requests arrive,
// their answers do not.
type network struct {
	mu       sync.Mutex
	rng      *rand.Rand // drop and delay draws; guarded by mu
	cut      map[link]bool
	down     map[string]bool // crashed nodes: nothing in or out
	dropRate float64         // probability a message is lost
	maxDelay time.Duration   // each message waits up to this long

	dropped uint64 // messages lost, for the report
}

type link struct{ from, to string }

var errUnreachable = errors.New("sim: network: unreachable")

func newNetwork(seed uint64) *network {
	return &network{
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cut:  make(map[link]bool),
		down: make(map[string]bool),
	}
}

// send decides one message's fate from → to: an error if it is lost,
// after its delay otherwise.
func (n *network) send(from, to string) error {
	n.mu.Lock()
	if n.down[from] || n.down[to] || n.cut[link{from, to}] {
		n.dropped++
		n.mu.Unlock()
		return fmt.Errorf("%w: %s → %s", errUnreachable, from, to)
	}
	if n.dropRate > 0 && n.rng.Float64() < n.dropRate {
		n.dropped++
		n.mu.Unlock()
		return fmt.Errorf("%w: %s → %s dropped", errUnreachable, from, to)
	}
	var delay time.Duration
	if n.maxDelay > 0 {
		delay = time.Duration(n.rng.Int64N(int64(n.maxDelay)))
	}
	n.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	return nil
}

// isCut reports whether from cannot reach to at all (a cut link, or a
// node down): a forwarded request would fail at once.
func (n *network) isCut(from, to string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.down[from] || n.down[to] || n.cut[link{from, to}] || n.cut[link{to, from}]
}

func (n *network) setCut(from, to string, cut bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cut {
		n.cut[link{from, to}] = true
	} else {
		delete(n.cut, link{from, to})
	}
}

func (n *network) setDown(id string, down bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.down[id] = down
}

func (n *network) setLossy(dropRate float64, maxDelay time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dropRate, n.maxDelay = dropRate, maxDelay
}

// heal removes every cut, loss and delay (crashed nodes stay down).
func (n *network) heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
	n.dropRate, n.maxDelay = 0, 0
}

// transport is one node's hashicorp in-memory transport behind the
// network. It offers no pipeline, so every append is a round trip the
// network can lose.
type transport struct {
	net   *network
	id    string
	inner *hraft.InmemTransport
}

var (
	_ hraft.Transport   = (*transport)(nil)
	_ hraft.WithClose   = (*transport)(nil)
	_ hraft.WithPreVote = (*transport)(nil)
)

// rpcTimeout bounds an in-memory RPC to a node that does not take it (it
// is closed, or busy).
const rpcTimeout = 500 * time.Millisecond

func newTransport(net *network, id string) *transport {
	_, inner := hraft.NewInmemTransportWithTimeout(hraft.ServerAddress(id), rpcTimeout)
	return &transport{net: net, id: id, inner: inner}
}

// call sends a request over the network, runs it, and brings its answer
// back over the reverse link.
func (t *transport) call(target hraft.ServerAddress, rpc func() error) error {
	to := string(target)
	if err := t.net.send(t.id, to); err != nil {
		return err
	}
	if err := rpc(); err != nil {
		return err
	}
	return t.net.send(to, t.id)
}

func (t *transport) Consumer() <-chan hraft.RPC             { return t.inner.Consumer() }
func (t *transport) LocalAddr() hraft.ServerAddress         { return t.inner.LocalAddr() }
func (t *transport) SetHeartbeatHandler(cb func(hraft.RPC)) { t.inner.SetHeartbeatHandler(cb) }
func (t *transport) Close() error                           { return t.inner.Close() }

func (t *transport) EncodePeer(id hraft.ServerID, addr hraft.ServerAddress) []byte {
	return t.inner.EncodePeer(id, addr)
}

func (t *transport) DecodePeer(b []byte) hraft.ServerAddress { return t.inner.DecodePeer(b) }

func (t *transport) AppendEntriesPipeline(hraft.ServerID, hraft.ServerAddress) (hraft.AppendPipeline, error) {
	return nil, hraft.ErrPipelineReplicationNotSupported
}

func (t *transport) AppendEntries(id hraft.ServerID, target hraft.ServerAddress, args *hraft.AppendEntriesRequest, resp *hraft.AppendEntriesResponse) error {
	return t.call(target, func() error { return t.inner.AppendEntries(id, target, args, resp) })
}

func (t *transport) RequestVote(id hraft.ServerID, target hraft.ServerAddress, args *hraft.RequestVoteRequest, resp *hraft.RequestVoteResponse) error {
	return t.call(target, func() error { return t.inner.RequestVote(id, target, args, resp) })
}

func (t *transport) RequestPreVote(id hraft.ServerID, target hraft.ServerAddress, args *hraft.RequestPreVoteRequest, resp *hraft.RequestPreVoteResponse) error {
	return t.call(target, func() error { return t.inner.RequestPreVote(id, target, args, resp) })
}

func (t *transport) InstallSnapshot(id hraft.ServerID, target hraft.ServerAddress, args *hraft.InstallSnapshotRequest, resp *hraft.InstallSnapshotResponse, data io.Reader) error {
	return t.call(target, func() error { return t.inner.InstallSnapshot(id, target, args, resp, data) })
}

func (t *transport) TimeoutNow(id hraft.ServerID, target hraft.ServerAddress, args *hraft.TimeoutNowRequest, resp *hraft.TimeoutNowResponse) error {
	return t.call(target, func() error { return t.inner.TimeoutNow(id, target, args, resp) })
}
