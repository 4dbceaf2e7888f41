package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

// End-to-end tests: they build the real binary, run it as a process on
// loopback, and talk to it over HTTP, as an operator and a client would.

var binaryOnce struct {
	sync.Once
	path string
	err  error
}

// binary builds cmd/payments once per test run.
func binary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "payments-e2e-bin")
		if err != nil {
			binaryOnce.err = err
			return
		}
		binaryOnce.path = filepath.Join(dir, "payments")
		out, err := exec.Command("go", "build", "-o", binaryOnce.path, ".").CombinedOutput()
		if err != nil {
			binaryOnce.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryOnce.err != nil {
		t.Fatal(binaryOnce.err)
	}
	return binaryOnce.path
}

const testKey = "sk_test_e2etestbootstrapkey0001"

// proc is a running server process.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	addr    string
	stderr  *testkit.Buffer
	exited  chan error
	dataDir string
	args    []string
	metrics chan string // the metrics_addr line, when --metrics-addr is set

	stdoutMu     sync.Mutex
	stdoutValues map[string]string // the key=value lines it printed
}

// stdoutValue waits (5 s at most) for the process to print key=value.
func (p *proc) stdoutValue(key string) string {
	p.t.Helper()
	var v string
	waitUntil(p.t, 5*time.Second, p.addr+" prints "+key+"=", func() bool {
		p.stdoutMu.Lock()
		defer p.stdoutMu.Unlock()
		var ok bool
		v, ok = p.stdoutValues[key]
		return ok
	})
	return v
}

// endToEnd skips a test that runs the real binary under -short.
func endToEnd(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end")
	}
}

// writeAdminToken writes the operator token the end-to-end tests use into
// dir/admin-token, readable by the owner only, and returns the file's path
// for --admin-token-file.
func writeAdminToken(t *testing.T, dir string) string {
	t.Helper()
	tokenFile := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(tokenFile, []byte("operator-token-e2e-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	return tokenFile
}

// startServer runs `payments serve` with args on dataDir and waits until it
// serves the given address (learned from its stdout).
func startServer(t *testing.T, dataDir string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, dataDir: dataDir, args: args}
	if err := p.launch(); err != nil {
		t.Fatal(err)
	}
	return p
}

// startReady is startServer that also waits until the node answers
// /readyz, where most tests begin.
func startReady(t *testing.T, dataDir string, args ...string) *proc {
	t.Helper()
	p := startServer(t, dataDir, args...)
	p.waitReady()
	return p
}

// errPortTaken is a start that lost its reserved port to another process.
var errPortTaken = errors.New("address already in use")

func (p *proc) launch() error {
	p.t.Helper()
	all := append([]string{"serve", "--data-dir", p.dataDir, "--bootstrap-key", testKey, "--log-level", "warn"}, p.args...)
	if !containsFlag(p.args, "--http-addr") {
		all = append(all, "--http-addr", "127.0.0.1:0")
	}
	if !containsFlag(p.args, "--raft-addr") {
		all = append(all, "--raft-addr", "127.0.0.1:0")
	}
	cmd := exec.Command(binary(p.t), all...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	p.stderr = &testkit.Buffer{}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd = cmd
	p.exited = make(chan error, 1)
	addrCh := make(chan string, 1)
	p.metrics = make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "http_addr="); ok {
				addrCh <- a
			}
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				p.stdoutMu.Lock()
				if p.stdoutValues == nil {
					p.stdoutValues = map[string]string{}
				}
				p.stdoutValues[k] = v
				p.stdoutMu.Unlock()
			}
			if a, ok := strings.CutPrefix(sc.Text(), "metrics_addr="); ok {
				p.metrics <- a
			}
		}
		p.exited <- cmd.Wait()
	}()
	p.t.Cleanup(func() { p.kill() })
	select {
	case p.addr = <-addrCh:
		return nil
	case err := <-p.exited:
		if strings.Contains(p.stderr.String(), "address already in use") {
			return errPortTaken
		}
		return fmt.Errorf("server exited before serving: %v\n%s", err, p.stderr)
	case <-time.After(20 * time.Second):
		return fmt.Errorf("server did not start\n%s", p.stderr)
	}
}

func containsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// kill sends SIGKILL: no drain, no flush, nothing.
func (p *proc) kill() {
	if p.cmd != nil && p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
		}
	}
}

// waitExit waits (d at most) for the process to exit after SIGTERM; unless
// it exits cleanly, the error names it and carries its stderr.
func (p *proc) waitExit(d time.Duration) error {
	select {
	case err := <-p.exited:
		if err != nil {
			return fmt.Errorf("%s exited after SIGTERM: %w\n%s", p.addr, err, p.stderr)
		}
		return nil
	case <-time.After(d):
		// SIGQUIT makes the Go runtime print every goroutine's stack and
		// exit: the failure then says where the shutdown stood.
		p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
		return fmt.Errorf("%s did not exit within %s of SIGTERM; its own goroutines then:\n%s", p.addr, d, ownStacks(p.stderr.String()))
	}
}

// ownStacks is a log followed by a Go runtime's goroutine dump, cut to the
// log and the goroutines running this program's code (package main and
// payments/...), which say where it was stuck; the runtime's and
// libraries' idle goroutines are left out.
func ownStacks(log string) string {
	head, dump, found := strings.Cut(log, "SIGQUIT: quit")
	if !found {
		return log
	}
	var b strings.Builder
	b.WriteString(head)
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "\nmain.") || strings.Contains(g, "payments/") {
			b.WriteString(g)
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// waitReady waits for /readyz.
func (p *proc) waitReady() {
	p.t.Helper()
	ready := eventually(20*time.Second, func() bool {
		resp, err := nethttp.Get("http://" + p.addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if !ready {
		p.t.Fatalf("%s not ready\n%s", p.addr, p.stderr)
	}
}

var client = &nethttp.Client{Timeout: 20 * time.Second, Transport: &nethttp.Transport{MaxIdleConnsPerHost: 64}}

// call sends a JSON request with the bootstrap key and decodes a JSON
// response into out (if not nil).
func call(addr, method, path string, body any, out any) (int, error) {
	return callWith(client, testKey, nil, addr, method, path, body, out)
}

// nodeEnv is a test's node, called with the bootstrap key.
type nodeEnv struct {
	t *testing.T
	p *proc
}

// api calls the API with the bootstrap key and wants status want.
func (e *nodeEnv) api(method, path string, body, out any, want int) {
	e.t.Helper()
	st, err := call(e.p.addr, method, path, body, out)
	if err != nil || st != want {
		e.t.Fatalf("%s %s: %d %v, want %d", method, path, st, err, want)
	}
}

// mtnPayout is the body of a payout of amount GHS to an MTN Ghana wallet,
// under externalReference ref.
func mtnPayout(amount, ref string) map[string]any {
	return map[string]any{
		"to":                map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": amount},
		"externalReference": ref,
	}
}

// postPayouts creates n payouts of amount GHS through the nodes in turn,
// under the references prefix0, prefix1, …, and returns them as reference
// → payout id.
func postPayouts(t *testing.T, procs []*proc, n int, amount, prefix string) map[string]string {
	t.Helper()
	acked := map[string]string{}
	for i := range n {
		var body struct {
			Payout payoutView `json:"payout"`
		}
		ref := fmt.Sprintf("%s%d", prefix, i)
		node := i % len(procs)
		st, err := call(procs[node].addr, "POST", "/v1/payouts", mtnPayout(amount, ref), &body)
		if err != nil || st != 201 {
			t.Fatalf("payout %d via n%d: %d %v", i, node+1, st, err)
		}
		acked[ref] = body.Payout.ID
	}
	return acked
}

// wantPayouts fails unless the node at addr finds every acknowledged
// payout (reference → id) by its reference; where names the node or the
// moment in the message.
func wantPayouts(t *testing.T, addr string, acked map[string]string, where string) {
	t.Helper()
	for ref, id := range acked {
		var body struct {
			Payout payoutView `json:"payout"`
		}
		if st, err := call(addr, "GET", "/v1/payouts/by-reference/"+ref, nil, &body); err != nil || st != 200 || body.Payout.ID != id {
			t.Fatalf("acknowledged payout %s %s: %d %v %q", ref, where, st, err, body.Payout.ID)
		}
	}
}

// fundGHS adds amount GHS to the test organization's balance through the
// node at addr, under externalReference ref, and wants it created (201).
func fundGHS(t *testing.T, addr, amount, ref string) {
	t.Helper()
	if st, err := call(addr, "POST", "/v1/simulations/fund-balance",
		map[string]any{"amount": amount, "currency": "GHS", "externalReference": ref}, nil); err != nil || st != 201 {
		t.Fatalf("fund %s GHS through %s: %d %v", amount, addr, st, err)
	}
}

// callWith is call through hc, with key and extra headers.
func callWith(hc *nethttp.Client, key string, headers map[string]string, addr, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := nethttp.NewRequest(method, "http://"+addr+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s: %w", raw, err)
		}
	}
	return resp.StatusCode, nil
}

type payoutView struct {
	ID                string `json:"id"`
	Status            string `json:"status"`
	ExternalReference string `json:"externalReference"`
	CreatedAt         string `json:"createdAt"`
	// From is the whole debit, the fee included; To what the recipient
	// is sent, whose cents pick the sandbox rail's outcome.
	From struct {
		Amount string `json:"amount"`
	} `json:"from"`
	To struct {
		Amount string `json:"amount"`
	} `json:"to"`
	Fee struct {
		Amount string `json:"amount"`
	} `json:"fee"`
}

type accountView struct {
	ID               string `json:"id"`
	AvailableBalance string `json:"availableBalance"`
	TotalBalance     string `json:"totalBalance"`
}

// cents parses a GHS decimal string ("-12.05") into minor units.
func cents(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || len(frac) != 2 {
		t.Fatalf("amount %q is not a GHS decimal string", s)
	}
	if neg {
		return -(w*100 + f)
	}
	return w*100 + f
}

// listPayouts walks every page of GET /v1/payouts.
func listPayouts(t *testing.T, addr string) []payoutView {
	t.Helper()
	var all []payoutView
	cursor := ""
	for page := 0; page < 10_000; page++ {
		var body struct {
			Data       []payoutView `json:"data"`
			HasMore    bool         `json:"hasMore"`
			NextCursor *string      `json:"nextCursor"`
		}
		path := "/v1/payouts?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		if st, err := call(addr, "GET", path, nil, &body); err != nil || st != 200 {
			t.Fatalf("list payouts: %d %v", st, err)
		}
		all = append(all, body.Data...)
		if !body.HasMore {
			return all
		}
		cursor = *body.NextCursor
	}
	t.Fatal("too many pages")
	return nil
}

func ghsAccount(t *testing.T, addr string) accountView {
	t.Helper()
	var body struct {
		Data []accountView `json:"data"`
	}
	if st, err := call(addr, "GET", "/v1/accounts", nil, &body); err != nil || st != 200 || len(body.Data) != 1 {
		t.Fatalf("accounts: %d %v %+v", st, err, body)
	}
	return body.Data[0]
}

// Every acknowledged write survives kill -9 and a restart: concurrent
// payouts, SIGKILL mid-load, restart; each acknowledged payout is there
// exactly once, and the balance is funded − debited + refunded. Once
// recovering from the log alone, once from snapshots taken under load plus
// the log after them.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	endToEnd(t)
	t.Run("log", func(t *testing.T) { kill9(t) })
	t.Run("snapshot+log", func(t *testing.T) {
		kill9(t, "--snapshot-threshold", "16", "--snapshot-interval", "100ms", "--trailing-logs", "8")
	})
}

// runWriters runs op(w, i) on workers goroutines, w their number and i
// counting from 0 in each, until op answers false, i reaches n (0: no
// bound) or stop is called; stop returns once they all have.
func runWriters(workers, n int, op func(w, i int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; n == 0 || i < n; i++ {
				select {
				case <-done:
					return
				default:
				}
				if !op(w, i) {
					return
				}
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

func kill9(t *testing.T, extra ...string) {
	dir := t.TempDir()
	args := append([]string{"--rate-limit", "1000000", "--sandbox-settlement", "30ms"}, extra...)
	p := startReady(t, dir, args...)
	const funded = 100_000_000 // 1,000,000.00 GHS
	fundGHS(t, p.addr, "1000000.00", "seed")

	var mu sync.Mutex
	acked := map[string]string{} // reference → payout id
	stop := runWriters(32, 0, func(w, i int) bool {
		ref := fmt.Sprintf("w%d-%d", w, i)
		// Cents 01 fail at the rail and are refunded; 03 time out and
		// reconcile; the rest complete.
		amount := fmt.Sprintf("%d.%02d", 1+i%50, []int{0, 1, 3, 25}[i%4])
		var body struct {
			Payout payoutView `json:"payout"`
		}
		st, err := call(p.addr, "POST", "/v1/payouts", mtnPayout(amount, ref), &body)
		if err != nil {
			return false // the server died: this one's outcome is unknown
		}
		if st == 201 {
			mu.Lock()
			acked[ref] = body.Payout.ID
			mu.Unlock()
		} else if st != 503 {
			t.Errorf("payout %s: status %d", ref, st)
		}
		return true
	})
	// Kill mid-load: after a few hundred acknowledged writes, however slow
	// a loaded machine makes the server.
	eventually(20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 300
	})
	p.kill()
	stop()
	if len(acked) < 100 {
		t.Fatalf("only %d payouts acknowledged before the kill", len(acked))
	}
	t.Logf("%d payouts acknowledged before SIGKILL", len(acked))

	if len(extra) > 0 {
		snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "state.bin"))
		if len(snaps) == 0 {
			t.Fatal("no snapshot was taken under load")
		}
	}
	p = startReady(t, dir, args...)

	// Every acknowledged payout is there, under its reference, once.
	payouts := listPayouts(t, p.addr)
	byRef := map[string]payoutView{}
	seen := map[string]bool{}
	for _, po := range payouts {
		if seen[po.ID] {
			t.Fatalf("payout %s listed twice", po.ID)
		}
		seen[po.ID] = true
		if _, dup := byRef[po.ExternalReference]; dup {
			t.Fatalf("two payouts for reference %s", po.ExternalReference)
		}
		byRef[po.ExternalReference] = po
	}
	for ref, id := range acked {
		if got, ok := byRef[ref]; !ok || got.ID != id {
			t.Fatalf("acknowledged payout %s (%s) lost after kill -9: %+v", ref, id, got)
		}
	}

	// The restarted leader resumes the rail work: every payout settles.
	open := 0
	if !eventually(60*time.Second, func() bool {
		open = 0
		payouts = listPayouts(t, p.addr)
		for _, po := range payouts {
			if po.Status != "completed" && po.Status != "failed" {
				open++
			}
		}
		return open == 0
	}) {
		t.Fatalf("%d payouts still open a minute after restart", open)
	}

	// Balance = funded − debited + refunded.
	var debited, refunded int64
	for _, po := range payouts {
		d := cents(t, po.From.Amount)
		if fee := cents(t, po.Fee.Amount); d != cents(t, po.To.Amount)+fee {
			t.Errorf("payout %s debits %s, not %s sent plus the %s fee", po.ID, po.From.Amount, po.To.Amount, po.Fee.Amount)
		}
		debited += d
		if po.Status == "failed" {
			refunded += d
			if !strings.HasSuffix(po.To.Amount, ".01") {
				t.Errorf("payout %s of %s failed", po.ID, po.To.Amount)
			}
		} else if strings.HasSuffix(po.To.Amount, ".01") {
			t.Errorf("payout %s of %s should have been rejected by the sandbox rail", po.ID, po.To.Amount)
		}
	}
	acct := ghsAccount(t, p.addr)
	want := funded - debited + refunded
	if got := cents(t, acct.TotalBalance); got != want {
		t.Fatalf("total balance %d, want funded %d − debited %d + refunded %d = %d", got, funded, debited, refunded, want)
	}
	if got := cents(t, acct.AvailableBalance); got != want {
		t.Fatalf("available balance %d, want %d", got, want)
	}
}

// SIGTERM drains: requests in flight finish, and the process exits 0.
func TestSIGTERMDrains(t *testing.T) {
	endToEnd(t)
	p := startReady(t, t.TempDir(), "--rate-limit", "1000000", "--log-level", "info")
	fundGHS(t, p.addr, "1000.00", "seed")
	type result struct {
		status int
		err    error
	}
	results := make(chan result, 64)
	for i := 0; i < 64; i++ {
		go func(i int) {
			st, err := call(p.addr, "POST", "/v1/payouts", mtnPayout("1.00", fmt.Sprintf("drain-%d", i)), nil)
			results <- result{st, err}
		}(i)
	}
	time.Sleep(5 * time.Millisecond) // the requests are on their way
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.waitExit(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 64; i++ {
		r := <-results
		// A request either made it in and completed, or found the door
		// closed; none is cut off with a broken answer.
		if r.err == nil && r.status != 201 {
			t.Errorf("request in flight answered %d", r.status)
		}
	}
	if !strings.Contains(p.stderr.String(), "stopped cleanly") {
		t.Errorf("no clean stop in the log:\n%s", p.stderr)
	}
}

// freeAddrs reserves loopback ports.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ln.Addr().String())
		ln.Close()
	}
	return out
}

// A three-process cluster: every node serves (followers forward to the
// leader), and after the leader is killed the new leader serves every
// acknowledged write.
func TestThreeProcessCluster(t *testing.T) {
	endToEnd(t)
	procs := startCluster(t, 3)
	// Writes through every node.
	fundGHS(t, procs[1].addr, "100000.00", "seed")
	acked := postPayouts(t, procs, 60, "10.00", "c-")
	// Find and kill the leader.
	// A follower answers 503 for as long as it is still applying what
	// was committed: ask until it has caught up.
	var health struct {
		Leader string `json:"leader"`
	}
	waitUntil(t, 10*time.Second, "n1 ready", func() bool {
		st, err := call(procs[0].addr, "GET", "/readyz", nil, &health)
		return err == nil && st == 200
	})
	leader := int(health.Leader[1] - '1')
	procs[leader].kill()
	survivor := procs[(leader+1)%3]
	waitUntil(t, 20*time.Second, "a new leader after killing the old one", func() bool {
		var h struct {
			Leader string `json:"leader"`
			Role   string `json:"role"`
		}
		st, _ := call(survivor.addr, "GET", "/readyz", nil, &h)
		return st == 200 && h.Leader != "" && h.Leader != fmt.Sprintf("n%d", leader+1)
	})
	wantPayouts(t, survivor.addr, acked, "after failover")
	// The new leader takes writes, through either survivor.
	for i, p := range []*proc{procs[(leader+1)%3], procs[(leader+2)%3]} {
		st, err := call(p.addr, "POST", "/v1/payouts", mtnPayout("10.00", fmt.Sprintf("after-%d", i)), nil)
		if err != nil || st != 201 {
			t.Fatalf("write after failover: %d %v", st, err)
		}
	}
}
