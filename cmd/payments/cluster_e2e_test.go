package main

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startCluster starts n nodes of one cluster as processes on loopback, each
// with its own data directory and extra's flags, and waits until all are
// ready. The peers must know each other's ports before any starts, so the
// ports are reserved and released; if another process takes one in
// between, it starts again on fresh ones.
func startCluster(t *testing.T, n int, extra ...string) []*proc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addrs := freeAddrs(t, 2*n)
		var peers []string
		for i := 0; i < n; i++ {
			peers = append(peers, fmt.Sprintf("n%d=%s@%s", i+1, addrs[i], addrs[n+i]))
		}
		var procs []*proc
		var err error
		for i := 0; i < n && err == nil; i++ {
			p := &proc{t: t, dataDir: t.TempDir(), args: append([]string{
				"--node-id", fmt.Sprintf("n%d", i+1), "--raft-addr", addrs[i], "--http-addr", addrs[n+i],
				"--peers", strings.Join(peers, ","), "--rate-limit", "1000000"}, extra...)}
			if err = p.launch(); err == nil {
				procs = append(procs, p)
			}
		}
		if err == nil {
			for _, p := range procs {
				p.waitReady()
			}
			return procs
		}
		for _, p := range procs {
			p.kill()
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatal(err)
		}
	}
}

// leaderSeenBy returns the index in procs of the leader that procs[i]
// reports ready under, waiting (up to 20 s) for one other than not (-1:
// any).
func leaderSeenBy(t *testing.T, procs []*proc, i, not int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var h struct {
			Leader string `json:"leader"`
		}
		st, _ := call(procs[i].addr, "GET", "/readyz", nil, &h)
		if st == 200 && len(h.Leader) == 2 && h.Leader[0] == 'n' {
			if l := int(h.Leader[1] - '1'); l >= 0 && l < len(procs) && l != not {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("n%d: no leader (other than n%d) in 20s", i+1, not+1)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A leader frozen (SIGSTOP) past the election timeout, while the new leader
// acknowledges writes, must not answer from its stale state when it thaws:
// requests that reach it after those acknowledgements — sent while it is
// frozen, so they are the first it reads on SIGCONT — see every one of
// them. Before reads confirmed leadership, such a thawed leader answered
// 404 for the new payout, the balance from before the freeze, and a final
// 422 insufficient_funds to the retry of a payout that existed.
func TestThawedLeaderAnswersNothingStale(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	procs := startCluster(t, 3)
	if st, err := call(procs[0].addr, "POST", "/v1/simulations/fund-balance",
		map[string]any{"amount": "1.00", "currency": "GHS", "externalReference": "seed"}, nil); err != nil || st != 201 {
		t.Fatalf("fund: %d %v", st, err)
	}
	for trial := 0; trial < 2; trial++ {
		old := leaderSeenBy(t, procs, 0, -1)
		survivor := procs[(old+1)%3]
		stale := ghsAccount(t, procs[old].addr).AvailableBalance

		if err := procs[old].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		leaderSeenBy(t, procs, (old+1)%3, old)
		// Funds and a payout that the stale state cannot cover: a retry
		// answered from it would be a final 422.
		if st, err := call(survivor.addr, "POST", "/v1/simulations/fund-balance", map[string]any{
			"amount": "1000.00", "currency": "GHS", "externalReference": fmt.Sprintf("fund-%d", trial)}, nil); err != nil || st != 201 {
			t.Fatalf("trial %d: fund via the new leader: %d %v", trial, st, err)
		}
		ref := fmt.Sprintf("frozen-%d", trial)
		payout := map[string]any{
			"to":                map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": "900.00"},
			"externalReference": ref,
		}
		var created struct {
			Payout payoutView `json:"payout"`
		}
		if st, err := call(survivor.addr, "POST", "/v1/payouts", payout, &created); err != nil || st != 201 {
			t.Fatalf("trial %d: payout via the new leader: %d %v", trial, st, err)
		}
		current := ghsAccount(t, survivor.addr).AvailableBalance

		// Requests to the frozen leader wait in its sockets; SIGCONT.
		type answer struct {
			what   string
			status int
			err    error
			id     string
			avail  string
			code   string
		}
		answers := make(chan answer, 3)
		go func() {
			var b struct {
				Payout payoutView `json:"payout"`
			}
			st, err := call(procs[old].addr, "GET", "/v1/payouts/by-reference/"+ref, nil, &b)
			answers <- answer{what: "read by reference", status: st, err: err, id: b.Payout.ID}
		}()
		go func() {
			var b struct {
				Data []accountView `json:"data"`
			}
			st, err := call(procs[old].addr, "GET", "/v1/accounts", nil, &b)
			a := answer{what: "balance", status: st, err: err}
			if len(b.Data) == 1 {
				a.avail = b.Data[0].AvailableBalance
			}
			answers <- a
		}()
		go func() {
			var b struct {
				Payout payoutView `json:"payout"`
				Error  string     `json:"error"`
			}
			st, err := call(procs[old].addr, "POST", "/v1/payouts", payout, &b)
			answers <- answer{what: "retry of the payout", status: st, err: err, id: b.Payout.ID, code: b.Error}
		}()
		time.Sleep(200 * time.Millisecond)
		if err := procs[old].cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			a := <-answers
			switch {
			case a.err != nil:
				t.Errorf("trial %d: %s from the thawed leader: %v", trial, a.what, a.err)
			case a.what == "balance" && (a.status != 200 || a.avail != current):
				t.Errorf("trial %d: balance from the thawed leader: %d %q; the stale one is %q, the current %q", trial, a.status, a.avail, stale, current)
			case a.what == "read by reference" && (a.status != 200 || a.id != created.Payout.ID):
				t.Errorf("trial %d: payout %s from the thawed leader: %d %q, want 200 %s", trial, ref, a.status, a.id, created.Payout.ID)
			case a.what == "retry of the payout" && (a.status != 200 || a.id != created.Payout.ID):
				t.Errorf("trial %d: retry of payout %s at the thawed leader: %d %s %q, want the replay (200 %s)", trial, ref, a.status, a.code, a.id, created.Payout.ID)
			}
		}
		// The old leader rejoins as a follower before the next trial.
		procs[old].waitReady()
	}
}
