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
		{"remote node of a cluster", []string{"-addr", "127.0.0.1:8081,10.0.0.2:8082", "-key", "k"}, `"10.0.0.2:8082": host must be in 127.0.0.0/8`},
		{"no node", []string{"-addr", " , ", "-key", "k"}, "-addr: no address"},
		{"no key for a cluster", []string{"-addr", "127.0.0.1:8081,127.0.0.1:8082"}, "-addr needs -key"},
		{"spawn and addr", []string{"-spawn", "payments", "-addr", "127.0.0.1:8080"}, "drop -addr and -key"},
		{"unknown workload", []string{"-workload", "uniform,fan_in", "-addr", "127.0.0.1:1", "-key", "k"}, `unknown workload "fan_in"`},
		{"stray argument", []string{"-addr", "127.0.0.1:1", "-key", "k", "extra"}, "unexpected arguments"},
		{"window too short", []string{"-addr", "127.0.0.1:1", "-key", "k", "-window", "10ms"}, "window must be at least 100ms"},
		{"window longer than duration", []string{"-spawn", "payments", "-duration", "10s", "-window", "20s"}, "longer than the duration 10s"},
		{"negative window", []string{"-addr", "127.0.0.1:1", "-key", "k", "-window", "-5s"}, "window must not be negative"},
		{"server pid with spawn", []string{"-spawn", "payments", "-window", "1s", "-server-pid", "1"}, "drop -server-pid"},
		{"server pid without window", []string{"-addr", "127.0.0.1:1", "-key", "k", "-server-pid", "1"}, "add -window"},
		{"server pid not a process", []string{"-addr", "127.0.0.1:1", "-key", "k", "-window", "1s", "-server-pid", "999999999"}, "-server-pid: rss of process 999999999"},
		{"negative server pid", []string{"-addr", "127.0.0.1:1", "-key", "k", "-window", "1s", "-server-pid", "-3"}, "server pid must be positive"},
		{"too much noise", []string{"-addr", "127.0.0.1:1", "-key", "k", "-noise-exports", "1000"}, "noise exports must be 0 to 256"},
		{"noise payouts without noise", []string{"-addr", "127.0.0.1:1", "-key", "k", "-noise-payouts", "10"}, "-noise-payouts needs -noise-exports"},
		{"no noise payouts", []string{"-addr", "127.0.0.1:1", "-key", "k", "-noise-exports", "4", "-noise-payouts", "-1"}, "noise payouts must be 1 to 200000"},
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
