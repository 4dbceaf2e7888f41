package core

import (
	"bufio"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// defaultConnsPerIPMax is Config.ConnsPerIPMax's default: well above what
// one client's connection pool needs (paybench opens 128).
const defaultConnsPerIPMax = 256

// connLimitAnswerTimeout bounds writing the refusal to a connection over
// the limit.
const connLimitAnswerTimeout = time.Second

// connLimitLinger and connLimitLingerBytes bound how long and how much a
// refused connection is read after its answer (see refuseConn).
const (
	connLimitLinger      = 250 * time.Millisecond
	connLimitLingerBytes = 64 << 10
)

// limitConnsPerIP wraps ln so that a client address with ConnsPerIPMax
// connections open has its next one answered 429 rate_limited, in the
// error envelope, and closed. fasthttp's MaxConnsPerIP answers in plain
// text, hence this. The cluster's peers (Config.PeerHTTP's hosts) are not
// counted: a follower forwards over many connections.
func (s *Server) limitConnsPerIP(ln net.Listener) net.Listener {
	if s.Config.ConnsPerIPMax < 0 {
		return ln
	}
	l := &perIPListener{Listener: ln, max: s.Config.ConnsPerIPMax, open: make(map[netip.Addr]int), exempt: make(map[netip.Addr]bool),
		newRequestID: s.freshRequestID}
	for _, hp := range s.Config.PeerHTTP {
		if host, _, err := net.SplitHostPort(hp); err == nil {
			if ip, err := netip.ParseAddr(host); err == nil {
				l.exempt[ip.Unmap()] = true
			}
		}
	}
	return l
}

type perIPListener struct {
	net.Listener
	max    int
	exempt map[netip.Addr]bool
	// newRequestID draws the refusal's request id, naming this node.
	newRequestID func() string

	mu   sync.Mutex
	open map[netip.Addr]int
}

func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		if !ip.IsValid() || l.exempt[ip] {
			return c, nil
		}
		l.mu.Lock()
		over := l.open[ip] >= l.max
		if !over {
			l.open[ip]++
		}
		l.mu.Unlock()
		if over {
			go refuseConn(c, l.max, l.newRequestID())
			continue
		}
		return &countedConn{Conn: c, l: l, ip: ip}, nil
	}
}

func remoteIP(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(ta.IP)
		return ip.Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its place back once, when closed (after a lingering
// close, linger.go).
type countedConn struct {
	net.Conn
	l    *perIPListener
	ip   netip.Addr
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.l.open[c.ip]--; c.l.open[c.ip] <= 0 {
			delete(c.l.open, c.ip)
		}
		c.l.mu.Unlock()
	})
	return err
}

// refuseConn answers a connection over the limit without parsing its
// request: 429 rate_limited in the error envelope, then closes it.
func refuseConn(c net.Conn, limit int, requestID string) {
	defer c.Close()
	var ctx fasthttp.RequestCtx
	ctx.Response.Header.Set("x-request-id", requestID)
	ctx.Response.Header.Set("service-version", apiVersions[0])
	ctx.Response.SetConnectionClose()
	WriteError(&ctx, &ledger.Error{Code: ledger.CodeRateLimited, RetryAfterSeconds: 1,
		Message: "Too many connections from this address (at most " + strconv.Itoa(limit) + " at once); reuse connections, or retry shortly"})
	c.SetWriteDeadline(time.Now().Add(connLimitAnswerTimeout))
	w := bufio.NewWriter(c)
	if ctx.Response.Write(w) != nil || w.Flush() != nil {
		return
	}
	// Close without a reset: a close with the client's request still
	// unread sends a TCP reset, which can reach the client before the
	// answer and leave it with a broken connection instead of the 429.
	// Half-close, then read and discard what the client sent, briefly
	// and boundedly.
	if tc, ok := c.(interface{ CloseWrite() error }); ok && tc.CloseWrite() == nil {
		c.SetReadDeadline(time.Now().Add(connLimitLinger))
		io.CopyN(io.Discard, c, connLimitLingerBytes)
	}
}
