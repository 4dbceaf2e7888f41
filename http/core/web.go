package core

import (
	"net"
	"net/url"
	"payments/http/webassets"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// defaultCheckoutURL is where hosted checkouts live when the server is not
// told (Config.CheckoutURL).
const defaultCheckoutURL = "http://127.0.0.1:8080/checkout"

// checkoutURL is the base of every link's and page's url. It is one per
// process: renderers take only the record, so that webhook payloads render
// the same way.
var checkoutURL atomic.Pointer[string]

func setCheckoutURL(u string) {
	if u == "" {
		if checkoutURL.Load() != nil {
			return
		}
		u = defaultCheckoutURL
	}
	u = strings.TrimRight(u, "/")
	checkoutURL.Store(&u)
}

func CheckoutBase() string {
	if p := checkoutURL.Load(); p != nil {
		return *p
	}
	return defaultCheckoutURL
}

func WriteHTML(ctx *fasthttp.RequestCtx, status int, csp string, body []byte) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
}

// serveAsset answers with the file of set the path names, cached for a
// year (its name changes with its bytes).
func ServeAsset(ctx *fasthttp.RequestCtx, set *webassets.Set) {
	name, _ := ctx.UserValue("name").(string)
	a, ok := set.Lookup(name)
	if !ok {
		WriteError(ctx, NotFound("Asset"))
		return
	}
	h := &ctx.Response.Header
	h.Set("Cache-Control", webassets.CacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	ctx.SetContentType(a.ContentType)
	ctx.SetBody(a.Body)
}

// limitAddress counts a checkout request against its client address.
func (s *Server) LimitAddress(ctx *fasthttp.RequestCtx) *ledger.Error {
	e := s.checkoutLimiter.Allow(ctx, "ip:"+ctx.RemoteIP().String(), PerClientAddress)
	if e != nil {
		e.Message = "Too many requests from this address: the checkout allows " +
			strconv.Itoa(s.Config.RateLimitPerSecond) + " a second; retry after the delay given"
	}
	return e
}

// PageGate runs what every request to the public pages (the hosted
// checkout, the dashboard) runs first: the limit per client address, the
// cross-site check on writes (refused with crossSite), the body's read and
// the relay to the leader. A request another node relayed skips the first
// two, which that node ran. limited, when not empty, replaces the limit's
// message. It returns the error to answer, and whether the request was
// answered (refused or relayed) already.
func (s *Server) PageGate(ctx *fasthttp.RequestCtx, limited, crossSite string) (done bool, e *ledger.Error) {
	if !s.FromPeer(ctx) {
		if e := s.LimitAddress(ctx); e != nil {
			if limited != "" {
				e.Message = limited
			}
			return true, e
		}
		if !ctx.IsGet() && !ctx.IsHead() && s.CrossSite(ctx) {
			return true, &ledger.Error{Code: ledger.CodeForbidden, Message: crossSite}
		}
	}
	if e := s.ReadBody(ctx); e != nil {
		return true, e
	}
	return s.RelayToLeader(ctx)
}

// fromPeer reports whether a request was relayed by another node of the
// cluster, which checked it already.
func (s *Server) FromPeer(ctx *fasthttp.RequestCtx) bool {
	if len(ctx.Request.Header.Peek(forwardedHeader)) == 0 {
		return false
	}
	ip := ctx.RemoteIP().String()
	for _, addr := range s.Config.PeerHTTP {
		if host, _, err := net.SplitHostPort(addr); err == nil && host == ip {
			return true
		}
	}
	return false
}

// crossSite reports whether a browser sent the request from another site.
// Browsers say where a request comes from in Sec-Fetch-Site (all current
// ones) or else Origin; a request with neither is not a browser's
// cross-site request (curl, a server), and has no authority to abuse: the
// checkout has no cookies and no key.
func (s *Server) CrossSite(ctx *fasthttp.RequestCtx) bool {
	switch string(ctx.Request.Header.Peek("Sec-Fetch-Site")) {
	case "same-origin", "none":
		return false
	case "":
	default: // same-site, cross-site
		return true
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	if origin == "" {
		return false
	}
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" {
		return true // "null": a sandboxed frame, a privacy redirect
	}
	if o.Host == string(ctx.Host()) {
		return false
	}
	pub, err := url.Parse(CheckoutBase())
	return err != nil || pub.Scheme != o.Scheme || pub.Host != o.Host
}
