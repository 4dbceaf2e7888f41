package raft

import (
	"bytes"
	"encoding/json"
	"maps"
	"sync/atomic"

	hraft "github.com/hashicorp/raft"

	"payments/wal"
)

// Members' HTTP addresses travel through the log, so that every node can
// forward to a leader that joined after it started (its --peers names only
// the members it started with). An entry is memberMagic and a JSON object
// of id → HTTP address; the state machine keeps them in the state store,
// so they survive snapshots and restarts.
const memberMagic = "PAYMEMBR"

// memberKeyPrefix keys a member's HTTP address in the state store, past
// every key of the ledger (whose keys start with a letter), so that dumps
// and snapshots carry it and the ledger's scans never meet it.
var memberKeyPrefix = []byte("\xferaft/member-http/")

// memberAddrs is the replicated map, published whole on each change.
type memberAddrs struct {
	m atomic.Pointer[map[string]string]
}

func (a *memberAddrs) get(id string) (string, bool) {
	if m := a.m.Load(); m != nil {
		v, ok := (*m)[id]
		return v, ok
	}
	return "", false
}

// load reads the map from the state store.
func (a *memberAddrs) load(store *wal.StateStore) error {
	it, err := store.NewIter(memberKeyPrefix, append(bytes.Clone(memberKeyPrefix), 0xff))
	if err != nil {
		return err
	}
	m := map[string]string{}
	for it.First(); it.Valid(); it.Next() {
		m[string(it.Key()[len(memberKeyPrefix):])] = string(it.Value())
	}
	if err := it.Close(); err != nil {
		return err
	}
	a.m.Store(&m)
	return nil
}

// isMemberEntry reports whether a command entry carries member addresses.
func isMemberEntry(data []byte) bool { return bytes.HasPrefix(data, []byte(memberMagic)) }

// stage decodes a member entry into changes, to be written with the batch.
func stageMemberEntry(data []byte, changes map[string]string) error {
	var m map[string]string
	if err := json.Unmarshal(data[len(memberMagic):], &m); err != nil {
		return err
	}
	maps.Copy(changes, m)
	return nil
}

// write puts changes into the batch; publish makes them visible once the
// batch is committed.
func (a *memberAddrs) write(b *wal.StateBatch, changes map[string]string) error {
	for id, addr := range changes {
		if err := b.Set(append(bytes.Clone(memberKeyPrefix), id...), []byte(addr)); err != nil {
			return err
		}
	}
	return nil
}

func (a *memberAddrs) publish(changes map[string]string) {
	m := map[string]string{}
	if old := a.m.Load(); old != nil {
		maps.Copy(m, *old)
	}
	maps.Copy(m, changes)
	a.m.Store(&m)
}

// PeerHTTP returns the HTTP address of member id: from the log when a
// member announced it there, else from this node's --peers.
func (n *Node) PeerHTTP(id string) (string, bool) {
	if addr, ok := n.fsm.members.get(id); ok {
		return addr, true
	}
	addr, ok := n.cfg.PeerHTTP[id]
	return addr, ok && addr != ""
}

// announceMembers commits member HTTP addresses to the log.
func (n *Node) announceMembers(addrs map[string]string) error {
	data, err := json.Marshal(addrs)
	if err != nil {
		return err
	}
	f := n.raft.Apply(append([]byte(memberMagic), data...), membershipTimeout)
	if err := f.Error(); err != nil {
		return leaderError(err)
	}
	if !n.fsm.waitCommitted(f.Index(), n.done) {
		return hraft.ErrRaftShutdown
	}
	return nil
}

// AddNonvoter adds a node that replicates the log (or receives a snapshot)
// without voting, announcing its HTTP address (and every address this node
// knows) to the cluster first. Promote makes it a voter once it caught up.
// It returns the leader's commit index: a joining node has caught up once
// it applied that far.
func (n *Node) AddNonvoter(id, raftAddr, httpAddr string) (uint64, error) {
	if !n.IsLeader() {
		return 0, ErrNotLeading
	}
	if _, _, err := n.member(id); err == nil {
		return 0, ErrAlreadyMember
	}
	addrs := map[string]string{id: httpAddr}
	for k, v := range n.cfg.PeerHTTP {
		if _, ok := n.fsm.members.get(k); !ok && v != "" {
			addrs[k] = v
		}
	}
	if err := n.announceMembers(addrs); err != nil {
		return 0, err
	}
	if err := n.raft.AddNonvoter(hraft.ServerID(id), hraft.ServerAddress(raftAddr), 0, membershipTimeout).Error(); err != nil {
		return 0, leaderError(err)
	}
	return n.raft.CommitIndex(), nil
}

// Promote makes the non-voter id a voter.
func (n *Node) Promote(id string) error {
	s, index, err := n.leaderMember(id)
	if err != nil {
		return err
	}
	if s.Suffrage == hraft.Voter {
		return nil
	}
	if err := n.raft.AddVoter(s.ID, s.Address, index, membershipTimeout).Error(); err != nil {
		return leaderError(err)
	}
	n.fitTimeouts()
	return nil
}

// CaughtUp reports whether this node has applied the log up to index and
// knows a leader: a joining node waits for it before asking to vote.
func (n *Node) CaughtUp(index uint64) bool {
	return n.Ready() && n.raft.AppliedIndex() >= index
}

// RaftAddr is the address this node's Raft transport listens on.
func (n *Node) RaftAddr() string { return string(n.transport.LocalAddr()) }
