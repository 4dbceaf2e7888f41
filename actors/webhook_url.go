package actors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WebhookURLPolicy decides where webhooks may go. It is an allowlist:
// production sends only over https to global unicast addresses outside
// every entry of IANA's special-purpose registries (specialPurpose) and
// never to an address of this node's own interfaces. The sandbox also
// allows loopback receivers (http://127.0.0.1, http://localhost, ::1) for
// local testing, unless configured not to (AllowLoopback false). A
// merchant's URL must never reach the service's own network.
//
// The URL is checked when an endpoint is created or changed, and again at
// every dial, against the address actually connected to: a name that
// resolved to a public address at creation and to a private one later is
// refused then (DNS rebinding). Redirects are never followed.
type WebhookURLPolicy struct {
	AllowLoopback bool     // sandbox: loopback receivers, over http or https
	Resolver      Resolver // nil: the system resolver

	// LocalAddrs returns this node's own addresses, which are never a
	// receiver. Nil: the host's interfaces (net.InterfaceAddrs). Tests
	// inject a list.
	LocalAddrs func() []netip.Addr
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
		loopbackHost = ip.IsLoopback()
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

// specialPurpose is every entry of IANA's IPv4 and IPv6 Special-Purpose
// Address Registries (iana-ipv4-special-registry and
// iana-ipv6-special-registry, as of 2025), whatever their "globally
// reachable" column says: an anycast service, a documentation range, a
// translation prefix that wraps an IPv4 address, are never a merchant's
// receiver. The name is what a refusal says.
var specialPurpose = []struct {
	prefix netip.Prefix
	name   string
}{
	// IPv4.
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},                              // RFC 791
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},                                  // RFC 1918
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space"},                  // RFC 6598
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},                                // RFC 1122
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},                           // RFC 3927
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},                               // RFC 1918
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved for IETF protocol assignments"}, // RFC 6890 (and 192.0.0.0/29, .8, .9, .10, .170, .171 within it)
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},                          // RFC 5737 TEST-NET-1
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112-v4"},                            // RFC 7535
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT"},                                 // RFC 7450
	{netip.MustParsePrefix("192.88.99.0/24"), "deprecated 6to4 relay anycast"},        // RFC 7526
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},                              // RFC 1918
	{netip.MustParsePrefix("192.175.48.0/24"), "AS112 direct delegation"},             // RFC 7534
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},                          // RFC 2544
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},                       // RFC 5737 TEST-NET-2
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},                        // RFC 5737 TEST-NET-3
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},                                // RFC 1112
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},                        // RFC 919
	// IPv6. Everything outside 2000::/3 is refused before this table (the
	// global unicast space), which covers ::1, ::, ::ffff:0:0/96,
	// 64:ff9b::/96, 64:ff9b:1::/48, 100::/64, 100:0:0:1::/64, 5f00::/16,
	// fc00::/7 and fe80::/10 as well; they are listed for completeness.
	{netip.MustParsePrefix("::1/128"), "loopback"},                                  // RFC 4291
	{netip.MustParsePrefix("::/128"), "unspecified"},                                // RFC 4291
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped"},                         // RFC 4291
	{netip.MustParsePrefix("64:ff9b::/96"), "IPv4/IPv6 translation"},                // RFC 6052
	{netip.MustParsePrefix("64:ff9b:1::/48"), "IPv4/IPv6 translation"},              // RFC 8215
	{netip.MustParsePrefix("100::/64"), "discard-only"},                             // RFC 6666
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy prefix"},                       // RFC 9780
	{netip.MustParsePrefix("2001::/23"), "reserved for IETF protocol assignments"},  // RFC 2928
	{netip.MustParsePrefix("2001::/32"), "Teredo"},                                  // RFC 4380
	{netip.MustParsePrefix("2001:1::1/128"), "port control protocol anycast"},       // RFC 7723
	{netip.MustParsePrefix("2001:1::2/128"), "TURN anycast"},                        // RFC 8155
	{netip.MustParsePrefix("2001:1::3/128"), "DNS-SD service registration anycast"}, // RFC 9665
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking"},                          // RFC 5180
	{netip.MustParsePrefix("2001:3::/32"), "AMT"},                                   // RFC 7450
	{netip.MustParsePrefix("2001:4:112::/48"), "AS112-v6"},                          // RFC 7535
	{netip.MustParsePrefix("2001:10::/28"), "deprecated ORCHID"},                    // RFC 4843
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2"},                             // RFC 7343
	{netip.MustParsePrefix("2001:30::/28"), "drone remote ID"},                      // RFC 9374
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},                       // RFC 3849
	{netip.MustParsePrefix("2002::/16"), "6to4"},                                    // RFC 3056
	{netip.MustParsePrefix("2620:4f:8000::/48"), "AS112 direct delegation"},         // RFC 7534
	{netip.MustParsePrefix("3fff::/20"), "documentation"},                           // RFC 9637
	{netip.MustParsePrefix("5f00::/16"), "segment routing SIDs"},                    // RFC 9602
	{netip.MustParsePrefix("fc00::/7"), "unique local"},                             // RFC 4193
	{netip.MustParsePrefix("fe80::/10"), "link-local"},                              // RFC 4291
}

// ipv6GlobalUnicast is the IPv6 global unicast space (IANA's IPv6 Address
// Space registry): everything else is reserved, local, multicast or a
// form of an IPv4 address (::a.b.c.d, ::ffff:a.b.c.d, ::ffff:0:a.b.c.d).
var ipv6GlobalUnicast = netip.MustParsePrefix("2000::/3")

// CheckAddr refuses an address that is not a permitted receiver: the
// allowlist is global unicast addresses outside every special-purpose
// entry and not one of this node's own (and loopback, on the sandbox).
// An IPv4-mapped IPv6 address is refused as such; callers holding a
// resolver's or a socket's address unmap it first (Go gives IPv4
// addresses in that form).
func (p WebhookURLPolicy) CheckAddr(ip netip.Addr) error {
	if why := p.addrProblem(ip); why != "" {
		return refused("address %s is %s", ip, why)
	}
	return nil
}

// addrProblem says why an address is refused, or "".
func (p WebhookURLPolicy) addrProblem(ip netip.Addr) string {
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.Zone() != "":
		return "scoped to a network interface"
	case ip.Is4In6():
		return "IPv4-mapped"
	case ip.IsLoopback():
		if p.AllowLoopback {
			return ""
		}
		return "loopback"
	case ip.Is4() && ip.IsMulticast():
		return "multicast"
	case ip.Is6() && ip.IsMulticast():
		return "multicast"
	case ip.Is6() && !ipv6GlobalUnicast.Contains(ip):
		for _, e := range specialPurpose {
			if e.prefix.Contains(ip) {
				return e.name
			}
		}
		return "not an IPv6 global unicast address"
	}
	for _, e := range specialPurpose {
		if e.prefix.Contains(ip) {
			return e.name
		}
	}
	if p.isOwn(ip) {
		return "an address of this node"
	}
	return ""
}

// isOwn reports whether ip is assigned to one of this node's interfaces.
func (p WebhookURLPolicy) isOwn(ip netip.Addr) bool {
	own := p.LocalAddrs
	if own == nil {
		own = hostAddrs
	}
	for _, a := range own() {
		if a == ip {
			return true
		}
	}
	return false
}

// hostAddrsTTL bounds how stale hostAddrs may be: interfaces change rarely.
const hostAddrsTTL = 10 * time.Second

var hostAddrsCache struct {
	sync.Mutex
	at    time.Time
	addrs []netip.Addr
}

// hostAddrs returns the addresses of this host's interfaces, unmapped and
// without zones, read again after hostAddrsTTL. If they cannot be read the
// last list read stays in use.
func hostAddrs() []netip.Addr {
	c := &hostAddrsCache
	c.Lock()
	defer c.Unlock()
	if c.addrs != nil && time.Since(c.at) < hostAddrsTTL {
		return c.addrs
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return c.addrs
	}
	addrs := make([]netip.Addr, 0, len(ifaddrs))
	for _, a := range ifaddrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if na, ok := netip.AddrFromSlice(ip); ok {
			addrs = append(addrs, na.Unmap().WithZone(""))
		}
	}
	c.addrs, c.at = addrs, time.Now()
	return addrs
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
		ip = ip.Unmap() // Go's resolver gives IPv4 addresses in the mapped form
		if why := p.addrProblem(ip); why != "" {
			return nil, refused("host %s resolves to %s, which is %s", host, ip, why)
		}
		out = append(out, ip)
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
			return p.CheckAddr(ap.Addr().Unmap())
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
