package http

import (
	"time"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// forwardedHeader marks a request a follower forwarded, so that a request
// reaching a second follower (during an election) is refused, not bounced.
const forwardedHeader = "x-payments-forwarded-by"

// forwardIfFollower sends the request to the leader when this node is not
// it, and relays the answer. It returns true when it answered. The leader
// does everything (authentication, rate limits, the write); the follower
// only relays, so a client may talk to any node.
func (s *Server) forwardIfFollower(ctx *fasthttp.RequestCtx) bool {
	done, e := s.relayToLeader(ctx)
	if e != nil {
		writeError(ctx, e)
	}
	return done
}

// relayToLeader is forwardIfFollower for a route that answers its own
// errors: true when the request is the leader's (relayed, or failed with
// the error to tell the client).
func (s *Server) relayToLeader(ctx *fasthttp.RequestCtx) (bool, *ledger.Error) {
	if s.cfg.Cluster == nil || s.cfg.Cluster.IsLeader() {
		return false, nil
	}
	leader, ok := s.cfg.Cluster.Leader()
	addr := s.cfg.PeerHTTP[leader]
	if !ok || leader == s.cfg.Cluster.ID() || addr == "" || len(ctx.Request.Header.Peek(forwardedHeader)) > 0 {
		return true, &ledger.Error{Code: ledger.CodeUnavailable,
			Message: "No leader is available right now; nothing was done, retry shortly"}
	}
	if e := s.readBody(ctx); e != nil {
		return true, e
	}
	client := s.forwarder(addr)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	ctx.Request.CopyTo(req)
	req.SetHost(addr)
	req.Header.Set(forwardedHeader, s.cfg.Cluster.ID())
	s.signClientAddr(ctx, req)
	if err := client.DoTimeout(req, resp, forwardTimeout); err != nil {
		if ok, held := s.forwardFailLog.allow(time.Now()); ok {
			s.logger.Warn("forward to leader failed", "leader", leader, "err", err, "suppressed_since_last", held)
		}
		code := ledger.CodeUnavailable
		msg := "The leader could not be reached; nothing was done, retry shortly"
		if !isIdempotentMethod(ctx) {
			// The leader may have taken the write before the link broke.
			code = ledger.CodeOutcomeUnknown
			msg = "The leader stopped answering mid-request; the outcome is unknown, and retrying with the same externalReference is safe"
		}
		return true, &ledger.Error{Code: code, Message: msg}
	}
	resp.CopyTo(&ctx.Response)
	return true, nil
}

func isIdempotentMethod(ctx *fasthttp.RequestCtx) bool {
	return ctx.IsGet() || ctx.IsHead()
}

func (s *Server) forwarder(addr string) *fasthttp.HostClient {
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
