package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"payments/actors"
	"payments/actors/app"
	"payments/raft"
	"payments/rails"
)

// Timing of the simulated cluster: elections in a few hundred
// milliseconds, rails that settle in tens.
const (
	heartbeatTimeout = 150 * time.Millisecond
	commitTimeout    = 2 * time.Second
)

var sandboxTiming = rails.SandboxTiming{
	SubmitLatency:     2 * time.Millisecond,
	Settlement:        30 * time.Millisecond,
	Timeout:           150 * time.Millisecond,
	DelayedCompletion: 300 * time.Millisecond,
	CustomerTimeout:   200 * time.Millisecond,
}

// simNode is one member: the real Raft node (log and state store on a
// crashable in-memory filesystem, snapshots in a temporary directory), the
// real actors and the sandbox rail, assembled as cmd/payments does.
type simNode struct {
	id    string
	root  string // temporary directory; each incarnation's DataDir is under it
	fs    *vfs.MemFS
	trans *transport

	mu    sync.Mutex
	node  *raft.Node // nil while crashed
	sys   *actors.System
	app   *app.App // the application API over sys, as cmd/payments builds it
	stop  chan struct{}
	wg    sync.WaitGroup
	incar int    // incarnation: starts so far
	dir   string // DataDir: paths in fs, and the snapshots on disk

	// crashes counts crashes; a reply read across one is not trusted
	// (in a real crash nothing is said after the crash instant).
	crashes atomic.Uint64
	// wiped: the node lost its data directory; it starts again empty, as
	// a member that waits for the leader to replicate to it (no
	// bootstrap).
	wiped bool
}

type cluster struct {
	clock *simClock // every node's leader clock, and its rail's and webhooks'
	net   *network
	nodes []*simNode
	peers []raft.Peer
	rng   *mrand.Rand // crash clones' choice of unsynced data; the scheduler's goroutine only
	// apps finds the application API of an actors.System, every
	// incarnation's: a client that reached a node keeps using the System it
	// got even if the node crashes meanwhile.
	apps sync.Map // *actors.System → *app.App
}

func newCluster(root string, net *network, clock *simClock, seed int64) (*cluster, error) {
	c := &cluster{clock: clock, net: net, rng: mrand.New(mrand.NewPCG(uint64(seed), 1))}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("n%d", i)
		c.peers = append(c.peers, raft.Peer{ID: id, RaftAddr: id})
		c.nodes = append(c.nodes, &simNode{id: id, root: filepath.Join(root, id), fs: vfs.NewCrashableMem()})
	}
	for _, n := range c.nodes {
		if err := c.start(n); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// start opens the node on its filesystem and connects its transport to
// the others.
func (c *cluster) start(n *simNode) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.trans = newTransport(c.net, n.id)
	for _, o := range c.nodes {
		if o != n && o.trans != nil {
			n.trans.inner.Connect(o.trans.inner.LocalAddr(), o.trans.inner)
			o.trans.inner.Connect(n.trans.inner.LocalAddr(), n.trans.inner)
		}
	}
	n.dir = filepath.Join(n.root, "data")
	node, err := raft.Open(raft.Config{
		ID: n.id, DataDir: n.dir, RaftAddr: n.id, Peers: c.peers, Bootstrap: !n.wiped,
		FS: n.fs, MemTableBytes: 1 << 20, Transport: n.trans,
		// Snapshots only when the scheduler takes one, between two
		// faults: the snapshot files live on the real disk, outside the
		// crash clone, so a snapshot taken while a node is being crashed
		// could outlive log entries the clone lost (a state no real disk
		// would be in). A short tail, so that followers that lag get
		// snapshots installed.
		SnapshotThreshold: 1 << 40, SnapshotInterval: 24 * time.Hour, TrailingLogs: 100,
		HeartbeatTimeout: heartbeatTimeout, ElectionTimeout: heartbeatTimeout, LeaderLeaseTimeout: heartbeatTimeout / 2,
	})
	if err != nil {
		return fmt.Errorf("start %s (incarnation %d): %w", n.id, n.incar, err)
	}
	sys := actors.Start(actors.Config{
		Log: node, State: node, Rail: rails.NewSandboxOnClock(sandboxTiming, c.clock),
		Now: c.clock.Now, Clock: c.clock,
		CommitTimeout: commitTimeout, Webhooks: webhookConfig(),
	})
	n.app = app.New(app.Config{System: sys, CommitTimeout: commitTimeout, Clock: c.clock, SandboxSettlement: sandboxTiming.Settlement})
	c.apps.Store(sys, n.app)
	n.node, n.sys, n.stop = node, sys, make(chan struct{})
	n.incar++
	n.wg.Add(1)
	go func(stop chan struct{}) {
		defer n.wg.Done()
		sys.FollowLeadership(node.Leadership(), stop)
	}(n.stop)
	c.net.setDown(n.id, false)
	return nil
}

// crash stops the node as a power cut would: from this instant nothing it
// does is seen (the network drops its messages, clients distrust replies
// read after it), and it restarts from what its disk had synced.
func (c *cluster) crash(n *simNode) error {
	n.crashes.Add(1)
	c.net.setDown(n.id, true)
	cfg := vfs.CrashCloneCfg{}
	if c.rng.IntN(2) == 0 {
		cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: c.rng.IntN(100), RNG: c.rng}
	}
	clone := n.fs.CrashClone(cfg)
	// The snapshots live on the real disk: keep those complete at the
	// crash instant.
	n.mu.Lock()
	snaps, kept := filepath.Join(n.dir, "snapshots"), filepath.Join(n.root, "crash-snapshots")
	n.mu.Unlock()
	os.RemoveAll(kept)
	if err := copySnapshots(snaps, kept); err != nil {
		return err
	}
	c.stopNode(n)
	n.fs = clone
	if err := os.RemoveAll(snaps); err != nil {
		return err
	}
	return os.Rename(kept, snaps)
}

// wipe stops the node and empties its data directory, as an operator who
// replaced its disk would; it restarts empty and catches up from the
// leader.
func (c *cluster) wipe(n *simNode) error {
	n.crashes.Add(1)
	c.net.setDown(n.id, true)
	c.stopNode(n)
	n.fs = vfs.NewCrashableMem()
	n.wiped = true
	n.mu.Lock()
	dir := n.dir
	n.mu.Unlock()
	return os.RemoveAll(dir)
}

// catchUp is the front end's catch-up for node n: ask the leader n knows,
// over the simulated network, for its read index, and wait until n has
// applied through it.
func (c *cluster) catchUp(n *simNode) actors.CatchUp {
	return func(ctx context.Context) error {
		node, _ := n.running()
		if node == nil {
			return errNodeDown
		}
		if node.IsLeader() {
			index, err := node.ReadIndex(ctx)
			if err != nil {
				return err
			}
			return node.WaitApplied(ctx, index)
		}
		id, ok := node.Leader()
		if !ok || id == n.id || c.net.isCut(n.id, id) || c.net.isCut(id, n.id) {
			return errNoLeaderReachable
		}
		for _, o := range c.nodes {
			if o.id != id {
				continue
			}
			leader, _ := o.running()
			if leader == nil {
				return errNoLeaderReachable
			}
			index, err := leader.ReadIndex(ctx)
			if err != nil {
				return err
			}
			return node.WaitApplied(ctx, index)
		}
		return errNoLeaderReachable
	}
}

var (
	errNodeDown          = errors.New("sim: the node is down")
	errNoLeaderReachable = errors.New("sim: no leader reachable")
)

func (c *cluster) stopNode(n *simNode) {
	n.mu.Lock()
	node, sys, stop := n.node, n.sys, n.stop
	n.node, n.sys, n.app = nil, nil, nil
	n.mu.Unlock()
	if node == nil {
		return
	}
	close(stop)
	n.wg.Wait()
	sys.Stop()
	node.Close()
}

func (c *cluster) close() {
	for _, n := range c.nodes {
		c.stopNode(n)
	}
}

// appOf is the application API over sys, a System one of the nodes ran.
func (c *cluster) appOf(sys *actors.System) *app.App {
	a, _ := c.apps.Load(sys)
	return a.(*app.App)
}

// running returns the node's parts, or nil while it is down.
func (n *simNode) running() (*raft.Node, *actors.System) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.node, n.sys
}

// confirmLeader reports whether the node the actors sys run on still
// leads, confirmed by a quorum with every acknowledged write in its state
// (the HTTP layer's check before a refusal or a replay goes).
func (c *cluster) confirmLeader(sys *actors.System) bool {
	for _, n := range c.nodes {
		node, s := n.running()
		if s != sys || node == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), keyWait)
		defer cancel()
		return node.ConfirmLeader(ctx) == nil
	}
	return false
}

// leader returns a node that leads and has caught up, as the HTTP layer's
// forwarding finds it; nil when none does.
func (c *cluster) leader() *simNode {
	for _, n := range c.nodes {
		if node, _ := n.running(); node != nil && node.IsLeader() {
			return n
		}
	}
	return nil
}

// route finds the node that serves a request sent to node entry, as the
// HTTP layer does: the entry node serves it if it leads, or forwards it to
// the node it believes leads, which serves it if it leads; nil otherwise
// (the client is told to retry).
func (c *cluster) route(entry int) *simNode {
	n := c.nodes[entry]
	node, _ := n.running()
	if node == nil {
		return nil
	}
	if node.IsLeader() {
		return n
	}
	id, ok := node.Leader()
	if !ok || id == n.id || c.net.isCut(n.id, id) {
		return nil
	}
	for _, o := range c.nodes {
		if o.id == id {
			if on, _ := o.running(); on != nil && on.IsLeader() {
				return o
			}
		}
	}
	return nil
}

// copySnapshots copies hashicorp's finished snapshot directories (not the
// .tmp ones being written).
func copySnapshots(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if err := copyDir(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			// Reaped while copied: an older snapshot, not needed.
			os.RemoveAll(filepath.Join(to, e.Name()))
		}
	}
	return nil
}

func copyDir(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	for _, name := range []string{"meta.json", "state.bin"} {
		if err := copyFile(filepath.Join(from, name), filepath.Join(to, name)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
