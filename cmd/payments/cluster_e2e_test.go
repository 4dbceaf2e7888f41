package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"payments/bench"
	"payments/raft"
)

// startCluster starts n nodes of one new cluster as processes on
// loopback, each with its own data directory and extra's flags, and waits
// until all are ready.
func startCluster(t *testing.T, n int, extra ...string) []*proc {
	t.Helper()
	return launchCluster(t, n, func(int, string, string) []string {
		return append([]string{"--bootstrap"}, extra...)
	})
}

// launchCluster starts n nodes of one cluster, node i in a fresh data
// directory that seed prepares for the cluster's peers (a restore), with
// the flags seed returns, and waits until all are ready. The peers must
// know each other's ports before any starts, so the ports are reserved and
// released; if another process takes one in between, it starts again on
// fresh ones and fresh directories.
func launchCluster(t *testing.T, n int, seed func(i int, dataDir, peers string) []string) []*proc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addrs := freeAddrs(t, 2*n)
		var peers []string
		for i := 0; i < n; i++ {
			peers = append(peers, fmt.Sprintf("n%d=%s@%s", i+1, addrs[i], addrs[n+i]))
		}
		peerList := strings.Join(peers, ",")
		var procs []*proc
		var err error
		for i := 0; i < n && err == nil; i++ {
			dir := t.TempDir()
			p := &proc{t: t, dataDir: dir, args: append([]string{
				"--node-id", fmt.Sprintf("n%d", i+1), "--raft-addr", addrs[i], "--http-addr", addrs[n+i],
				"--peers", peerList, "--rate-limit", "1000000"}, seed(i, dir, peerList)...)}
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
	leader := -1
	waitUntil(t, 20*time.Second, fmt.Sprintf("n%d sees a leader other than n%d", i+1, not+1), func() bool {
		var h struct {
			Leader string `json:"leader"`
		}
		st, _ := call(procs[i].addr, "GET", "/readyz", nil, &h)
		if st == 200 && len(h.Leader) == 2 && h.Leader[0] == 'n' {
			if l := int(h.Leader[1] - '1'); l >= 0 && l < len(procs) && l != not {
				leader = l
				return true
			}
		}
		return false
	})
	return leader
}

// seededCluster starts a cluster of three, funds its GHS balance with
// amount through the first node, and returns its processes and the index
// of the leader the first node sees.
func seededCluster(t *testing.T, amount string) ([]*proc, int) {
	t.Helper()
	procs := startCluster(t, 3)
	fundGHS(t, procs[0].addr, amount, "seed")
	return procs, leaderSeenBy(t, procs, 0, -1)
}

// freeze stops the process with SIGSTOP, as a machine that hangs: it keeps
// its sockets and answers nothing until SIGCONT.
func (p *proc) freeze() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		p.t.Fatal(err)
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
	endToEnd(t)
	procs := startCluster(t, 3)
	fundGHS(t, procs[0].addr, "1.00", "seed")
	for trial := 0; trial < 2; trial++ {
		old := leaderSeenBy(t, procs, 0, -1)
		survivor := procs[(old+1)%3]
		stale := ghsAccount(t, procs[old].addr).AvailableBalance

		procs[old].freeze()
		leaderSeenBy(t, procs, (old+1)%3, old)
		// Funds and a payout that the stale state cannot cover: a retry
		// answered from it would be a final 422.
		if st, err := call(survivor.addr, "POST", "/v1/simulations/fund-balance", map[string]any{
			"amount": "1000.00", "currency": "GHS", "externalReference": fmt.Sprintf("fund-%d", trial)}, nil); err != nil || st != 201 {
			t.Fatalf("trial %d: fund via the new leader: %d %v", trial, st, err)
		}
		ref := fmt.Sprintf("frozen-%d", trial)
		payout := mtnPayout("900.00", ref)
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
		thawed := time.Now()
		for i := 0; i < 3; i++ {
			a := <-answers
			t.Logf("trial %d: %s answered %d after %v", trial, a.what, a.status, time.Since(thawed).Round(time.Millisecond))
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

// stop sends SIGTERM and waits (20 s at most) for the process to exit.
func (p *proc) stop() error {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	return p.waitExit(20 * time.Second)
}

// flagValue is the value of --name in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// failoverClient sends a request to its own node and, when that node
// refuses the connection (stopped, restarting: nothing was sent), to the
// next: a client that knows every node's address, as a cluster's clients
// should. Requests carry their reference as Idempotency-Key, so the HTTP
// transport re-sends one whose kept-alive connection a draining node
// closed before reading it.
type failoverClient struct {
	addrs     []string
	failovers atomic.Int64 // connections refused and sent to the next node
}

func (c *failoverClient) post(first int, path, ref string, body any, out any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	for i := 0; ; i++ {
		addr := c.addrs[(first+i)%len(c.addrs)]
		req, err := nethttp.NewRequest("POST", "http://"+addr+path, bytes.NewReader(raw))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", ref)
		resp, err := client.Do(req)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) && i < 3*len(c.addrs) {
				c.failovers.Add(1)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return resp.StatusCode, err
		}
		if resp.StatusCode/100 == 2 && out != nil {
			return resp.StatusCode, json.Unmarshal(b, out)
		}
		if resp.StatusCode/100 != 2 {
			return resp.StatusCode, fmt.Errorf("%s", b)
		}
		return resp.StatusCode, nil
	}
}

// payoutLoad sends payouts, each with a fresh reference, from workers
// spread over every node, until stopped (or 5000 per worker).
type payoutLoad struct {
	fc       *failoverClient
	mu       sync.Mutex
	acked    map[string]string // reference → payout id
	failures []string
	sent     atomic.Int64
	done     chan struct{}
	wg       sync.WaitGroup
}

func startPayoutLoad(fc *failoverClient, workers int, prefix string) *payoutLoad {
	l := &payoutLoad{fc: fc, acked: map[string]string{}, done: make(chan struct{})}
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < 5000; i++ {
				select {
				case <-l.done:
					return
				default:
				}
				ref := fmt.Sprintf("%s-%d-%d", prefix, w, i)
				var body struct {
					Payout payoutView `json:"payout"`
				}
				l.sent.Add(1)
				first := w % len(fc.addrs)
				st, err := fc.post(first, "/v1/payouts", ref, mtnPayout("1.00", ref), &body)
				l.mu.Lock()
				if err != nil || st/100 != 2 {
					l.failures = append(l.failures, fmt.Sprintf("%s via %s: %d %v", ref, fc.addrs[first], st, err))
				} else {
					l.acked[ref] = body.Payout.ID
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// stop ends the load, reports every failed request as a test error, and
// returns the acknowledged payouts.
func (l *payoutLoad) stop(t *testing.T) map[string]string {
	t.Helper()
	close(l.done)
	l.wg.Wait()
	t.Logf("%d requests, %d acknowledged, %d failed, %d connections refused and sent to another node",
		l.sent.Load(), len(l.acked), len(l.failures), l.fc.failovers.Load())
	for i, f := range l.failures {
		if i == 20 {
			t.Errorf("… and %d more", len(l.failures)-20)
			break
		}
		t.Errorf("request failed: %s", f)
	}
	if len(l.acked) == 0 {
		t.Fatal("no payout acknowledged")
	}
	return l.acked
}

// A rolling restart under load — each node in turn stopped with SIGTERM and
// started again, the leader among them, while paybench's runner sends
// payouts round-robin to all three — answers every request 2xx, with no
// transport error once the runner has failed over and retried as a
// cluster's client does, and every acknowledged payout is on all three
// nodes afterwards.
func TestRollingRestartUnderLoad(t *testing.T) {
	endToEnd(t)
	procs := startCluster(t, 3, "--sandbox-settlement", "30ms", "--drain-timeout", "10s")
	var addrs []string
	for _, p := range procs {
		addrs = append(addrs, p.addr)
	}
	var (
		ackedMu sync.Mutex
		acked   = map[string]string{} // reference → payout id
		badAck  error
	)
	cfg := bench.Config{
		Addr:           strings.Join(addrs, ","),
		Key:            testKey,
		Connections:    6,
		Duration:       2 * time.Minute,
		RequestsMax:    100_000,
		RequestTimeout: 20 * time.Second,
		SetupTimeout:   time.Minute,
		Orgs:           2,
		Keys:           8,
		Acknowledged: func(request, response []byte) {
			var req struct {
				ExternalReference string `json:"externalReference"`
			}
			var resp struct {
				Payout payoutView `json:"payout"`
			}
			errReq, errResp := json.Unmarshal(request, &req), json.Unmarshal(response, &resp)
			ackedMu.Lock()
			defer ackedMu.Unlock()
			if err := errors.Join(errReq, errResp); err != nil || req.ExternalReference == "" || resp.Payout.ID == "" {
				badAck = fmt.Errorf("acknowledged payout %q → %q unreadable: %v\n%s", req.ExternalReference, resp.Payout.ID, err, response)
				return
			}
			acked[req.ExternalReference] = resp.Payout.ID
		},
	}
	ctx, stopLoad := context.WithCancel(context.Background())
	defer stopLoad()
	type outcome struct {
		res *bench.Result
		err error
	}
	ran := make(chan outcome, 1)
	go func() {
		res, err := bench.Run(ctx, cfg, bench.Uniform)
		ran <- outcome{res, err}
	}()
	ackedCount := func() int {
		ackedMu.Lock()
		defer ackedMu.Unlock()
		return len(acked)
	}
	waitUntil(t, time.Minute, "50 payouts acknowledged", func() bool {
		select {
		case o := <-ran:
			t.Fatalf("the load ended before the restarts: %v", o.err)
		default:
		}
		return ackedCount() >= 50
	})
	for i, p := range procs {
		if err := p.stop(); err != nil {
			t.Errorf("n%d: SIGTERM: %v", i+1, err)
		}
		if err := p.launch(); err != nil {
			t.Fatalf("n%d: restart: %v", i+1, err)
		}
		p.waitReady()
		// The load goes on through the restarted node before the next.
		after := ackedCount()
		waitUntil(t, 30*time.Second, fmt.Sprintf("payouts acknowledged after n%d restarted", i+1), func() bool { return ackedCount() >= after+20 })
	}
	stopLoad()
	o := <-ran
	if o.err != nil && !errors.Is(o.err, context.Canceled) {
		t.Fatalf("paybench: %v", o.err)
	}
	res := o.res
	t.Logf("%d requests, %d acknowledged payouts, statuses %v, transport errors %v; %d attempts failed over to the next node, %d re-sent, %d answered by the replay of an earlier attempt",
		res.Requests, ackedCount(), res.Statuses, res.TransportErrors, res.Failovers, res.Retries, res.Replays)
	if res.Requests == 0 {
		t.Fatal("no request measured")
	}
	if res.Errors != 0 || len(res.TransportErrors) != 0 || res.Unexpected != 0 {
		t.Errorf("%d errors (statuses %v, transport errors %v), %d requests without the expected answer",
			res.Errors, res.Statuses, res.TransportErrors, res.Unexpected)
	}
	if badAck != nil {
		t.Error(badAck)
	}

	// Every acknowledged payout is in every node's state.
	nodes := openStopped(t, procs)
	for i, node := range nodes {
		st := node.Reader()
		missing := 0
		for ref, id := range acked {
			if po, ok := st.Payout(id); !ok || po.ExternalReference != ref {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("n%d lacks %d of the %d acknowledged payouts", i+1, missing, len(acked))
		}
	}
}

// openStopped stops the processes, then runs the three nodes' Raft in this
// process on their data directories until each has applied the whole log.
func openStopped(t *testing.T, procs []*proc) []*raft.Node {
	t.Helper()
	for i, p := range procs {
		if err := p.stop(); err != nil {
			t.Fatalf("n%d: SIGTERM: %v", i+1, err)
		}
	}
	peers, _, err := parsePeers(flagValue(procs[0].args, "--peers"))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*raft.Node
	for i, p := range procs {
		node, err := raft.Open(raft.Config{ID: peers[i].ID, DataDir: p.dataDir, RaftAddr: peers[i].RaftAddr, Peers: peers})
		if err != nil {
			t.Fatalf("n%d: open its data directory: %v", i+1, err)
		}
		t.Cleanup(func() { node.Close() })
		nodes = append(nodes, node)
	}
	waitUntil(t, 30*time.Second, "the three nodes catch up with each other", func() bool {
		var leader *raft.Node
		for _, n := range nodes {
			if n.IsLeader() {
				leader = n
			}
		}
		caughtUp := leader != nil
		for _, n := range nodes {
			caughtUp = caughtUp && n.Ready() && n.AppliedIndex() == leader.AppliedIndex()
		}
		return caughtUp
	})
	return nodes
}

// checkReplicasAgree stops the processes and checks that their replicas
// hold the same state at the same applied index, and keep the ledger's
// invariants.
func checkReplicasAgree(t *testing.T, procs []*proc) {
	t.Helper()
	nodes := openStopped(t, procs)
	first, firstIndex, err := nodes[0].StateDigest()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		d, index, err := n.StateDigest()
		switch {
		case err != nil:
			t.Errorf("n%d: digest: %v", i+1, err)
		case d != first || index != firstIndex:
			t.Errorf("n%d holds state %x at %d; n1 %x at %d", i+1, d[:8], index, first[:8], firstIndex)
		}
		if err := n.CheckState(); err != nil {
			t.Errorf("n%d: the ledger's invariants: %v", i+1, err)
		}
	}
	t.Logf("the three replicas agree at index %d", firstIndex)
}

// withoutFlag returns args less a boolean flag.
func withoutFlag(args []string, flag string) []string {
	var out []string
	for _, a := range args {
		if a != flag {
			out = append(out, a)
		}
	}
	return out
}

// A member whose data directory is empty, started with --peers and without
// --bootstrap, founds no cluster of its own: it waits, and catches up when
// the cluster's leader replicates to it.
func TestEmptyMemberJoinsInsteadOfFounding(t *testing.T) {
	endToEnd(t)
	procs, leader := seededCluster(t, "10.00")
	wiped := procs[(leader+1)%3]
	if err := wiped.stop(); err != nil {
		t.Fatal(err)
	}
	wiped.dataDir = t.TempDir()
	wiped.args = withoutFlag(wiped.args, "--bootstrap")
	if err := wiped.launch(); err != nil {
		t.Fatal(err)
	}
	wiped.waitReady()
	var h struct {
		Leader string `json:"leader"`
	}
	if st, err := call(wiped.addr, "GET", "/readyz", nil, &h); err != nil || st != 200 || h.Leader != fmt.Sprintf("n%d", leader+1) {
		t.Fatalf("the wiped member: %d %v, leader %q; want ready under n%d", st, err, h.Leader, leader+1)
	}
	if !strings.Contains(wiped.stderr.String(), "not founding a cluster") {
		t.Errorf("no warning that the empty node did not found a cluster:\n%s", wiped.stderr)
	}

	// Alone, on an empty directory, the same node never becomes ready.
	peers := flagValue(wiped.args, "--peers")
	alone := startServer(t, t.TempDir(), "--node-id", "n1", "--raft-addr", "127.0.0.1:0", "--peers",
		strings.Replace(peers, strings.Split(strings.Split(peers, ",")[0], "@")[0], "n1="+freeAddrs(t, 1)[0], 1))
	time.Sleep(2 * time.Second)
	if st, _ := call(alone.addr, "GET", "/readyz", nil, nil); st == 200 {
		t.Fatal("an empty node without --bootstrap founded a cluster on its own")
	}
}

// runCluster runs `payments cluster args…` and returns its output and exit
// status.
func runCluster(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"cluster"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// The cluster subcommands over the admin API: status lists every member
// with its role and indexes; transfer-leader moves leadership; remove takes
// a dead member out and the two left still commit writes; and the error
// paths: a bad token, an unknown member, a change sent to a follower only.
func TestClusterCommands(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(tokenFile, []byte("operator-token-e2e-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badToken := filepath.Join(dir, "bad-token")
	if err := os.WriteFile(badToken, []byte("not-the-operator-token-000"), 0o600); err != nil {
		t.Fatal(err)
	}
	procs := startCluster(t, 3, "--admin-token-file", tokenFile, "--admin-addr", "127.0.0.1:0")
	var admin []string
	for _, p := range procs {
		admin = append(admin, p.stdoutValue("admin_addr"))
	}
	all := strings.Join(admin, ",")

	out, errOut, code := runCluster(t, "status", "--admin-addr", all, "--admin-token-file", tokenFile)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	t.Logf("payments cluster status:\n%s", out)
	leaders := 0
	for i := range procs {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, fmt.Sprintf("n%d ", i+1)) {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, "voter") || strings.Contains(line, "unreachable") {
			t.Errorf("status has no reachable voter n%d:\n%s", i+1, out)
		}
		if strings.Contains(line, " leader ") {
			leaders++
		}
	}
	if leaders != 1 {
		t.Errorf("status shows %d leaders:\n%s", leaders, out)
	}

	// Error paths.
	if _, errOut, code := runCluster(t, "status", "--admin-addr", all, "--admin-token-file", badToken); code == 0 || !strings.Contains(errOut, "unauthorized") {
		t.Errorf("status with a bad token: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{{"transfer-leader", "n9"}, {"remove", "n9"}} {
		if _, errOut, code := runCluster(t, append(args, "--admin-addr", all, "--admin-token-file", tokenFile)...); code == 0 || !strings.Contains(errOut, "not_a_member") {
			t.Errorf("%v: exit %d, %q; want not_a_member", args, code, errOut)
		}
	}
	leader := leaderSeenBy(t, procs, 0, -1)
	follower := (leader + 1) % 3
	if _, errOut, code := runCluster(t, "transfer-leader", "--admin-addr", admin[follower], "--admin-token-file", tokenFile); code == 0 || !strings.Contains(errOut, "not the leader") {
		t.Errorf("transfer-leader sent to a follower only: exit %d, %q", code, errOut)
	}

	// transfer-leader to a named follower.
	if _, errOut, code := runCluster(t, "transfer-leader", fmt.Sprintf("n%d", follower+1), "--admin-addr", all, "--admin-token-file", tokenFile); code != 0 {
		t.Fatalf("transfer-leader: exit %d\n%s", code, errOut)
	}
	if now := leaderSeenBy(t, procs, leader, leader); now != follower {
		t.Fatalf("after transfer-leader n%d, the leader is n%d", follower+1, now+1)
	}

	// remove a dead member: the two left still commit.
	dead := (follower + 1) % 3
	procs[dead].kill()
	if _, errOut, code := runCluster(t, "remove", fmt.Sprintf("n%d", dead+1), "--admin-addr", all, "--admin-token-file", tokenFile); code != 0 {
		t.Fatalf("remove: exit %d\n%s", code, errOut)
	}
	out, errOut, code = runCluster(t, "status", "--admin-addr", all, "--admin-token-file", tokenFile)
	if code != 0 || strings.Contains(out, fmt.Sprintf("n%d ", dead+1)) {
		t.Fatalf("status after remove: exit %d, %s\n%s", code, errOut, out)
	}
	if st, err := call(procs[leader].addr, "POST", "/v1/simulations/fund-balance",
		map[string]any{"amount": "10.00", "currency": "GHS", "externalReference": "after-remove"}, nil); err != nil || st != 201 {
		t.Fatalf("write after removing n%d: %d %v", dead+1, st, err)
	}
}

// Under load: a fourth node started with --join catches up — through a snapshot, since
// the leader truncated its log — as a non-voter, then votes; a dead member
// is removed; the three left (the new one among them) take writes, the new
// one can lead and serves every payout acknowledged before it joined, and
// the others forward to it (they learnt its HTTP address through the log).
func TestJoinCatchesUpThenVotes(t *testing.T) {
	endToEnd(t)
	tokenFile := writeAdminToken(t, t.TempDir())
	snapshots := []string{"--snapshot-threshold", "16", "--snapshot-interval", "100ms", "--trailing-logs", "8"}
	procs := startCluster(t, 3, append([]string{"--admin-token-file", tokenFile, "--admin-addr", "127.0.0.1:0"}, snapshots...)...)
	var admin []string
	for _, p := range procs {
		admin = append(admin, p.stdoutValue("admin_addr"))
	}
	fundGHS(t, procs[0].addr, "10000.00", "seed")
	acked := postPayouts(t, procs, 80, "1.00", "before-join-")
	time.Sleep(500 * time.Millisecond) // a snapshot, and the log truncated behind it

	// Membership changes under load, to the three original nodes.
	fc := &failoverClient{}
	for _, p := range procs {
		fc.addrs = append(fc.addrs, p.addr)
	}
	load := startPayoutLoad(fc, 6, "membership")
	n4 := startServer(t, t.TempDir(), append([]string{"--node-id", "n4", "--join", strings.Join(admin, ","),
		"--admin-token-file", tokenFile, "--admin-addr", "127.0.0.1:0", "--rate-limit", "1000000"}, snapshots...)...)
	if !eventually(30*time.Second, func() bool {
		n4.stdoutMu.Lock()
		defer n4.stdoutMu.Unlock()
		return n4.stdoutValues["joined"] == "n4"
	}) {
		t.Fatalf("n4 did not join within 30s\n%s", n4.stderr)
	}
	admin = append(admin, n4.stdoutValue("admin_addr"))
	all := strings.Join(admin, ",")
	out, errOut, code := runCluster(t, "status", "--admin-addr", all, "--admin-token-file", tokenFile)
	if code != 0 || !regexp.MustCompile(`(?m)^n4 .* voter `).MatchString(out) {
		t.Fatalf("status after the join: exit %d %s\n%s", code, errOut, out)
	}
	t.Logf("after the join:\n%s", out)

	// A member stopped (SIGTERM: its clients move on) and removed; the new
	// node leads.
	leader := leaderSeenBy(t, procs, 0, -1)
	dead := (leader + 1) % 3
	if err := procs[dead].stop(); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCluster(t, "remove", fmt.Sprintf("n%d", dead+1), "--admin-addr", all, "--admin-token-file", tokenFile); code != 0 {
		t.Fatalf("remove: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCluster(t, "transfer-leader", "n4", "--admin-addr", all, "--admin-token-file", tokenFile); code != 0 {
		t.Fatalf("transfer-leader n4: exit %d\n%s", code, errOut)
	}
	waitUntil(t, 10*time.Second, "n4 leads", func() bool {
		var h struct {
			Role string `json:"role"`
		}
		st, _ := call(n4.addr, "GET", "/readyz", nil, &h)
		return st == 200 && h.Role == "leader"
	})
	maps.Copy(acked, load.stop(t))
	// n4 leads: it answers from its own state, which came by snapshot.
	wantPayouts(t, n4.addr, acked, "on n4")
	// The survivors forward to n4.
	for _, p := range procs {
		if p != procs[dead] {
			st, err := call(p.addr, "POST", "/v1/payouts", mtnPayout("1.00", "after-join-via-"+p.addr), nil)
			if err != nil || st != 201 {
				t.Fatalf("write via %s with n4 leading: %d %v", p.addr, st, err)
			}
		}
	}
}

// SIGTERM on the leader hands leadership over before the node drains: the
// cluster has a new leader sooner than any follower's heartbeat timeout
// (one second, hashicorp's default) would start an election.
func TestSIGTERMHandsOverLeadership(t *testing.T) {
	endToEnd(t)
	procs := startCluster(t, 3)
	leader := leaderSeenBy(t, procs, 0, -1)
	survivor := (leader + 1) % 3
	stopped := make(chan error, 1)
	began := time.Now()
	go func() { stopped <- procs[leader].stop() }()
	next := leaderSeenBy(t, procs, survivor, leader)
	took := time.Since(began)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	t.Logf("n%d leads %v after SIGTERM on n%d", next+1, took.Round(time.Millisecond), leader+1)
	if took >= time.Second {
		t.Fatalf("a new leader took %v after SIGTERM on the leader: no handover", took)
	}
}

// A request a follower forwarded to a leader that then froze goes to the
// new leader as soon as one is elected, not when the old one thaws.
func TestForwardToFrozenLeaderGoesToTheNext(t *testing.T) {
	endToEnd(t)
	procs, leader := seededCluster(t, "100.00")
	follower := procs[(leader+1)%3]
	procs[leader].freeze()
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			procs[leader].cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer thaw()
	type answer struct {
		status int
		err    error
		id     string
	}
	answered := make(chan answer, 1)
	began := time.Now()
	go func() {
		var body struct {
			Payout payoutView `json:"payout"`
		}
		st, err := call(follower.addr, "POST", "/v1/payouts", mtnPayout("10.00", "through-a-freeze"), &body)
		answered <- answer{st, err, body.Payout.ID}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-time.After(12 * time.Second):
		thaw()
		a = <-answered
		t.Fatalf("the forward waited for the frozen leader: answered %d %v only after it thawed", a.status, a.err)
	}
	took := time.Since(began)
	thaw()
	if a.err != nil || a.status != 201 {
		t.Fatalf("payout through a follower while the leader froze: %d %v", a.status, a.err)
	}
	t.Logf("answered 201 after %v, the old leader still frozen", took.Round(time.Millisecond))
	procs[leader].waitReady()
	var body struct {
		Payout payoutView `json:"payout"`
	}
	if st, err := call(procs[leader].addr, "GET", "/v1/payouts/by-reference/through-a-freeze", nil, &body); err != nil || st != 200 || body.Payout.ID != a.id {
		t.Fatalf("the payout after the thaw: %d %v %q, want %s", st, err, body.Payout.ID, a.id)
	}
}
