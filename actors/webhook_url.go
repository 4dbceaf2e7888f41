package actors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// WebhookURLPolicy decides where webhooks may go. Production sends only to
// public https addresses; the sandbox also allows loopback receivers
// (http://127.0.0.1, http://localhost, ::1) for local testing. Private,
// link-local, shared and reserved addresses are refused everywhere: a
// merchant's URL must never reach the service's own network.
//
// The URL is checked when an endpoint is created or changed, and again at
// every dial, against the address actually connected to: a name that
// resolved to a public address at creation and to a private one later is
// refused then (DNS rebinding). Redirects are never followed.
type WebhookURLPolicy struct {
	AllowLoopback bool     // sandbox: loopback receivers, over http or https
	Resolver      Resolver // nil: the system resolver
}

// Resolver resolves host names; *net.Resolver implements it. Tests inject
// one to stand for public DNS without reaching the internet.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// WebhookURLLenMax bounds an endpoint URL, in bytes.
const WebhookURLLenMax = 2048

// ErrWebhookURL is the class of every refusal by the policy.
var ErrWebhookURL = errors.New("webhook url refused")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrWebhookURL}, args...)...)
}

// CheckSyntax checks what can be known of raw without DNS: an absolute
// https URL (http only to a loopback host where allowed), no credentials,
// no fragment, a host that is not a refused address literal.
func (p WebhookURLPolicy) CheckSyntax(raw string) (*url.URL, error) {
	if len(raw) > WebhookURLLenMax {
		return nil, refused("must be at most %d bytes", WebhookURLLenMax)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] <= ' ' || raw[i] == 0x7f {
			return nil, refused("must not contain spaces or control characters")
		}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, refused("must be an absolute URL such as https://example.com/webhooks")
	}
	if u.User != nil {
		return nil, refused("must not carry credentials")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, refused("must not have a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return nil, refused("must name a host")
	}
	if port := u.Port(); port != "" {
		if n, err := parsePort(port); err != nil || n == 0 {
			return nil, refused("has an invalid port")
		}
	}
	loopbackHost := isLoopbackName(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := p.CheckAddr(ip); err != nil {
			return nil, err
		}
		loopbackHost = ip.Unmap().IsLoopback()
	} else if strings.ContainsAny(host, "[]%:") || strings.Trim(host, "0123456789.") == "" {
		// Not a name, and not an address netip reads: an odd form of an
		// address (octal, decimal) that some resolvers would accept.
		return nil, refused("host %q is not a valid name or address", host)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !(p.AllowLoopback && loopbackHost) {
			if p.AllowLoopback {
				return nil, refused("must use https (http is allowed only to 127.0.0.1 or localhost on the sandbox)")
			}
			return nil, refused("must use https")
		}
	default:
		return nil, refused("must use https")
	}
	if loopbackHost && !p.AllowLoopback {
		return nil, refused("must not point at a loopback address")
	}
	return u, nil
}

func parsePort(s string) (int, error) {
	if len(s) > 5 {
		return 0, errors.New("port too long")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("port not a number")
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > 65535 {
		return 0, errors.New("port out of range")
	}
	return n, nil
}

func isLoopbackName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// Check checks raw and resolves its host now: every address it resolves to
// must be allowed.
func (p WebhookURLPolicy) Check(ctx context.Context, raw string) error {
	u, err := p.CheckSyntax(raw)
	if err != nil {
		return err
	}
	_, err = p.resolve(ctx, u.Hostname())
	return err
}

// refusedPrefixes are ranges that are not public beyond what netip's
// predicates cover: "this network", shared address space (CGNAT), IETF
// protocol assignments, benchmarking, reserved, and NAT64 (which could wrap
// a private IPv4 address).
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"), // 6to4 can wrap any IPv4 address
}

// CheckAddr refuses an address that is not public (or loopback, where
// allowed).
func (p WebhookURLPolicy) CheckAddr(ip netip.Addr) error {
	if why := p.addrProblem(ip); why != "" {
		return refused("address %s is %s", ip.Unmap(), why)
	}
	return nil
}

// addrProblem says why an address is refused, or "".
func (p WebhookURLPolicy) addrProblem(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsLoopback():
		if p.AllowLoopback {
			return ""
		}
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "not a unicast address"
	case ip.Is4() && ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, pre := range refusedPrefixes {
		if pre.Contains(ip) {
			return "reserved"
		}
	}
	return ""
}

// resolve returns host's addresses, refusing them all if any is refused.
func (p WebhookURLPolicy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, p.CheckAddr(ip)
	}
	if isLoopbackName(host) { // localhost is loopback, whatever DNS says (RFC 6761)
		ip := netip.AddrFrom4([4]byte{127, 0, 0, 1})
		return []netip.Addr{ip}, p.CheckAddr(ip)
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupIPAddr(rctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return nil, refused("host %s resolved to an invalid address", host)
		}
		if why := p.addrProblem(ip); why != "" {
			return nil, refused("host %s resolves to %s, which is %s", host, ip.Unmap(), why)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

// dialContext dials a webhook receiver: it resolves the host through the
// policy's resolver, refuses the dial if any address is refused, and checks
// the address again as the socket connects (net.Dialer.Control), so nothing
// the transport does can reach a refused address.
func (p WebhookURLPolicy) dialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refused("dial to %q", address)
			}
			return p.CheckAddr(ap.Addr())
		},
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := p.resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		var last error
		for _, ip := range ips {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
}
