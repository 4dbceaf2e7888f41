package core

import (
	"net"
	"net/netip"
	"testing"

	"github.com/valyala/fasthttp"
)

// Which address a request is judged by, from its connection: the sender,
// unless the sender is a trusted proxy; then the right-most X-Forwarded-For
// address that is not one.
func TestConnectionClient(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8, 2001:db8::1")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Config: Config{TrustedProxies: proxies}}
	for _, tc := range []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"direct", "198.51.100.1", nil, "198.51.100.1"},
		{"an untrusted sender's header is ignored", "198.51.100.1", []string{"203.0.113.5"}, "198.51.100.1"},
		{"a trusted proxy names the client", "10.1.2.3", []string{"203.0.113.5"}, "203.0.113.5"},
		{"the right-most untrusted hop", "10.1.2.3", []string{"192.0.2.66, 203.0.113.5, 10.9.9.9"}, "203.0.113.5"},
		{"a client cannot prepend itself", "10.1.2.3", []string{"203.0.113.99", "203.0.113.5"}, "203.0.113.5"},
		{"every hop trusted: the left-most", "10.1.2.3", []string{"10.4.4.4, 10.5.5.5"}, "10.4.4.4"},
		{"a trusted proxy without the header", "10.1.2.3", nil, "10.1.2.3"},
		{"a hop that is no address stops the walk", "10.1.2.3", []string{"203.0.113.5, junk, 10.9.9.9"}, "10.9.9.9"},
		{"IPv6 proxy, mapped IPv4 client", "2001:db8::1", []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req fasthttp.Request
			for _, h := range tc.xff {
				req.Header.Add(fasthttp.HeaderXForwardedFor, h)
			}
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(tc.remote), Port: 4000}, nil)
			if got := s.connectionClient(&ctx); got != netip.MustParseAddr(tc.want) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8,nope"); err == nil {
		t.Fatal("a bad --trusted-proxies was accepted")
	}
	if p, err := ParseTrustedProxies(""); err != nil || p != nil {
		t.Fatalf("empty --trusted-proxies: %v %v", p, err)
	}
}

// The signed statement of a client's address binds the address, the
// request and the expiry: change any and it no longer verifies.
func TestClientToken(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	tok := clientToken(key, "203.0.113.5", "POST", "/v1/payouts", 1000)
	for _, other := range []string{
		clientToken(key, "203.0.113.6", "POST", "/v1/payouts", 1000),
		clientToken(key, "203.0.113.5", "GET", "/v1/payouts", 1000),
		clientToken(key, "203.0.113.5", "POST", "/v1/payouts?x=1", 1000),
		clientToken(key, "203.0.113.5", "POST", "/v1/payouts", 1001),
		clientToken([]byte("another cluster's key 0123456789"), "203.0.113.5", "POST", "/v1/payouts", 1000),
	} {
		if other == tok {
			t.Fatalf("token %s does not bind everything it signs", tok)
		}
	}
}
