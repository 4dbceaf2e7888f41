package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

func TestRaftTimeoutFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		want    [4]time.Duration // heartbeat, election, lease, commit
		wantErr string
	}{
		{name: "defaults are hashicorp's (zero here)", want: [4]time.Duration{}},
		{name: "all four set",
			args: []string{"--raft-heartbeat-timeout", "2s", "--raft-election-timeout", "3s", "--raft-leader-lease-timeout", "1500ms", "--raft-commit-timeout", "20ms"},
			want: [4]time.Duration{2 * time.Second, 3 * time.Second, 1500 * time.Millisecond, 20 * time.Millisecond}},
		{name: "from the environment",
			env:  map[string]string{"PAYMENTS_RAFT_HEARTBEAT_TIMEOUT": "400ms", "PAYMENTS_RAFT_LEADER_LEASE_TIMEOUT": "300ms"},
			want: [4]time.Duration{400 * time.Millisecond, 0, 300 * time.Millisecond, 0}},
		{name: "the command line wins over the environment",
			env:  map[string]string{"PAYMENTS_RAFT_ELECTION_TIMEOUT": "400ms"},
			args: []string{"--raft-election-timeout", "700ms"},
			want: [4]time.Duration{0, 700 * time.Millisecond, 0, 0}},
		{name: "too short", args: []string{"--raft-heartbeat-timeout", "1ms"}, wantErr: "--raft-heartbeat-timeout must be 0 (the default) or at least 5ms"},
		{name: "negative", args: []string{"--raft-commit-timeout", "-1s"}, wantErr: "--raft-commit-timeout must be 0"},
		{name: "not a duration", args: []string{"--raft-election-timeout", "soon"}, wantErr: "invalid value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			cfg, err := parseServe(c.args, io.Discard)
			if testkit.WantErr(t, err, c.wantErr) {
				return
			}
			got := [4]time.Duration{cfg.raftHeartbeatTimeout, cfg.raftElectionTimeout, cfg.raftLeaderLeaseTimeout, cfg.raftCommitTimeout}
			if got != c.want {
				t.Fatalf("timeouts = %v, want %v", got, c.want)
			}
		})
	}
}

// The timeouts reach Raft: a leader lease longer than the heartbeat timeout
// is refused by hashicorp's own validation of its configuration.
func TestRaftTimeoutFlagsReachRaft(t *testing.T) {
	err := serve([]string{"--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0",
		"--raft-heartbeat-timeout", "200ms", "--raft-leader-lease-timeout", "400ms", "--log-level", "error"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "LeaderLeaseTimeout") {
		t.Fatalf("serve = %v, want hashicorp's refusal of a lease longer than the heartbeat", err)
	}
}
