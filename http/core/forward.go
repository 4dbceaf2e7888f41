package core

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// forwardedHeader marks a request a follower forwarded, so that a request
// reaching a second follower (during an election) is refused, not bounced.
const forwardedHeader = "x-payments-forwarded-by"

// attemptHeader carries, on a forwarded request, the id the forwarding
// node gave the client's request: the same on every relay of it, so the
// leader that finds the request's own creation (an earlier relay committed
// before it was abandoned) answers it as a creation, not a replay.
const attemptHeader = "x-payments-attempt"

// attemptKey is the request's user value holding its attempt id
// (attemptOf).
const attemptKey = "payments.attempt"

// notLeaderHeader marks a refusal by a node that is not (or could not
// confirm that it is) the leader: nothing was done, and the forwarding
// node re-sends the request to the leader it learns of next.
const notLeaderHeader = "x-payments-not-leader"

// leaderWait bounds how long a request waits for a leader: elected, or
// confirmed by a quorum. A leader change after a crash takes an election
// timeout or two; a planned one (leadership transfer) much less.
const leaderWait = 8 * time.Second

// resendPause is how long a node waits before asking again a leader that
// refused a forward as not leading, when no change of leader was seen.
const resendPause = 20 * time.Millisecond

// forwardIfFollower sends the request to the leader when this node is not
// it, and relays the answer. It returns true when it answered. The leader
// does everything (authentication, rate limits, the write); the follower
// only relays, so a client may talk to any node.
func (s *Server) ForwardIfFollower(ctx *fasthttp.RequestCtx) bool {
	done, e := s.relay(ctx, true)
	if e != nil {
		WriteError(ctx, e)
	}
	return done
}

// relayToLeader is forwardIfFollower for a route that answers its own
// errors: true when the request is the leader's (relayed, or failed with
// the error to tell the client); false when this node serves it. It serves
// a write when it leads: the write's commit proves it still leads, and an
// answer no commit decided is confirmed before it goes (confirmAnswer). It
// serves a read when it leads and a quorum confirmed that after the request
// arrived (raft's ConfirmLeader), or, a follower, once it has applied
// through the leader's read index: either way the answer, read from this
// node's state, includes every write committed before the request.
//
// Without a confirmed leader the request waits, up to leaderWait, for one.
// A request forwarded to a leader that stops answering is re-sent to the
// next leader as soon as one is known, when re-sending is safe (a read, or
// a write that carries its idempotency reference).
func (s *Server) RelayToLeader(ctx *fasthttp.RequestCtx) (bool, *ledger.Error) {
	return s.relay(ctx, false)
}

// relay is relayToLeader; with followerReads, a follower serves reads
// itself once caught up. The dashboard and the hosted checkout do not:
// their pages keep some state in the leader's memory (sessions' last uses,
// simulated deposits on their way).
func (s *Server) relay(ctx *fasthttp.RequestCtx, followerReads bool) (bool, *ledger.Error) {
	c := s.Config.Cluster
	if c == nil {
		return false, nil
	}
	deadline := time.Now().Add(leaderWait)
	forwarded := len(ctx.Request.Header.Peek(forwardedHeader)) > 0
	if forwarded {
		noteForwarded(ctx)
	}
	read := ctx.IsGet() || ctx.IsHead()
	for {
		changed := c.LeaderChange()
		if c.IsLeader() {
			if !read {
				return false, nil
			}
			cctx, cancel := context.WithDeadline(context.Background(), deadline)
			err := c.ConfirmLeader(cctx)
			cancel()
			if err == nil {
				return false, nil
			}
		} else if read && followerReads && !forwarded && ctx.UserValue(leaderOnlyKey) == nil && s.readHere(deadline) {
			return false, nil
		} else if leader, ok := c.Leader(); ok && !forwarded && leader != c.ID() && s.peerAddr(leader) != "" {
			if e := s.ReadBody(ctx); e != nil {
				return true, e
			}
			switch outcome := s.forwardTo(ctx, leader, changed); outcome {
			case forwardAnswered:
				noteRelayed(ctx) // the leader that answered recorded it
				return true, nil
			case forwardUnknown:
				return true, &ledger.Error{Code: ledger.CodeOutcomeUnknown,
					Message: "The leader stopped answering mid-request; the outcome is unknown, and retrying with the same externalReference is safe"}
			}
			// Refused as not leading, unreachable, or abandoned for a new
			// leader: nothing was done there; ask the next one.
		}
		if forwarded {
			// The forwarding node re-sends to the leader it learns of.
			ctx.Response.Header.Set(notLeaderHeader, "1")
			return true, errNoLeader()
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return true, errNoLeader()
		}
		t := time.NewTimer(min(wait, 50*time.Millisecond))
		select {
		case <-changed:
			// A leader elected, or this node's role changed: a short pause
			// lets a new leader finish its barrier before it is asked.
			time.Sleep(resendPause)
		case <-t.C:
		}
		t.Stop()
	}
}

// readHere reports whether this follower may serve a read itself: it has
// applied through the leader's read index, learned from the leader now.
// Followers thereby add read capacity; when the leader cannot be asked, the
// read is relayed as a write is.
func (s *Server) readHere(deadline time.Time) bool {
	if limit := time.Now().Add(readIndexTimeout); limit.Before(deadline) {
		deadline = limit
	}
	cctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	return s.catchUpToLeader(cctx) == nil
}

// confirmAnswer reports whether the answer in ctx may go. A write's
// refusal (a 4xx but 429) and its replay from state were read from this
// node's state, which is current only if this node still leads: a quorum
// must confirm that after the answer was read, or the request goes to the
// next leader (nothing was done). Any other answer to a write was decided
// by its commit (which proves this node led), or says nothing of the state
// (429, 5xx). Reads were confirmed before they were served.
func (s *Server) confirmAnswer(ctx *fasthttp.RequestCtx) bool {
	c := s.Config.Cluster
	if c == nil || ctx.IsGet() || ctx.IsHead() {
		return true
	}
	st := ctx.Response.StatusCode()
	refusal := st >= 400 && st < 500 && st != fasthttp.StatusTooManyRequests
	replay := len(ctx.Response.Header.Peek("idempotent-replayed")) > 0
	if !refusal && !replay {
		return true
	}
	cctx, cancel := context.WithTimeout(context.Background(), leaderWait)
	defer cancel()
	if c.ConfirmLeader(cctx) == nil {
		return true
	}
	ctx.Response.Reset()
	s.Begin(ctx)
	WriteError(ctx, errNotLeaderNothingDone)
	return false
}

// leaderOnlyKey is the request's user value that keeps a read from being
// served by a follower: a follower's attempt at it needed the leader.
const leaderOnlyKey = "payments.leaderOnly"

func errNoLeader() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnavailable,
		Message: "No leader is available right now; nothing was done, retry shortly"}
}

type forwardOutcome int

const (
	forwardAnswered forwardOutcome = iota // the leader's answer is relayed
	forwardNotDone                        // nothing was done: ask the next leader
	forwardUnknown                        // the leader may have taken the write
)

// forwardTo sends the request to leader. While it waits for the answer, a
// change of leader (changed) abandons a request that is safe to re-send,
// which goes to the next leader, so a frozen or partitioned leader does not
// hold it for the length of the freeze. One that is not safe to re-send
// waits for the old leader's answer (after a planned transfer it still
// gives one), up to forwardTimeout, and ends as outcome unknown if the link
// breaks after it was sent.
func (s *Server) forwardTo(ctx *fasthttp.RequestCtx, leader string, changed <-chan struct{}) forwardOutcome {
	addr := s.peerAddr(leader)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	ctx.Request.CopyTo(req)
	req.SetHost(addr)
	req.Header.Set(forwardedHeader, s.Config.Cluster.ID())
	req.Header.Set(attemptHeader, s.attemptOf(ctx))
	s.signClientAddr(ctx, req)
	answered := make(chan error, 1)
	go func() { answered <- s.Forwarder(addr).DoTimeout(req, resp, forwardTimeout) }()
	release := func() {
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}
	resendable := resendSafe(ctx)
	for {
		select {
		case err := <-answered:
			defer release()
			if err != nil {
				s.warnForward(leader, err)
				if resendable || notSent(err) {
					return forwardNotDone
				}
				return forwardUnknown
			}
			if len(resp.Header.Peek(notLeaderHeader)) > 0 {
				return forwardNotDone
			}
			resp.CopyTo(&ctx.Response)
			return forwardAnswered
		case <-changed:
			changed = s.Config.Cluster.LeaderChange()
			// Abandoned only for a leader known to be another: while none is
			// known, the one asked may still answer (a blip in this node's
			// view of the leader, a leader re-elected), and abandoning it
			// then would send the request twice, the second a replay.
			if now, ok := s.Config.Cluster.Leader(); !ok || now == leader || !resendable {
				continue
			}
			// The old leader may still answer, late: its answer is
			// dropped. It can no longer confirm a read, and a write it
			// took is found again by its reference.
			go func() {
				<-answered
				release()
			}()
			return forwardNotDone
		}
	}
}

// attemptOf is the id of the client's request that ctx is an attempt of:
// the one the forwarding peer gave it, else this node's request id.
// It is drawn once per request: every attempt of the handler, and every
// relay, carries the same.
func (s *Server) attemptOf(ctx *fasthttp.RequestCtx) string {
	if a, ok := ctx.UserValue(attemptKey).(string); ok {
		return a
	}
	a := RequestIDOf(ctx)
	if h := ctx.Request.Header.Peek(attemptHeader); len(h) > 0 && len(h) <= 64 && s.FromPeer(ctx) {
		a = string(h)
	}
	ctx.SetUserValue(attemptKey, a)
	return a
}

// peerAddr is the HTTP address of member id: the cluster's, when it learns
// members' addresses (members added after this node started), else
// Config.PeerHTTP's.
func (s *Server) peerAddr(id string) string {
	if c, ok := s.Config.Cluster.(interface{ PeerHTTP(string) (string, bool) }); ok {
		if addr, ok := c.PeerHTTP(id); ok {
			return addr
		}
	}
	return s.Config.PeerHTTP[id]
}

// resendSafe reports whether the request may be sent to another leader
// while the first may still be working on it: reads, and writes that carry
// the idempotency reference that makes a second attempt a replay.
func resendSafe(ctx *fasthttp.RequestCtx) bool {
	if ctx.IsGet() || ctx.IsHead() {
		return true
	}
	var refs struct {
		ExternalReference string `json:"externalReference"`
		CustomerReference string `json:"customerReference"`
	}
	if json.Unmarshal(ctx.Request.Body(), &refs) != nil {
		return false
	}
	return refs.ExternalReference != "" || refs.CustomerReference != ""
}

// leaderLost reports whether the handler's answer is a failure of the write
// path because this node stopped leading, after which the request may go to
// the next leader: nothing was done, or the outcome is unknown and the
// request carries its idempotency reference.
func (s *Server) leaderLost(ctx *fasthttp.RequestCtx) bool {
	e, _ := ctx.UserValue(leaderLostKey).(*ledger.Error)
	switch {
	case e == nil || s.Config.Cluster == nil:
		return false
	case e == errNotLeaderNothingDone:
		if !s.Config.Cluster.IsLeader() {
			// A read this follower served needed a write (a signing
			// key drawn once): the next attempt goes to the leader.
			ctx.SetUserValue(leaderOnlyKey, true)
		}
		return true
	}
	// A commit that timed out on a node that still leads is not a leader
	// change: the client decides when to retry it.
	return !s.Config.Cluster.IsLeader() && resendSafe(ctx)
}

// notSent reports whether a forward failed before the request left: the
// leader never saw it.
func notSent(err error) bool {
	var op *net.OpError
	return errors.Is(err, fasthttp.ErrDialTimeout) || (errors.As(err, &op) && op.Op == "dial")
}

// warnForward logs a failed forward, at most once a second: when the
// leader is unreachable, every request forwarded to it fails alike.
func (s *Server) warnForward(leader string, err error) {
	if ok, held := s.forwardFailLog.allow(time.Now()); ok {
		s.Logger.Warn("forward to leader failed", "leader", leader, "err", err, "suppressed_since_last", held)
	}
}

func (s *Server) Forwarder(addr string) *fasthttp.HostClient {
	s.forwardMu.Lock()
	defer s.forwardMu.Unlock()
	c, ok := s.forwarders[addr]
	if !ok {
		c = &fasthttp.HostClient{
			Addr:                  addr,
			MaxConns:              1024,
			ReadTimeout:           forwardTimeout,
			WriteTimeout:          forwardTimeout,
			MaxIdleConnDuration:   idleTimeout,
			SecureErrorLogMessage: true, // a malformed answer is not quoted into the log
		}
		s.forwarders[addr] = c
	}
	return c
}
