package testkit

import (
	"context"
	"net"
)

// DNS stands for DNS in tests, which never reach the internet: a resolver
// (such as the webhook URL policy's) that resolves each of its names to
// its one address; any other name is not found.
type DNS map[string]string

// LookupIPAddr answers host's address, or a not-found DNS error.
func (m DNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}
