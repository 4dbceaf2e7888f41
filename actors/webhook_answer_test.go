package actors

import (
	"net"
	"net/netip"
	"testing"
)

// A failed answer's body is quoted in the attempt's error only when it
// came from a public receiver; from loopback (the sandbox's), private,
// link-local, shared or any other non-public address, or this node's own,
// the error is the status alone.
func TestWebhookAnswerShownOnlyFromPublicReceivers(t *testing.T) {
	own := netip.MustParseAddr("93.184.216.40")
	e := &webhookEngine{cfg: WebhookConfig{Policy: WebhookURLPolicy{AllowLoopback: true,
		LocalAddrs: func() []netip.Addr { return []netip.Addr{own} }}}}
	cases := []struct {
		remote string // "": no address known
		shown  bool
	}{
		{"93.184.216.34", true},
		{"2606:4700::6810:84e5", true},
		{"::ffff:93.184.216.34", true}, // as Go gives IPv4
		{"127.0.0.1", false},
		{"::1", false},
		{"10.0.0.5", false},
		{"172.16.3.4", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"fe80::1", false},
		{"fd00::1", false},
		{own.String(), false},
		{"", false},
	}
	for _, tc := range cases {
		var remote net.Addr
		if tc.remote != "" {
			remote = &net.TCPAddr{IP: net.ParseIP(tc.remote), Port: 6379}
		}
		if got := e.answerShown(remote); got != tc.shown {
			t.Errorf("%q: shown %v, want %v", tc.remote, got, tc.shown)
		}
	}
}

// An attempt's error is the status, then what of the body may be shown,
// as valid UTF-8 and cut to its bound.
func TestWebhookAttemptError(t *testing.T) {
	long := make([]byte, webhookErrorLen)
	for i := range long {
		long[i] = 'a'
	}
	cases := []struct {
		name    string
		status  int
		snippet []byte
		want    string
	}{
		{"status only", 500, nil, "HTTP 500"},
		{"with the body", 503, []byte("not ready yet"), "HTTP 503: not ready yet"},
		{"not UTF-8", 400, []byte("bad \xff"), "HTTP 400: bad ?"},
		{"cut to the bound", 502, long, "HTTP 502: " + string(long[:webhookErrorLen-len("HTTP 502: ")])},
	}
	for _, tc := range cases {
		if got := attemptError(tc.status, tc.snippet); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
