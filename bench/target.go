package bench

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrNotLoopback is returned by CheckLoopback for an address outside
// 127.0.0.0/8 that is not "localhost": the load generator only ever targets
// a server on this machine.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckLoopback returns nil when addr is host:port with host "localhost" or
// an IPv4 address in 127.0.0.0/8, and an error wrapping ErrNotLoopback (or
// describing the malformed address) otherwise.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if port == "" {
		return fmt.Errorf("address %q: missing port", addr)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("address %q: host must be localhost or 127.x.y.z: %w", addr, ErrNotLoopback)
	}
	ip = ip.Unmap()
	if !ip.Is4() || ip.As4()[0] != 127 {
		return fmt.Errorf("address %q: host must be in 127.0.0.0/8: %w", addr, ErrNotLoopback)
	}
	return nil
}
