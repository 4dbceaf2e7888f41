package bench

import (
	"errors"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr        string
		ok          bool
		notLoopback bool // the error wraps ErrNotLoopback
	}{
		{"127.0.0.1:8080", true, false},
		{"127.1.2.3:1", true, false},
		{"127.255.255.255:65535", true, false},
		{"localhost:8080", true, false},
		{"[::ffff:127.0.0.1]:8080", true, false},
		{"10.0.0.1:8080", false, true},
		{"128.0.0.1:8080", false, true},
		{"0.0.0.0:8080", false, true},
		{"[::1]:8080", false, true},
		{"example.com:80", false, true},
		{"localhost.example.com:80", false, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:", false, false},
		{"", false, false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := CheckLoopback(tc.addr)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckLoopback(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
			}
			if got := errors.Is(err, ErrNotLoopback); got != tc.notLoopback {
				t.Fatalf("CheckLoopback(%q) = %v; wraps ErrNotLoopback: %v, want %v", tc.addr, err, got, tc.notLoopback)
			}
		})
	}
}
