package raft

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"payments/raft/rounds"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	hraft "github.com/hashicorp/raft"

	"payments/actors"
	"payments/ledger"
	"payments/wal"
)

// Peer is a voting member of the cluster.
type Peer struct {
	ID       string // stable node name, e.g. "n1"
	RaftAddr string // host:port of its Raft transport
}

// Config configures a Node.
type Config struct {
	ID       string // this node's name; "n1" when empty
	DataDir  string // holds the log (wal/), snapshots (snapshots/)
	RaftAddr string // host:port to listen on for Raft; "127.0.0.1:0" picks a port

	// Listener, if set, is the bound socket Raft serves on instead of
	// listening on RaftAddr (tests bind every node's port before any node
	// starts, so their addresses are known without reserving ports).
	Listener net.Listener

	// Peers is the whole cluster, this node included. Empty means a
	// single-node cluster, the default.
	Peers []Peer

	// Bootstrap, with Peers, lets a node on an empty data directory found
	// the cluster: every node of a new cluster bootstraps with the same
	// list. Without it such a node waits for the cluster's leader to
	// replicate to it (a member whose data was lost, a node added to the
	// cluster) and never starts a cluster of its own: a mistyped data
	// directory on a member must not split the cluster. A single node
	// (no Peers) always bootstraps an empty directory.
	Bootstrap bool

	// Join: this node is being added to a running cluster; it never
	// bootstraps, even without Peers.
	Join bool

	// PeerHTTP maps member ids to their HTTP host:port, as --peers gives
	// them; members added later announce theirs through the log.
	PeerHTTP map[string]string

	// SnapshotThreshold is how many log entries since the last snapshot
	// trigger a new one; TrailingLogs how many entries are kept behind a
	// snapshot for followers that lag. Zero keeps hashicorp's defaults.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64

	// Timing of elections; zero keeps hashicorp's defaults. Tests on
	// loopback shorten them.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// CommitTimeout is how long the leader waits without new entries
	// before it sends a heartbeat that carries the commit index; zero
	// keeps hashicorp's 50ms.
	CommitTimeout time.Duration

	// Observers for the node's metrics (metrics.go); each may be nil.
	Observe Observers

	Logger *slog.Logger

	// FS, if set, holds the log and the state store instead of the
	// operating system's files, and MemTableBytes sizes their memtables
	// (zero keeps package wal's default). The simulator passes Pebble's
	// crashable in-memory filesystem, to crash a node losing what it had
	// not synced. Snapshots stay in DataDir.
	FS            vfs.FS
	MemTableBytes uint64
	// Transport, if set, carries Raft's messages instead of TCP; RaftAddr
	// is then its address, and Listener is unused. The simulator passes
	// hashicorp's in-memory transport behind a network that drops, delays
	// and partitions.
	Transport hraft.Transport
}

// Node is one member of the Raft cluster: the log in Pebble, the FSM that
// applies it to the ledger, and the TCP transport to its peers.
type Node struct {
	cfg       Config
	raft      *hraft.Raft
	fsm       *fsm
	store     *wal.Store      // the Raft log
	logs      hraft.LogStore  // the log through Raft's cache of it
	state     *wal.StateStore // the ledger's records
	transport hraft.Transport
	logger    *slog.Logger

	// readyTerm is the term in which this node, leading, applied every
	// earlier entry (its Barrier): 0 when it does not lead. See IsLeader.
	readyTerm  atomic.Uint64
	confirm    rounds.Rounds[struct{}] // ConfirmLeader's rounds
	pauses     *pauseDetector          // whether VerifyLeader alone may be trusted
	changes    *broadcast              // LeaderChange's broadcasts
	heard      leaderCommit            // the commit index the leader last sent (Ready)
	leadership chan bool
	done       chan struct{}
	wg         sync.WaitGroup
	closeOnce  sync.Once

	snapshotDumpBytes atomic.Int64 // the last state dump sent to a follower (metrics.go)

	// soloDefaults: this node started without peers and without timeout
	// flags, so its heartbeat and election timeouts follow how many voters
	// the cluster has (fitTimeouts).
	soloDefaults bool
}

var _ actors.Replicator = (*Node)(nil)
var _ actors.StateReader = (*Node)(nil)

// soloTimeout is the heartbeat, election and lease timeout of a node
// started without peers.
const soloTimeout = 100 * time.Millisecond

// clusterTimeout is the heartbeat and election timeout of a node of a
// cluster when no flag sets them: hashicorp/raft's default.
var clusterTimeout = hraft.DefaultConfig().HeartbeatTimeout

// fitTimeouts gives a node started alone (soloDefaults) the cluster's
// heartbeat and election timeouts once its configuration has another
// voter, and its own back when it is alone again: a member of a cluster
// that called an election after 100 ms of silence would flap on the first
// slow link. Its leader lease stays as it started (hashicorp/raft cannot
// change it while running), which only makes a leader that loses its
// quorum step down sooner.
func (n *Node) fitTimeouts() {
	if !n.soloDefaults {
		return
	}
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	voters := 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == hraft.Voter {
			voters++
		}
	}
	want := clusterTimeout
	if voters <= 1 {
		want = soloTimeout
	}
	rc := n.raft.ReloadableConfig()
	if rc.HeartbeatTimeout == want && rc.ElectionTimeout == want {
		return
	}
	rc.HeartbeatTimeout, rc.ElectionTimeout = want, want
	if err := n.raft.ReloadConfig(rc); err != nil {
		n.logger.Warn("raft: could not change the timeouts to the cluster's size", "voters", voters, "err", err)
		return
	}
	n.logger.Info("raft: timeouts follow the cluster's size", "voters", voters, "heartbeatTimeout", want, "electionTimeout", want)
}

// Timeouts are the heartbeat and election timeouts the node runs with now.
func (n *Node) Timeouts() (heartbeat, election time.Duration) {
	rc := n.raft.ReloadableConfig()
	return rc.HeartbeatTimeout, rc.ElectionTimeout
}

// appendTimeout bounds how long Append waits for the leader to take an
// entry; past it nothing was appended.
const appendTimeout = 5 * time.Second

// Open starts a node on cfg.DataDir. An empty directory bootstraps a new
// cluster of one, or of cfg.Peers when cfg.Bootstrap is set; otherwise the
// node loads the ledger from its state store and applies the log after the
// store's index.
func Open(cfg Config) (*Node, error) {
	if cfg.ID == "" {
		cfg.ID = "n1"
	}
	if cfg.RaftAddr == "" {
		cfg.RaftAddr = "127.0.0.1:0"
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("raft: data dir: %w", err)
	}
	// The data directory holds every organization's records: owner only,
	// even if it was made by hand with a wider mode.
	if err := os.Chmod(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("raft: data dir: %w", err)
	}
	store, err := wal.Open(filepath.Join(cfg.DataDir, "wal"), wal.Options{FS: cfg.FS, MemTableBytes: cfg.MemTableBytes, Logger: logger.With("component", "wal"), OnLogAppend: cfg.Observe.LogAppend})
	if err != nil {
		return nil, fmt.Errorf("raft: open log: %w", err)
	}
	state, err := wal.OpenState(filepath.Join(cfg.DataDir, "state"), wal.Options{FS: cfg.FS, MemTableBytes: cfg.MemTableBytes, Logger: logger.With("component", "state")})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("raft: open state store: %w", err)
	}
	n := &Node{
		cfg:        cfg,
		store:      store,
		state:      state,
		logger:     logger,
		leadership: make(chan bool, 1),
		changes:    newBroadcast(),
		done:       make(chan struct{}),
	}
	if err := n.start(); err != nil {
		close(n.done)
		if n.raft != nil {
			n.raft.Shutdown().Error()
		}
		store.Close()
		state.Close()
		closeTransport(n.transport)
		return nil, err
	}
	return n, nil
}

func (n *Node) start() error {
	hlog := hclog.New(&hclog.LoggerOptions{
		Name:   "raft",
		Level:  hclog.Warn,
		Output: &slogWriter{logger: n.logger.With("component", "raft")},
	})
	conf := hraft.DefaultConfig()
	conf.LocalID = hraft.ServerID(n.cfg.ID)
	conf.Logger = hlog
	conf.MaxAppendEntries = 256
	// The node starts from its state store, which is at least as recent
	// as its latest snapshot; Raft then applies the log from the snapshot
	// on, and the FSM skips what the store has.
	conf.NoSnapshotRestoreOnStart = true
	setPositive(&conf.SnapshotThreshold, n.cfg.SnapshotThreshold)
	setPositive(&conf.SnapshotInterval, n.cfg.SnapshotInterval)
	setPositive(&conf.TrailingLogs, n.cfg.TrailingLogs)
	if len(n.cfg.Peers) == 0 && !n.cfg.Join {
		// A cluster of one has nobody to hear from: it need not wait a
		// second of silence, after a restart, before it elects itself.
		// Once members join it, fitTimeouts gives it the cluster's.
		conf.HeartbeatTimeout = soloTimeout
		conf.ElectionTimeout = soloTimeout
		conf.LeaderLeaseTimeout = soloTimeout
		n.soloDefaults = n.cfg.HeartbeatTimeout == 0 && n.cfg.ElectionTimeout == 0
	}
	setPositive(&conf.HeartbeatTimeout, n.cfg.HeartbeatTimeout)
	setPositive(&conf.ElectionTimeout, n.cfg.ElectionTimeout)
	setPositive(&conf.LeaderLeaseTimeout, n.cfg.LeaderLeaseTimeout)
	setPositive(&conf.CommitTimeout, n.cfg.CommitTimeout)

	files, err := hraft.NewFileSnapshotStoreWithLogger(n.cfg.DataDir, 2, hlog) // keeps them in DataDir/snapshots
	if err != nil {
		return fmt.Errorf("raft: snapshot store: %w", err)
	}
	snaps := &snapshotStore{FileSnapshotStore: files, state: n.state, dumpBytes: &n.snapshotDumpBytes}
	if err := n.recoverState(files); err != nil {
		return err
	}
	if n.fsm, err = newFSM(n.state); err != nil {
		return err
	}
	n.fsm.observe = n.cfg.Observe
	if n.transport, err = n.openTransport(hlog); err != nil {
		return err
	}
	logs := newLogCache(n.store, logCacheEntriesMax, logCacheBytesMax)
	n.logs = logs
	existing, err := hraft.HasExistingState(logs, n.store, snaps)
	if err != nil {
		return fmt.Errorf("raft: read state: %w", err)
	}
	if !existing && len(n.cfg.Peers) > 0 && !n.cfg.Bootstrap && !n.cfg.Join {
		n.logger.Warn("empty data directory: not founding a cluster; waiting for the cluster's leader to replicate to this node (start every node of a new cluster once with --bootstrap)",
			"data_dir", n.cfg.DataDir)
	}
	if !existing && !n.cfg.Join && (len(n.cfg.Peers) == 0 || n.cfg.Bootstrap) {
		cluster := hraft.Configuration{}
		if len(n.cfg.Peers) == 0 {
			cluster.Servers = []hraft.Server{{ID: conf.LocalID, Address: n.transport.LocalAddr()}}
		}
		for _, p := range n.cfg.Peers {
			cluster.Servers = append(cluster.Servers, hraft.Server{ID: hraft.ServerID(p.ID), Address: hraft.ServerAddress(p.RaftAddr)})
		}
		if err := hraft.BootstrapCluster(conf, logs, n.store, snaps, n.transport, cluster); err != nil {
			return fmt.Errorf("raft: bootstrap: %w", err)
		}
	}
	bounds := func() (first, applied uint64) {
		first, _ = n.store.FirstIndex()
		return first, n.state.Applied()
	}
	n.raft, err = hraft.NewRaft(conf, n.fsm, logs, n.store, snaps, wrapCatchUp(n.transport, bounds, n.heard.saw, n.done))
	if err != nil {
		return fmt.Errorf("raft: start: %w", err)
	}
	n.fitTimeouts()
	obs := make(chan hraft.Observation, 16)
	n.raft.RegisterObserver(hraft.NewObserver(obs, false, func(o *hraft.Observation) bool {
		switch o.Data.(type) {
		case hraft.LeaderObservation, hraft.RaftState, hraft.PeerObservation:
			return true
		}
		return false
	}))
	// A pause shorter than a quarter of the heartbeat timeout cannot
	// have let the followers elect another leader.
	n.pauses = newPauseDetector(conf.HeartbeatTimeout / 4)
	n.pauses.lastTick.Store(n.pauses.now())
	n.wg.Add(3)
	go n.watchLeadership()
	go n.watchObservations(obs)
	go func() {
		defer n.wg.Done()
		n.pauses.run(n.done)
	}()
	return nil
}

// openTransport returns the configured transport, or TCP on the listener
// or RaftAddr.
func (n *Node) openTransport(hlog hclog.Logger) (hraft.Transport, error) {
	if n.cfg.Transport != nil {
		return n.cfg.Transport, nil
	}
	ln := n.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", n.cfg.RaftAddr); err != nil {
			return nil, fmt.Errorf("raft: listen on %s: %w", n.cfg.RaftAddr, err)
		}
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() && len(n.cfg.Peers) > 0 {
		ln.Close()
		return nil, fmt.Errorf("raft: %s is not an address peers can reach; listen on a specific IP", ln.Addr())
	}
	return hraft.NewNetworkTransportWithLogger(&streamLayer{ln}, 3, 10*time.Second, hlog), nil
}

// closeTransport closes a transport that can be closed.
func closeTransport(t hraft.Transport) error {
	if c, ok := t.(hraft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// watchLeadership turns hashicorp's leadership signal into ours: a new
// leader is announced only after a Barrier, when it has applied every entry
// of earlier terms, so what it reads is everything that was acknowledged.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	for {
		select {
		case <-n.done:
			return
		case leading := <-n.raft.LeaderCh():
			var term uint64
			if leading {
				term = n.raft.CurrentTerm()
				if err := n.raft.Barrier(30 * time.Second).Error(); err != nil {
					n.logger.Warn("barrier after election failed", "err", err)
					continue
				}
				// The entries before the barrier are applied; readers
				// see them once their batch is in the state store.
				if !n.fsm.waitCommitted(math.MaxUint64, n.done) {
					return
				}
				// Deposed, or re-elected in a later term, while the
				// barrier ran: that term has not had its barrier.
				if n.raft.State() != hraft.Leader || n.raft.CurrentTerm() != term {
					continue
				}
			}
			n.readyTerm.Store(term)
			n.changes.notify()
			// Keep only the latest value: a slow reader sees where things
			// ended, not every step.
			select {
			case <-n.leadership:
			default:
			}
			n.leadership <- leading
		}
	}
}

// Leadership delivers true when this node becomes a leader ready to serve,
// and false when it stops being one. Only the latest value is kept.
func (n *Node) Leadership() <-chan bool { return n.leadership }

// IsLeader reports whether this node leads and has caught up: it leads in
// the term it applied its Barrier in. It is this node's own belief; a
// leader frozen or cut off may still hold it after the cluster elected
// another, so a definite answer needs ConfirmLeader.
func (n *Node) IsLeader() bool {
	term := n.readyTerm.Load()
	return term != 0 && n.raft.State() == hraft.Leader && n.raft.CurrentTerm() == term
}

// Leader returns the current leader's id, if one is known.
func (n *Node) Leader() (string, bool) {
	_, id := n.raft.LeaderWithID()
	return string(id), id != ""
}

// ID is this node's name.
func (n *Node) ID() string { return n.cfg.ID }

// Ready reports whether the node can serve: a leader is known and this node
// has applied every entry it knows to be committed (a leader, also every
// entry of earlier terms). A follower knows the leader's commit index from
// the leader's appends in the current term: its own commit index cannot
// pass its log's end, so a follower whose log is short (a new or wiped
// node, one far behind) would otherwise count itself caught up.
func (n *Node) Ready() bool {
	if _, ok := n.Leader(); !ok {
		return false
	}
	if n.raft.State() == hraft.Leader {
		return n.IsLeader()
	}
	term, commit := n.heard.get()
	if term != n.raft.CurrentTerm() {
		return false // no append from this term's leader yet
	}
	return n.VisibleThrough(max(commit, n.raft.CommitIndex()))
}

// CatchUp reports, for /readyz, the index this node's readers see and the
// commit index it last heard from the leader (its own, when it leads).
func (n *Node) CatchUp() (visible, leaderCommit uint64) {
	visible = n.fsm.visible.Load()
	if n.raft.State() == hraft.Leader {
		return visible, n.raft.CommitIndex()
	}
	_, leaderCommit = n.heard.get()
	return visible, leaderCommit
}

// Append proposes an entry; see actors.Replicator.
func (n *Node) Append(entry []byte) actors.Pending {
	return pending{f: n.raft.Apply(entry, appendTimeout), fsm: n.fsm, closed: n.done, start: time.Now(), onCommit: n.cfg.Observe.Commit}
}

// Reader returns the readers' view of the applied state; see actors.StateReader.
func (n *Node) Reader() *ledger.Reader { return n.fsm.Reader() }

// StateDigest returns the SHA-256 of the state store's content and the
// applied index it is at, for comparing replicas and for audits.
func (n *Node) StateDigest() ([32]byte, uint64, error) { return n.state.Digest() }

// CheckState verifies the ledger's invariants over the state store (see
// ledger.Check). It reads the whole journal.
func (n *Node) CheckState() error { return ledger.Check(n.fsm.kv) }

// LogBounds returns the first and last index held in the log.
func (n *Node) LogBounds() (first, last uint64) {
	first, _ = n.store.FirstIndex()
	last, _ = n.store.LastIndex()
	return first, last
}

// Snapshot takes a snapshot now and truncates the log behind it.
func (n *Node) Snapshot() error {
	return n.raft.Snapshot().Error()
}

// AppliedIndex is the index of the last entry applied to the ledger and
// committed to its state store: what reads see. (Raft's own applied index
// runs ahead of it while a batch is being applied.)
func (n *Node) AppliedIndex() uint64 { return n.state.Applied() }

// Close stops the node: Raft, the transport, then the log.
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		close(n.done)
		err = n.raft.Shutdown().Error()
		n.wg.Wait()
		if cerr := closeTransport(n.transport); err == nil {
			err = cerr
		}
		if cerr := n.store.Close(); err == nil {
			err = cerr
		}
		if cerr := n.state.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// recoverState makes the state store fit to start from. The store must be
// at or after the latest snapshot, since Raft applies the log only from
// there: a node that crashed while restoring a snapshot it received
// restores it again; a store behind its own snapshot lost writes it had
// made durable, and the node refuses to start.
func (n *Node) recoverState(snaps *hraft.FileSnapshotStore) error {
	list, err := snaps.List()
	if err != nil {
		return fmt.Errorf("raft: list snapshots: %w", err)
	}
	restoring, err := n.state.Restoring()
	if err != nil {
		return err
	}
	if len(list) == 0 {
		if restoring {
			return errors.New("raft: the state store was being restored, and no snapshot is left to restore it from")
		}
		return nil
	}
	latest := list[0]
	if !restoring && latest.Index <= n.state.Applied() {
		return nil
	}
	_, rc, err := snaps.Open(latest.ID)
	if err != nil {
		return fmt.Errorf("raft: open snapshot %s: %w", latest.ID, err)
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	// Raft's index of a snapshot counts the entries the state machine
	// never sees (a new leader's no-op, barriers): the store may be behind
	// it and still whole. What the store must have is the index the
	// snapshot itself names: a reference's, or a dump's.
	// A dump's head is longer than a reference's: peek at enough for either.
	const dumpMagic = "PAYSTATE" // package wal's dump format: magic, version, index
	head, _ := br.Peek(len(dumpMagic) + 1 + 8)
	switch {
	case bytes.HasPrefix(head, []byte(refMagic)):
		applied, err := readRef(br)
		if err != nil {
			return fmt.Errorf("raft: snapshot %s: %w", latest.ID, err)
		}
		switch {
		case restoring:
			return fmt.Errorf("raft: the state store was being restored, and the latest snapshot (%s) is this node's own, not one to restore from; empty the data directory and let the node join again", latest.ID)
		case applied > n.state.Applied():
			return fmt.Errorf("raft: the state store is at index %d, behind the snapshot at %d that this node took of it: it lost writes it had synced; restore this node from a backup or from its peers (empty its data directory and join)",
				n.state.Applied(), applied)
		}
		return nil
	case len(head) < len(dumpMagic)+1+8 || string(head[:len(dumpMagic)]) != dumpMagic:
		return fmt.Errorf("raft: snapshot %s is in a format this version does not read: this data directory was written by an earlier version", latest.ID)
	}
	if applied := binary.BigEndian.Uint64(head[len(dumpMagic)+1:]); !restoring && applied <= n.state.Applied() {
		return nil
	}
	n.logger.Info("restoring the state store from a received snapshot", "snapshot", latest.ID, "index", latest.Index)
	if _, err := n.state.Restore(br); err != nil {
		return fmt.Errorf("raft: restore the state store from snapshot %s: %w", latest.ID, err)
	}
	return nil
}

// streamLayer is Raft's TCP transport on a listener we hold.
type streamLayer struct{ ln net.Listener }

func (s *streamLayer) Accept() (net.Conn, error) { return s.ln.Accept() }
func (s *streamLayer) Close() error              { return s.ln.Close() }
func (s *streamLayer) Addr() net.Addr            { return s.ln.Addr() }

func (s *streamLayer) Dial(address hraft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(address), timeout)
}

type pending struct {
	f        hraft.ApplyFuture
	fsm      *fsm
	closed   <-chan struct{} // the node's done channel
	start    time.Time       // when Append was called
	onCommit func(time.Duration)
}

// Wait maps hashicorp's errors to the actors': an entry that never entered
// the log is ErrNotLeader, one that did but whose commit is uncertain is
// ErrOutcomeUnknown. A future still queued inside Raft when the node shuts
// down is never answered, so Wait also gives up, with ErrOutcomeUnknown,
// once the node is closed. (One goroutine per wait: the proposer waits once
// per batch, not per request.)
func (p pending) Wait() ([]ledger.Result, error) {
	answered := make(chan error, 1)
	go func() { answered <- p.f.Error() }()
	var err error
	select {
	case err = <-answered:
	case <-p.closed:
		select {
		case err = <-answered:
		case <-time.After(time.Second):
			return nil, fmt.Errorf("%w: the node shut down", actors.ErrOutcomeUnknown)
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, hraft.ErrNotLeader), errors.Is(err, hraft.ErrEnqueueTimeout),
			errors.Is(err, hraft.ErrLeadershipTransferInProgress):
			return nil, actors.ErrNotLeader
		default:
			return nil, fmt.Errorf("%w: %v", actors.ErrOutcomeUnknown, err)
		}
	}
	// Raft answers once the entry is applied; readers see it once its
	// batch is in the state store.
	if !p.fsm.waitCommitted(p.f.Index(), p.closed) {
		return nil, fmt.Errorf("%w: the node shut down", actors.ErrOutcomeUnknown)
	}
	if p.onCommit != nil {
		p.onCommit(time.Since(p.start))
	}
	results, ok := p.f.Response().([]ledger.Result)
	if !ok {
		return nil, fmt.Errorf("%w: unexpected FSM response %T", actors.ErrOutcomeUnknown, p.f.Response())
	}
	return results, nil
}

// slogWriter carries hashicorp's log lines into our logger.
type slogWriter struct{ logger *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	w.logger.Warn(string(trimNewline(p)))
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}

var _ io.Writer = (*slogWriter)(nil)

// setPositive sets *dst to v when v is positive: a configuration's zero
// leaves hashicorp/raft's default (or the node's own) in place.
func setPositive[T ~uint64 | ~int64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}
