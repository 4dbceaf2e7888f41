package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestUsageErrors checks the arguments refused before any load is sent.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no target", nil, "give -spawn PATH, or -addr host:port and -key"},
		{"remote address", []string{"-addr", "10.0.0.1:8080", "-key", "sk_test_0123456789abcdef"}, "not a loopback address"},
		{"host name", []string{"-addr", "example.com:80", "-key", "sk_test_0123456789abcdef"}, "not a loopback address"},
		{"no key", []string{"-addr", "127.0.0.1:8080"}, "-addr needs -key"},
		{"spawn and addr", []string{"-spawn", "payments", "-addr", "127.0.0.1:8080"}, "drop -addr and -key"},
		{"unknown workload", []string{"-workload", "uniform,fan_in", "-addr", "127.0.0.1:1", "-key", "k"}, `unknown workload "fan_in"`},
		{"stray argument", []string{"-addr", "127.0.0.1:1", "-key", "k", "extra"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr does not say %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}
