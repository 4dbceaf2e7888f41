// Package testdns stands for DNS in tests, which never reach the internet:
// the webhook URL policy's resolver (actors.WebhookURLPolicy.Resolver)
// answers from a map. The actors' tests and the front end's share it.
package testdns

import (
	"context"
	"net"
)

// Map resolves each of its names to its one address; any other name is
// not found.
type Map map[string]string

// LookupIPAddr answers host's address, or a not-found DNS error.
func (m Map) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}
