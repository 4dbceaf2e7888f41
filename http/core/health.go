package core

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

type healthBody struct {
	Status string `json:"status"`
	Node   string `json:"node,omitempty"`
	Role   string `json:"role,omitempty"`
	Leader string `json:"leader,omitempty"`
}

// healthz answers while the process is up; it needs no key.
func (s *Server) healthz(ctx *fasthttp.RequestCtx) {
	s.Begin(ctx)
	WriteJSON(ctx, fasthttp.StatusOK, &healthBody{Status: "ok"})
}

// StartDraining marks the node as shutting down: from now on /readyz
// answers 503, so load balancers stop sending it new requests while it
// still serves those that come and finishes those in flight. It is not
// undone: a node drains once, then exits.
func (s *Server) StartDraining() { s.draining.Store(true) }

// readyz answers 200 when the node can serve: it is not shutting down, a
// leader is known and this node has applied everything it knows to be
// committed.
func (s *Server) readyz(ctx *fasthttp.RequestCtx) {
	s.Begin(ctx)
	if s.draining.Load() {
		WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable,
			Message: "Not ready: this node is shutting down and finishing the requests in flight; send new requests to another node"})
		return
	}
	c := s.Config.Cluster
	body := healthBody{Status: "ready", Node: c.ID(), Role: "follower"}
	if c.IsLeader() {
		body.Role = "leader"
	}
	body.Leader, _ = c.Leader()
	if !c.Ready() {
		msg := "Not ready: no leader is known yet"
		if _, known := c.Leader(); known {
			visible, commit := c.CatchUp()
			msg = "Not ready: this node is catching up with the leader (applied through index " +
				strconv.FormatUint(visible, 10) + " of " + strconv.FormatUint(commit, 10) + ")"
		}
		WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable, Message: msg})
		return
	}
	// A fresh cluster is ready once its bootstrap organization and key are
	// committed: before that every key would be refused.
	if a := s.Config.Actors; a != nil {
		st := a.Reader()
		_, bootstrapped := st.FirstOrganization()
		if !bootstrapped {
			WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable,
				Message: "Not ready: the first organization and its key are not committed yet"})
			return
		}
	}
	WriteJSON(ctx, fasthttp.StatusOK, &body)
}
