package core

import (
	"context"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// The read index across nodes. A definite answer read from a node's own
// state (a 401 for a key it does not know) must come from state that
// includes every entry committed before the request arrived. The leader
// knows that index: its commit index, once a quorum confirms it still
// leads (raft's ReadIndex). A follower asks the leader for it over
// /internal/read-index and waits until its own readers see through it
// (WaitApplied). Calls that arrive while a round to the leader is in
// flight share the next one, so under load one round serves many.

// readIndexPath is the leader's endpoint: no API key (it reveals only a log
// index), never forwarded.
const readIndexPath = "/internal/read-index"

// readIndexTimeout bounds one round to the leader.
const readIndexTimeout = time.Second

// serveReadIndex: GET /internal/read-index, on the leader. Elsewhere it
// answers 503 with the not-leader header: ask the next leader.
func (s *Server) serveReadIndex(ctx *fasthttp.RequestCtx) {
	s.Begin(ctx)
	c := s.Config.Cluster
	if c == nil {
		WriteError(ctx, errNoLeader())
		return
	}
	cctx, cancel := context.WithTimeout(context.Background(), readIndexTimeout)
	defer cancel()
	index, err := c.ReadIndex(cctx)
	if err != nil {
		ctx.Response.Header.Set(notLeaderHeader, "1")
		WriteError(ctx, errNoLeader())
		return
	}
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(strconv.FormatUint(index, 10))
}

// errCatchingUp answers a request this node cannot yet give a definite
// answer to.
func errCatchingUp() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnavailable,
		Message: "This node is catching up with the cluster and cannot answer this request yet; nothing was done, retry shortly"}
}

// catchUpToLeader waits until this node's readers see every entry
// committed before the call: the leader's read index, learned from the
// leader (or, on the leader, its own). It answers 503 (errCatchingUp) when
// ctx ends first.
func (s *Server) catchUpToLeader(ctx context.Context) *ledger.Error {
	c := s.Config.Cluster
	for {
		changed := c.LeaderChange()
		var index uint64
		var err error
		leader, known := c.Leader()
		switch {
		case c.IsLeader():
			index, err = c.ReadIndex(ctx)
		case known && leader != c.ID() && s.peerAddr(leader) != "":
			index, err = s.readIndexRounds.Do(ctx, s.leaderReadIndex)
		default:
			err = errNoLeaderKnown
		}
		if err == nil {
			if c.WaitApplied(ctx, index) == nil {
				return nil
			}
			return errCatchingUp()
		}
		select {
		case <-changed:
		case <-time.After(resendPause):
		case <-ctx.Done():
			return errCatchingUp()
		}
	}
}

var errNoLeaderKnown = &ledger.Error{Code: ledger.CodeUnavailable, Message: "no leader known"}

// leaderReadIndex asks the leader this node knows of for its read index.
func (s *Server) leaderReadIndex() (uint64, error) {
	leader, ok := s.Config.Cluster.Leader()
	if !ok || leader == s.Config.Cluster.ID() {
		return 0, errNoLeaderKnown
	}
	addr := s.peerAddr(leader)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + readIndexPath)
	req.Header.Set(forwardedHeader, s.Config.Cluster.ID())
	if err := s.Forwarder(addr).DoTimeout(req, resp, readIndexTimeout); err != nil {
		return 0, err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return 0, errNoLeaderKnown
	}
	return strconv.ParseUint(string(resp.Body()), 10, 64)
}
