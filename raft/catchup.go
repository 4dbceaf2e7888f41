package raft

import (
	hraft "github.com/hashicorp/raft"
)

// A follower compacts its log after its own snapshots, keeping only
// TrailingLogs entries behind it. A leader that has not heard the
// follower's answers for a while (replies lost one way, a new leader that
// starts from its own last index) can hold a next index for it below the
// follower's first entry. hashicorp/raft's follower then refuses every
// append, for want of the previous entry, the leader steps back one entry
// at a time down to index 1 (it has those entries, so it never sends a
// snapshot), and the follower never catches up.
//
// catchUpTransport answers that case on the follower: the entries below
// its first one were compacted after being applied, so they are committed
// and are the leader's own (Raft's leader completeness). An append that
// starts below the first entry is cut to start at it: its previous entry
// becomes the request's entry at the first index, which Raft checks
// against the log as usual. An append that ends below the first entry,
// all of it applied here, becomes an empty append with no previous entry
// and no commit index: Raft checks its term and answers success, and the
// leader moves on past it.
type catchUpTransport struct {
	hraft.Transport
	rpcs chan hraft.RPC
}

// catchUpPreVoteTransport keeps the inner transport's pre-vote support,
// which hashicorp/raft detects by the interface.
type catchUpPreVoteTransport struct {
	*catchUpTransport
	preVote hraft.WithPreVote
}

func (t catchUpPreVoteTransport) RequestPreVote(id hraft.ServerID, target hraft.ServerAddress, args *hraft.RequestPreVoteRequest, resp *hraft.RequestPreVoteResponse) error {
	return t.preVote.RequestPreVote(id, target, args, resp)
}

// wrapCatchUp returns inner with its incoming appends rewritten as
// catchUpTransport says; bounds reports the log's first index and the
// applied index, and saw is told each leader's term and commit index as
// its appends and snapshots arrive. It forwards until done is closed.
func wrapCatchUp(inner hraft.Transport, bounds func() (first, applied uint64), saw func(term, commit uint64), done <-chan struct{}) hraft.Transport {
	t := &catchUpTransport{Transport: inner, rpcs: make(chan hraft.RPC)}
	go func() {
		in := inner.Consumer()
		for {
			select {
			case <-done:
				return
			case rpc := <-in:
				switch req := rpc.Command.(type) {
				case *hraft.AppendEntriesRequest:
					saw(req.Term, req.LeaderCommitIndex)
					first, applied := bounds()
					rpc.Command = appendFromFirst(req, first, applied)
				case *hraft.InstallSnapshotRequest:
					saw(req.Term, req.LastLogIndex)
				}
				select {
				case t.rpcs <- rpc:
				case <-done:
					return
				}
			}
		}
	}()
	if pv, ok := inner.(hraft.WithPreVote); ok {
		return catchUpPreVoteTransport{catchUpTransport: t, preVote: pv}
	}
	return t
}

func (t *catchUpTransport) Consumer() <-chan hraft.RPC { return t.rpcs }

// appendFromFirst returns req, or a copy cut to the follower's log whose
// first entry is first, when req's previous entry is below it (see
// catchUpTransport). Only entries applied here are dropped: they are
// committed, so the leader's are the same. The request is never changed in
// place: over an in-memory transport it is the leader's own.
func appendFromFirst(req *hraft.AppendEntriesRequest, first, applied uint64) *hraft.AppendEntriesRequest {
	if req.PrevLogEntry == 0 || first == 0 || req.PrevLogEntry >= first || len(req.Entries) == 0 {
		return req
	}
	from, last := req.Entries[0].Index, req.Entries[len(req.Entries)-1].Index
	if from != req.PrevLogEntry+1 || last-from+1 != uint64(len(req.Entries)) {
		return req // not contiguous: leave it to Raft
	}
	cut := *req
	newPrev := min(applied, last) // the last entry of req known to match
	switch {
	case newPrev < from, newPrev < first && newPrev < last:
		// Nothing of it applied here, or entries past the applied ones
		// that the log here cannot be checked against: leave it to Raft.
		return req
	case newPrev < first:
		// Every entry is applied and compacted here: an append with no
		// previous entry and no commit index only checks the term.
		cut.PrevLogEntry, cut.PrevLogTerm, cut.Entries, cut.LeaderCommitIndex = 0, 0, nil, 0
	default:
		k := newPrev - from
		cut.PrevLogEntry, cut.PrevLogTerm, cut.Entries = newPrev, req.Entries[k].Term, req.Entries[k+1:]
	}
	return &cut
}
