package actors

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"payments/actors/actorstest/testkit"
)

var testDNS = testkit.DNS{
	"hooks.example.com":     "93.184.216.34",
	"private.example.com":   "192.168.0.9",
	"rebind.example.com":    "127.0.0.1",
	"mapped.example.com":    "::ffff:10.0.0.1",
	"v6.example.com":        "2606:2800:220:1:248:1893:25c8:1946",
	"own.example.com":       ownPublicAddr,
	"v6special.example.com": "2001:db8::5",
}

// ownPublicAddr stands for a public address of the node's own interfaces.
const ownPublicAddr = "93.184.216.99"

func ownAddrs() []netip.Addr { return []netip.Addr{netip.MustParseAddr(ownPublicAddr)} }

func TestWebhookURLPolicy(t *testing.T) {
	prod := WebhookURLPolicy{Resolver: testDNS, LocalAddrs: ownAddrs}
	sandbox := WebhookURLPolicy{AllowLoopback: true, Resolver: testDNS, LocalAddrs: ownAddrs}
	cases := []struct {
		url         string
		prod, sandb bool // accepted
	}{
		{"https://hooks.example.com/payments", true, true},
		{"https://hooks.example.com:8443/p?x=1", true, true},
		{"https://v6.example.com/p", true, true},
		{"https://93.184.216.34/p", true, true},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/p", true, true},
		{"http://hooks.example.com/payments", false, false},
		{"http://127.0.0.1:9000/hook", false, true},
		{"http://localhost:9000/hook", false, true},
		{"http://[::1]:9000/hook", false, true},
		{"https://127.0.0.1/hook", false, true},
		{"https://rebind.example.com/hook", false, true}, // resolves to loopback
		{"http://rebind.example.com/hook", false, false}, // http only to a loopback literal or localhost
		{"https://private.example.com/hook", false, false},
		{"https://mapped.example.com/hook", false, false},
		{"https://10.0.0.1/hook", false, false},
		{"https://172.31.255.255/hook", false, false},
		{"https://192.168.1.1/hook", false, false},
		{"https://169.254.169.254/latest", false, false},
		{"https://[fe80::1]/hook", false, false},
		{"https://[fd00::1]/hook", false, false},
		{"https://[::ffff:192.168.0.1]/hook", false, false},
		{"https://[64:ff9b::a00:1]/hook", false, false},
		{"https://100.64.0.1/hook", false, false},
		{"https://0.0.0.0/hook", false, false},
		{"https://255.255.255.255/hook", false, false},
		{"https://224.0.0.1/hook", false, false},
		{"https://2130706433/hook", false, false},
		{"https://0177.0.0.1/hook", false, false},
		{"https://127.1/hook", false, false},
		{"https://user:pw@hooks.example.com/hook", false, false},
		{"https://hooks.example.com/hook#frag", false, false},
		{"https://hooks.example.com:99999/hook", false, false},
		{"https://unknown.example.com/hook", false, false},
		{"ftp://hooks.example.com/hook", false, false},
		{"//hooks.example.com/hook", false, false},
		{"hooks.example.com/hook", false, false},
		{"https:///hook", false, false},
		{"https://hooks.example.com/a b", false, false},
		{"https://" + strings.Repeat("a", WebhookURLLenMax) + ".com/", false, false},

		// Found accepted by the denylist this allowlist replaced.
		{"https://192.0.2.2:8443/hook", false, false},                         // documentation (and the reporter's own address)
		{"https://[::127.0.0.1]/hook", false, false},                          // IPv4-compatible: not loopback, not global unicast
		{"https://[fec0::1]/hook", false, false},                              // deprecated site-local
		{"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", false, false}, // Teredo, 2001::/32
		{"https://[100::1]/hook", false, false},                               // discard-only
		{"https://[2001:db8::1]/hook", false, false},                          // documentation
		{"https://[::ffff:0:7f00:1]/hook", false, false},                      // IPv4-translated 127.0.0.1
		{"https://own.example.com/hook", false, false},                        // resolves to the node's own address
		{"https://" + ownPublicAddr + "/hook", false, false},                  // the node's own address
		// The rest of the special-purpose registries, and forms of IPv4.
		{"https://198.51.100.7/hook", false, false},
		{"https://203.0.113.7/hook", false, false},
		{"https://192.0.0.9/hook", false, false},
		{"https://192.31.196.1/hook", false, false},
		{"https://192.52.193.1/hook", false, false},
		{"https://192.88.99.1/hook", false, false},
		{"https://192.175.48.1/hook", false, false},
		{"https://198.19.0.1/hook", false, false},
		{"https://240.0.0.1/hook", false, false},
		{"https://[::ffff:127.0.0.1]/hook", false, false}, // mapped, even to loopback
		{"https://[::ffff:93.184.216.34]/hook", false, false},
		{"https://[::]/hook", false, false},
		{"https://[64:ff9b:1::a00:1]/hook", false, false},
		{"https://[100:0:0:1::1]/hook", false, false},
		{"https://[2001:1::1]/hook", false, false},
		{"https://[2001:2::1]/hook", false, false},
		{"https://[2001:3::1]/hook", false, false},
		{"https://[2001:4:112::1]/hook", false, false},
		{"https://[2001:10::1]/hook", false, false},
		{"https://[2001:20::1]/hook", false, false},
		{"https://[2001:30::1]/hook", false, false},
		{"https://[2002:c000:204::1]/hook", false, false},
		{"https://[2620:4f:8000::1]/hook", false, false},
		{"https://[3fff::1]/hook", false, false},
		{"https://[5f00::1]/hook", false, false},
		{"https://[fc00::1]/hook", false, false},
		{"https://[ff02::1]/hook", false, false},
		{"https://[4000::1]/hook", false, false}, // outside 2000::/3
		{"https://v6special.example.com/hook", false, false},
	}
	for _, tc := range cases {
		for _, p := range []struct {
			name   string
			policy WebhookURLPolicy
			want   bool
		}{{"production", prod, tc.prod}, {"sandbox", sandbox, tc.sandb}} {
			err := p.policy.Check(context.Background(), tc.url)
			if (err == nil) != p.want {
				t.Errorf("%s: %q: err %v, want accepted=%v", p.name, tc.url, err, p.want)
			}
		}
	}
}

// Every address of this host's interfaces is refused on every stack,
// loopback ones but on the sandbox.
func TestWebhookURLPolicyRefusesHostAddresses(t *testing.T) {
	addrs := hostAddrs()
	if len(addrs) == 0 {
		t.Fatal("no interface addresses read")
	}
	for _, ip := range addrs {
		for _, p := range []WebhookURLPolicy{{}, {AllowLoopback: true}} {
			if p.AllowLoopback && ip.IsLoopback() {
				continue
			}
			if err := p.CheckAddr(ip); err == nil {
				t.Errorf("own address %s accepted (loopback allowed: %v)", ip, p.AllowLoopback)
			}
		}
	}
	// Even one that would otherwise be a permitted public address.
	p := WebhookURLPolicy{LocalAddrs: ownAddrs}
	if err := p.CheckAddr(netip.MustParseAddr(ownPublicAddr)); err == nil || !strings.Contains(err.Error(), "this node") {
		t.Fatalf("own public address: %v", err)
	}
	if err := p.CheckAddr(netip.MustParseAddr("93.184.216.34")); err != nil {
		t.Fatalf("a public address: %v", err)
	}
}

// Every registry entry is refused, at its first and its last address.
func TestSpecialPurposeEntriesAreRefused(t *testing.T) {
	p := WebhookURLPolicy{LocalAddrs: func() []netip.Addr { return nil }}
	for _, e := range specialPurpose {
		first := e.prefix.Masked().Addr()
		b := first.AsSlice()
		for i := e.prefix.Bits(); i < len(b)*8; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		last, _ := netip.AddrFromSlice(b)
		for _, a := range []netip.Addr{first, last} {
			if !e.prefix.Contains(a) {
				t.Fatalf("%s is outside %s", a, e.prefix)
			}
			if err := p.CheckAddr(a); err == nil {
				t.Errorf("%s (%s, %s) accepted", a, e.prefix, e.name)
			}
		}
	}
}

// The dialer checks what the host resolves to at dial time, whatever it
// resolved to when the endpoint was created.
func TestWebhookDialRefusesRebinding(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dns := testkit.DNS{"hooks.example.com": "93.184.216.34"}
	p := WebhookURLPolicy{Resolver: dns}
	if err := p.Check(context.Background(), "https://hooks.example.com:"+port+"/"); err != nil {
		t.Fatal(err)
	}
	dns["hooks.example.com"] = "127.0.0.1" // the name now points inside
	_, err = p.dialContext(0)(context.Background(), "tcp", "hooks.example.com:"+port)
	if !errors.Is(err, ErrWebhookURL) {
		t.Fatalf("dial after rebinding: %v", err)
	}
	// The sandbox may dial loopback.
	c, err := WebhookURLPolicy{AllowLoopback: true, Resolver: dns}.dialContext(0)(context.Background(), "tcp", "hooks.example.com:"+port)
	if err != nil {
		t.Fatalf("sandbox dial to loopback: %v", err)
	}
	c.Close()
}

// SignWebhook computes the Standard Webhooks signature of each secret.
func TestSignWebhook(t *testing.T) {
	a, b := NewWebhookSecret(), NewWebhookSecret()
	if !strings.HasPrefix(a, "whsec_") || a == b {
		t.Fatalf("secrets %q %q", a, b)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if err != nil || len(key) != webhookSecretBytes {
		t.Fatalf("secret %q decodes to %d bytes: %v", a, len(key), err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("whd_1.1700000000.{\"a\":1}"))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got := SignWebhook([]string{a}, "whd_1", 1700000000, []byte(`{"a":1}`)); got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
	two := strings.Fields(SignWebhook([]string{a, b}, "whd_1", 1700000000, []byte(`{"a":1}`)))
	if len(two) != 2 || two[0] != want || two[1] == want {
		t.Fatalf("two secrets sign as %v", two)
	}
}

// Whatever the input, the policy does not panic, and what it accepts is an
// https URL (or http to loopback on the sandbox) without credentials whose
// host, if an address, is allowed.
func FuzzWebhookURLPolicy(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/p", "http://127.0.0.1:80/", "https://[::1]/", "https://10.0.0.1/",
		"https://user@h/", "https://0x7f.1/", "https://[::ffff:7f00:1]/", "http://localhost./", "https://%31%32%37.0.0.1/",
		"https://h/#x", "HTTPS://HOOKS.EXAMPLE.COM/", "https://[fe80::1%25eth0]/",
		"https://192.0.2.2:8443/", "https://[::127.0.0.1]/", "https://[fec0::1]/", "https://[2001::1]/",
		"https://[100::1]/", "https://[2001:db8::1]/", "https://[::ffff:0:7f00:1]/", "https://[2606:2800::1%25eth0]/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, p := range []WebhookURLPolicy{{Resolver: testDNS}, {AllowLoopback: true, Resolver: testDNS}} {
			u, err := p.CheckSyntax(raw)
			if err != nil {
				if !errors.Is(err, ErrWebhookURL) {
					t.Fatalf("%q: error %v is not a refusal", raw, err)
				}
				continue
			}
			again, perr := url.Parse(raw)
			if perr != nil || again.User != nil || again.Hostname() == "" {
				t.Fatalf("%q accepted: %+v", raw, u)
			}
			if u.Scheme != "https" && !(p.AllowLoopback && u.Scheme == "http") {
				t.Fatalf("%q accepted with scheme %q", raw, u.Scheme)
			}
			if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
				if why := p.addrProblem(ip); why != "" {
					t.Fatalf("%q accepted though its address is %s", raw, why)
				}
			}
			if !p.AllowLoopback && isLoopbackName(u.Hostname()) {
				t.Fatalf("%q accepted a loopback name on production", raw)
			}
		}
	})
}
