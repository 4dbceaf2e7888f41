package http_test

import (
	"context"
	"net"
	"time"

	"payments/actors"
	api "payments/http"
)

// testDNS stands for public DNS in tests, which never reach the internet:
// a public name, a name of a private address, and one of loopback.
type testDNS map[string]string

func (r testDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

var goldenDNS = testDNS{
	"hooks.example.com":    "93.184.216.34",
	"internal.example.com": "10.0.0.5",
	"rebind.example.com":   "127.0.0.1",
}

// webhookConfig is the stack's webhook delivery: the API's payloads, the
// stack's URL policy with testDNS, and opts.webhooks's overrides.
func webhookConfig(opts stackOptions) actors.WebhookConfig {
	c := actors.WebhookConfig{Timeout: 2 * time.Second}
	if opts.webhooks != nil {
		c = *opts.webhooks
	}
	c.Payload = api.EventPayload
	c.Policy.AllowLoopback = !opts.live
	if c.Policy.Resolver == nil {
		c.Policy.Resolver = goldenDNS
	}
	return c
}
