package raft

import (
	"errors"
	"time"

	hraft "github.com/hashicorp/raft"
)

// Errors of membership changes, for the operator's tools to tell apart.
var (
	// ErrNotLeading: only the leader changes membership or hands over
	// leadership; ask it (Status names it).
	ErrNotLeading = errors.New("raft: this node is not the leader")
	// ErrNotMember: the named node is not in the cluster's configuration.
	ErrNotMember = errors.New("raft: no such member")
	// ErrAlreadyMember: a node with that id is in the configuration.
	ErrAlreadyMember = errors.New("raft: a member with that id exists; remove it first")
)

// membershipTimeout bounds a configuration change's wait to be appended.
const membershipTimeout = 10 * time.Second

// Member is one server of the cluster's latest configuration.
type Member struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	Voter    bool   `json:"voter"`
	Leader   bool   `json:"leader"`
}

// Members lists the latest configuration (committed or not).
func (n *Node) Members() ([]Member, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	_, leader := n.raft.LeaderWithID()
	var out []Member
	for _, s := range f.Configuration().Servers {
		out = append(out, Member{ID: string(s.ID), RaftAddr: string(s.Address),
			Voter: s.Suffrage == hraft.Voter, Leader: s.ID == leader})
	}
	return out, nil
}

// NodeStatus is this node's own view of Raft: what an operator compares
// across members.
type NodeStatus struct {
	ID           string    `json:"id"`
	Role         string    `json:"role"` // Leader, Follower, Candidate, Shutdown
	Leader       string    `json:"leader,omitempty"`
	Term         uint64    `json:"term"`
	LastLogIndex uint64    `json:"lastLogIndex"`
	CommitIndex  uint64    `json:"commitIndex"`
	AppliedIndex uint64    `json:"appliedIndex"` // Raft's: every entry handed to the state machine
	LastContact  time.Time `json:"lastContact"`  // a follower's last message from the leader; zero on the leader
}

// Status returns this node's view of Raft.
func (n *Node) Status() NodeStatus {
	_, leader := n.raft.LeaderWithID()
	st := NodeStatus{
		ID: n.cfg.ID, Role: n.raft.State().String(), Leader: string(leader),
		Term: n.raft.CurrentTerm(), LastLogIndex: n.raft.LastIndex(),
		CommitIndex: n.raft.CommitIndex(), AppliedIndex: n.raft.AppliedIndex(),
	}
	if n.raft.State() != hraft.Leader {
		st.LastContact = n.raft.LastContact()
	}
	return st
}

// member returns the configuration's server with id.
func (n *Node) member(id string) (hraft.Server, uint64, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return hraft.Server{}, 0, err
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == id {
			return s, f.Index(), nil
		}
	}
	return hraft.Server{}, 0, ErrNotMember
}

// leaderMember is member on the leader, the one node that changes the
// configuration; ErrNotLeading elsewhere.
func (n *Node) leaderMember(id string) (hraft.Server, uint64, error) {
	if !n.IsLeader() {
		return hraft.Server{}, 0, ErrNotLeading
	}
	return n.member(id)
}

// RemoveMember removes the member id from the cluster (a dead node, before
// a fresh one replaces it). The leader removing itself steps down once the
// change commits.
func (n *Node) RemoveMember(id string) error {
	_, index, err := n.leaderMember(id)
	if err != nil {
		return err
	}
	if err := n.raft.RemoveServer(hraft.ServerID(id), index, membershipTimeout).Error(); err != nil {
		return leaderError(err)
	}
	n.fitTimeouts()
	return nil
}

// TransferLeadershipTo hands leadership to the voter id and waits until it
// took it.
func (n *Node) TransferLeadershipTo(id string) error {
	s, _, err := n.leaderMember(id)
	if err != nil {
		return err
	}
	if s.Suffrage != hraft.Voter {
		return errors.New("raft: " + id + " is not a voter and cannot lead")
	}
	if id == n.cfg.ID {
		return nil
	}
	return leaderError(n.raft.LeadershipTransferToServer(s.ID, s.Address).Error())
}

func leaderError(err error) error {
	if errors.Is(err, hraft.ErrNotLeader) {
		return ErrNotLeading
	}
	return err
}
