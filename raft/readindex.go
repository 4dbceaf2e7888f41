package raft

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	hraft "github.com/hashicorp/raft"
)

// ErrNotConfirmed is ConfirmLeader's answer when this node cannot show that
// it still leads: it may have been deposed (frozen, partitioned) while a
// new leader took writes, so its state may be stale. Nothing was read.
var ErrNotConfirmed = errors.New("raft: leadership not confirmed by a quorum")

// ReadIndex returns the leader's read index: its commit index when the
// call began, once a quorum confirmed (ConfirmLeader) that it still led
// then. Every entry committed before the call is at or below it, so a node
// whose readers see through it (WaitApplied) answers from state that
// includes them. A follower asks the leader for it (package http) before a
// definite answer read from its own state.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	index := n.raft.CommitIndex()
	if err := n.ConfirmLeader(ctx); err != nil {
		return 0, err
	}
	return index, nil
}

// WaitApplied waits until readers on this node see every entry up to index
// (VisibleThrough), or ctx ends.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		changed := n.fsm.visibleChanges.wait()
		if n.VisibleThrough(index) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.done:
			return ErrClosed
		}
	}
}

// ErrClosed is WaitApplied's answer once the node is closed.
var ErrClosed = errors.New("raft: node closed")

// VisibleThrough reports whether readers on this node see every entry up to
// index. The state machine never sees some entries (a new term's no-op,
// barriers, which hashicorp/raft does not hand it): those between what it
// applied and index need no waiting for.
func (n *Node) VisibleThrough(index uint64) bool {
	visible := n.fsm.visible.Load()
	if visible >= index {
		return true
	}
	if n.raft.AppliedIndex() < index {
		return false
	}
	var l hraft.Log
	for i := index; i > visible; i-- {
		if err := n.logs.GetLog(i, &l); err != nil {
			return false
		}
		if l.Type == hraft.LogCommand || l.Type == hraft.LogConfiguration {
			return false
		}
	}
	return true
}

// leaderCommit is the commit index a follower last heard from its leader
// (AppendEntries carries it; a snapshot sent to it implies its index), and
// in which term: a follower behind it is catching up (Ready).
type leaderCommit struct {
	mu    sync.Mutex
	term  uint64
	index uint64
}

func (c *leaderCommit) saw(term, index uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case term > c.term:
		c.term, c.index = term, index
	case term == c.term && index > c.index:
		c.index = index
	}
}

func (c *leaderCommit) get() (term, index uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.term, c.index
}

// ConfirmLeader returns nil when this node leads, a quorum acknowledged that
// after the call began, and the state readers see holds every write
// acknowledged before it began: a definite answer read from the state
// after it is current (linearizable). Otherwise ErrNotConfirmed, or ctx's
// error.
//
// It is the read-index barrier: calls that arrive while a confirmation
// round is in flight share the next round, so under load one heartbeat
// round to the followers serves many requests.
//
// Why no wait for the applied index after a VerifyLeader round: a leader acknowledges
// a write only once its state machine applied it, and becomes ready (see
// IsLeader) only once its Barrier applied every entry of earlier terms. So
// when the round confirms the very term this node became ready in, every
// write any leader acknowledged is already in the state readers see.
func (n *Node) ConfirmLeader(ctx context.Context) error {
	_, err := n.confirm.Do(ctx, n.confirmRoundValue)
	return err
}

// confirmRoundValue is confirmRound in the shape rounds.Rounds runs.
func (n *Node) confirmRoundValue() (struct{}, error) { return struct{}{}, n.confirmRound() }

// confirmRound runs one round: the term must be the one this node became
// ready in, before and after a quorum confirms it still leads.
//
// VerifyLeader alone is not proof after this process was paused (SIGSTOP,
// a stall of the machine): hashicorp counts every successful reply that
// arrives after the call, including replies to heartbeats and appends sent
// before the pause, when the followers had not yet elected another leader.
// So a round near a pause commits a Barrier instead: an entry of this term
// that only a quorum acknowledging it now can commit, and that returns once
// every entry before it is applied.
func (n *Node) confirmRound() error {
	term := n.readyTerm.Load()
	if term == 0 || !n.IsLeader() {
		return ErrNotConfirmed
	}
	began := n.pauses.now()
	var err error
	if n.soleVoter() {
		// Nobody else can be elected, and only this node can commit a
		// change to that: while it still leads in the term it became
		// ready in (checked below), it is the leader. No round through
		// Raft's main loop is needed (the configuration is read from an
		// atomic copy).
		if n.raft.State() != hraft.Leader {
			err = ErrNotConfirmed
		}
	} else if n.pauses.pausedSince(began - pauseWindow.Nanoseconds()) {
		err = n.raft.Barrier(appendTimeout).Error()
	} else if err = n.raft.VerifyLeader().Error(); err == nil && n.pauses.pausedSince(began) {
		err = n.raft.Barrier(appendTimeout).Error()
	}
	if err != nil || n.raft.CurrentTerm() != term || n.readyTerm.Load() != term {
		return ErrNotConfirmed
	}
	return nil
}

// soleVoter reports whether this node is the configuration's only voter.
func (n *Node) soleVoter() bool {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	voters := 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == hraft.Voter {
			if string(s.ID) != n.cfg.ID {
				return false
			}
			voters++
		}
	}
	return voters == 1
}

// pauseWindow is how long after a pause of the process rounds confirm by
// Barrier: replies held in sockets and goroutines during the pause are
// all read well within it.
const pauseWindow = 2 * time.Second

// pauseDetector notices when this process did not run for a while: its
// ticks, every period, find a gap longer than the threshold.
type pauseDetector struct {
	base      time.Time     // monotonic origin of the nanosecond counts
	threshold time.Duration // a gap longer than this is a pause
	lastTick  atomic.Int64  // ns since base
	lastPause atomic.Int64  // ns since base when the last pause was seen to end
}

func newPauseDetector(threshold time.Duration) *pauseDetector {
	p := &pauseDetector{base: time.Now(), threshold: threshold}
	p.lastPause.Store(-1 << 62)
	return p
}

func (p *pauseDetector) now() int64 { return int64(time.Since(p.base)) }

func (p *pauseDetector) run(done <-chan struct{}) {
	t := time.NewTicker(p.threshold / 5)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			now := p.now()
			if now-p.lastTick.Load() > int64(p.threshold) {
				p.lastPause.Store(now)
			}
			p.lastTick.Store(now)
		}
	}
}

// pausedSince reports whether a pause ended at or after from (ns since
// base), or one is ending now (the ticker has not run since).
func (p *pauseDetector) pausedSince(from int64) bool {
	return p.now()-p.lastTick.Load() > int64(p.threshold) || p.lastPause.Load() >= from
}

// broadcast tells waiters of a change (of the known leader, of this node's
// readiness, of what readers see): each gets a channel that is closed at
// the next change.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBroadcast() *broadcast { return &broadcast{ch: make(chan struct{})} }

func (c *broadcast) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

func (c *broadcast) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ch)
	c.ch = make(chan struct{})
}

// LeaderChange returns a channel closed at the next change of the known
// leader, of this node's role, or of its readiness to lead.
func (n *Node) LeaderChange() <-chan struct{} { return n.changes.wait() }

// watchObservations turns Raft's observations of leaders and roles into
// LeaderChange's broadcasts.
func (n *Node) watchObservations(obs <-chan hraft.Observation) {
	defer n.wg.Done()
	for {
		select {
		case <-n.done:
			return
		case o := <-obs:
			if _, ok := o.Data.(hraft.PeerObservation); ok {
				n.fitTimeouts()
				continue
			}
			n.changes.notify()
		}
	}
}

// TransferLeadership hands leadership to the most up-to-date follower and
// waits until one took it (or the attempt failed). A node that does not
// lead returns nil at once. Called before a planned stop, it spares the
// cluster an election timeout of unavailability.
func (n *Node) TransferLeadership() error {
	if n.raft.State() != hraft.Leader {
		return nil
	}
	return n.raft.LeadershipTransfer().Error()
}
