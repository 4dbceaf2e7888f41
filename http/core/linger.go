package core

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Lingering close. A connection closed while its client is still sending
// (a body refused before or while it was read: past a limit, without a
// key, an unknown route) makes the kernel answer the unread bytes with a
// TCP reset, which can reach the client before it has read our answer:
// Go's net/http and most clients then report "connection reset by peer"
// instead of the 400, 401 or 413. Such a connection is marked (lingerOnClose)
// and closed in steps: the write side first, so the answer is followed by
// an end of stream, then what the client still sends is read and
// discarded, never kept nor parsed, until it stops, closes, or a bound is
// reached; then the connection is closed. Memory stays one small buffer
// per lingering connection; its place in the per-address count
// (connlimit.go) is held until it is closed.

const (
	// lingerBytesMax bounds what is discarded: above the largest body any
	// route accepts (an upload: 10 MiB and its framing), so a client that
	// sent one past a limit is read to its end.
	lingerBytesMax = 16 << 20
	// lingerIdleMax ends the lingering when the client sends nothing for
	// this long; lingerTimeMax ends it in any case.
	lingerIdleMax = time.Second
	lingerTimeMax = 5 * time.Second
)

// lingerListener wraps every accepted connection in a lingerConn.
type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lingerConn{Conn: c}, nil
}

// lingerConn is a connection that is closed lingering once marked.
type lingerConn struct {
	net.Conn
	linger atomic.Bool
}

func (c *lingerConn) Close() error {
	if c.linger.Swap(false) {
		lingerDrain(c.Conn, time.Now())
	}
	return c.Conn.Close()
}

// lingerDrain half-closes c and discards what its peer still sends, within
// the bounds above, from start.
func lingerDrain(c net.Conn, start time.Time) {
	hc, ok := c.(interface{ CloseWrite() error })
	if !ok || hc.CloseWrite() != nil {
		return
	}
	end := start.Add(lingerTimeMax)
	var buf [16 << 10]byte
	for drained := 0; drained < lingerBytesMax; {
		deadline := time.Now().Add(lingerIdleMax)
		if deadline.After(end) {
			deadline = end
		}
		if c.SetReadDeadline(deadline) != nil {
			return
		}
		n, err := c.Read(buf[:min(len(buf), lingerBytesMax-drained)])
		drained += n
		if err != nil { // io.EOF: the client closed; a timeout: it went quiet or the time is up
			return
		}
	}
}

// lingerOnClose marks the request's connection to be closed lingering,
// whenever it is closed.
func lingerOnClose(ctx *fasthttp.RequestCtx) {
	switch c := ctx.Conn().(type) {
	case *lingerConn:
		c.linger.Store(true)
	case *countedConn:
		if lc, ok := c.Conn.(*lingerConn); ok {
			lc.linger.Store(true)
		}
	}
}
