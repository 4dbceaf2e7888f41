package core

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/ledger"
)

// Request bodies are streamed (fasthttp's StreamRequestBody): fasthttp reads
// the headers and at most 8 KiB of the body before the handler, and the
// rest is read by readBody, which every pipeline calls only once the
// request is authenticated (route: the key, rate limit and scope; the
// internal blob routes: the peer token; the hosted checkout: its limit per
// address and cross-site check) or is about to be relayed to the leader. A
// request refused before that is answered without reading its body, and
// its connection is closed so that the unread bytes are never parsed as a
// request (guardBody).
//
// Bodies being read or held are counted against bodyGate, a bound on
// bytes in flight over all requests: past it a request is refused with 503
// and Retry-After before any of its body is read.

const (
	// defaultBodyBytesInFlightMax is Config.BodyBytesInFlightMax's default:
	// room for 25 uploads of the largest file at once.
	defaultBodyBytesInFlightMax = 256 << 20
	BodyReadKey                 = "payments.bodyRead" // ctx user value: the body was read (or refused)
	bodyHeldKey                 = "payments.bodyHeld" // ctx user value: bytes held in bodyGate
)

// bodyGate counts the bytes of request bodies in flight.
type bodyGate struct {
	inFlight atomic.Int64
	max      int64
}

// take reserves n bytes, or returns false if that would pass the bound.
func (g *bodyGate) take(n int64) bool {
	if g.inFlight.Add(n) > g.max {
		g.inFlight.Add(-n)
		return false
	}
	return true
}

func (g *bodyGate) give(n int64) { g.inFlight.Add(-n) }

// readBody reads the request's body, up to the route's limit
// (bodyLimitFor), into the request, so that ctx.PostBody and friends see it.
// It reads at most once; the error is for the caller to answer (the
// connection is then closed).
func (s *Server) ReadBody(ctx *fasthttp.RequestCtx) *ledger.Error {
	if ctx.UserValue(BodyReadKey) != nil {
		return nil
	}
	ctx.SetUserValue(BodyReadKey, true)
	stream := ctx.RequestBodyStream()
	if stream == nil {
		return nil // not streamed: fasthttp read it (a body under its first read)
	}
	limit := BodyLimitFor(&ctx.Request.Header)
	declared := ctx.Request.Header.ContentLength() // -1: chunked
	if declared > limit {
		ctx.SetConnectionClose()
		return BodyTooLarge(limit)
	}
	reserve := int64(limit)
	if declared >= 0 {
		reserve = int64(declared)
	}
	if reserve > 0 {
		if !s.bodies.take(reserve) {
			ctx.SetConnectionClose()
			ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, "1")
			return &ledger.Error{Code: ledger.CodeUnavailable,
				Message: "Too many request bodies are being received right now; nothing was done, retry shortly"}
		}
		ctx.SetUserValue(bodyHeldKey, reserve)
	}
	buf := make([]byte, 0, max(declared, 0)+1)
	body, err := readUpTo(stream, buf, limit)
	switch {
	case errors.Is(err, errBodyPastLimit):
		ctx.SetConnectionClose()
		return BodyTooLarge(limit)
	case err != nil:
		ctx.SetConnectionClose()
		return &ledger.Error{Code: ledger.CodeValidation, Message: "The request body could not be read: " + strconv.Quote(bodyReadProblem(err))}
	}
	ctx.Request.SetBodyRaw(body) // also releases the stream
	return nil
}

var errBodyPastLimit = errors.New("body past the limit")

// readUpTo reads r to its end into buf, failing past limit bytes.
func readUpTo(r io.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return nil, errBodyPastLimit
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// bodyReadProblem names a read failure without quoting the bytes.
func bodyReadProblem(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ended early"
	}
	return "it is malformed"
}

// guardBody wraps the router: after the handler, it gives back the bytes
// the request held in bodyGate, and closes the connection of a request
// whose body was never read. A connection closed with a body not read to
// its end is closed lingering (linger.go), so that the client, still
// sending, reads the answer rather than a reset.
func (s *Server) guardBody(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		next(ctx)
		if n, ok := ctx.UserValue(bodyHeldKey).(int64); ok {
			s.bodies.give(n)
			ctx.SetUserValue(bodyHeldKey, nil)
		}
		if ctx.RequestBodyStream() != nil && ctx.Request.Header.ContentLength() != 0 {
			if ctx.UserValue(BodyReadKey) == nil {
				ctx.SetConnectionClose()
			}
			if ctx.Response.ConnectionClose() || ctx.Request.Header.ConnectionClose() {
				lingerOnClose(ctx)
			}
		}
	}
}

// followerKeyWait bounds how long a follower waits, for a well-formed key
// it does not know, to learn the leader's read index and apply up to it.
const followerKeyWait = 2 * time.Second

// authenticateOnFollower checks a request's key on a follower before its
// body is read and relayed: a missing or malformed key is refused at once.
// A well-formed key the follower does not know may have been created on
// the leader a moment ago, or this node may be catching up (restarted
// empty, restored, paused): it is refused only once this node has applied
// everything committed before the request arrived (the leader's read
// index); if it cannot get there in time, the answer is 503 with
// Retry-After, never a 401 from state it has not caught up on.
func (s *Server) authenticateOnFollower(ctx *fasthttp.RequestCtx) *ledger.Error {
	_, err := s.authenticate(ctx)
	if err == nil {
		return nil
	}
	secret, ok := bearerSecret(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	if !ok || !bytes.HasPrefix(secret, []byte(actors.KeyPrefix(s.Config.Live))) {
		return err
	}
	wait, cancel := context.WithTimeout(context.Background(), followerKeyWait)
	defer cancel()
	key, found, cerr := s.Config.Actors.KeyBySecret(wait, secret, func(ctx context.Context) error {
		if e := s.catchUpToLeader(ctx); e != nil {
			return e
		}
		return nil
	})
	switch {
	case cerr != nil:
		return errCatchingUp()
	case !found || key.Revoked:
		return err
	}
	return nil
}
