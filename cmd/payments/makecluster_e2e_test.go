package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// makeCluster is a cluster that `make cluster` started: its data directory
// and the make variables that place its ports.
type makeCluster struct {
	t       *testing.T
	dataDir string
	vars    []string // VAR=value for every make call
	http    [3]string
	pids    map[int]bool // every node process make started
}

// clusterPortsFrom picks the first port of each of the three ranges
// (HTTP, Raft, metrics) make cluster numbers base+1..base+3. They are
// drawn below Linux's ephemeral range (32768 up), which the other tests'
// ":0" listeners use, and each of the nine ports is checked free.
func clusterPortsFrom(t *testing.T) (httpBase, raftBase, metricsBase int) {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(12000/10)*10
		// Three ranges of three ports, 10 apart: base+1..3, base+11..13,
		// base+21..23 (base is a multiple of 10, below 32000-23).
		if free(base+1, base+2, base+3, base+11, base+12, base+13, base+21, base+22, base+23) {
			return base, base + 10, base + 20
		}
	}
	t.Fatal("no nine free loopback ports below 32000 in 50 draws")
	return 0, 0, 0
}

// free reports whether every port can be listened on at 127.0.0.1 now.
func free(ports ...int) bool {
	for _, p := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			return false
		}
		ln.Close()
	}
	return true
}

// newMakeCluster places a cluster on fresh ports and a temporary data
// directory, and arranges that whatever make starts is killed when the
// test ends, however it ends.
func newMakeCluster(t *testing.T) *makeCluster {
	t.Helper()
	httpBase, raftBase, metricsBase := clusterPortsFrom(t)
	c := &makeCluster{t: t, dataDir: t.TempDir(), pids: map[int]bool{}}
	c.vars = []string{
		// The binary the other end-to-end tests built: make's build
		// target is skipped (-o build), so the test does not write bin/.
		"BIN=" + filepath.Dir(binary(t)),
		"DATA_DIR=" + c.dataDir,
		"CLUSTER_HTTP_BASE=" + strconv.Itoa(httpBase),
		"CLUSTER_RAFT_BASE=" + strconv.Itoa(raftBase),
		"CLUSTER_METRICS_BASE=" + strconv.Itoa(metricsBase),
		"CLUSTER_KEY=" + testKey,
	}
	for i := range c.http {
		c.http[i] = fmt.Sprintf("127.0.0.1:%d", httpBase+i+1)
	}
	t.Cleanup(c.killAll)
	return c
}

// make runs make target in the repository root with the cluster's
// variables, and returns its output and error.
func (c *makeCluster) make(target string) (string, error) {
	c.t.Helper()
	args := append([]string{"-C", "../..", "--no-print-directory", "-o", "build", target}, c.vars...)
	cmd := exec.Command("make", args...)
	// Under `make test`, the outer make's flags and variables would reach
	// this one through the environment.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		err = fmt.Errorf("make %s still running after 2 minutes: %w", target, <-done)
	}
	c.recordPids()
	return out.String(), err
}

// recordPids notes the pid of every node whose pid file exists.
func (c *makeCluster) recordPids() {
	for i := 1; i <= 3; i++ {
		if pid, ok := c.pidOf(i); ok {
			c.pids[pid] = true
		}
	}
}

// pidOf reads node i's pid file.
func (c *makeCluster) pidOf(i int) (int, bool) {
	b, err := os.ReadFile(filepath.Join(c.dataDir, fmt.Sprintf("n%d", i), "payments.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// runningNode reports whether pid is a live process of the payments
// binary (a zombie or a pid reused by another program is not).
func runningNode(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(cmdline, []byte("payments\x00serve"))
}

// killAll sends SIGKILL to every node process make started that still
// runs.
func (c *makeCluster) killAll() {
	c.recordPids()
	for pid := range c.pids {
		if runningNode(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// logs returns the tail of every node's log, for a failure message.
func (c *makeCluster) logs() string {
	var b strings.Builder
	for i := 1; i <= 3; i++ {
		log, _ := os.ReadFile(filepath.Join(c.dataDir, fmt.Sprintf("n%d", i), "payments.log"))
		fmt.Fprintf(&b, "--- n%d:\n%s\n", i, logTail(log, 2000))
	}
	return b.String()
}

func logTail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// leader returns the index of the leader every node reports ready under,
// waiting up to 20 s for them to agree.
func (c *makeCluster) leader() int {
	c.t.Helper()
	leader := -1
	var seen map[string]bool
	if !eventually(20*time.Second, func() bool {
		seen = map[string]bool{}
		for _, addr := range c.http {
			var h struct {
				Leader string `json:"leader"`
			}
			if st, err := call(addr, "GET", "/readyz", nil, &h); err == nil && st == 200 {
				seen[h.Leader] = true
			} else {
				seen[""] = true
			}
		}
		for l := range seen {
			if len(seen) == 1 && len(l) == 2 && l[0] == 'n' && l[1] >= '1' && l[1] <= '3' {
				leader = int(l[1] - '1')
				return true
			}
		}
		return false
	}) {
		c.t.Fatalf("the three nodes agree on no leader after 20s: %v\n%s", seen, c.logs())
	}
	return leader
}

// stop runs make cluster-stop and checks that every node it started has
// exited and its pid file is gone.
func (c *makeCluster) stop() {
	c.t.Helper()
	pids := map[int]int{}
	for i := 1; i <= 3; i++ {
		if pid, ok := c.pidOf(i); ok {
			pids[i] = pid
		}
	}
	if len(pids) != 3 {
		c.t.Fatalf("pid files of %d nodes before make cluster-stop, want 3", len(pids))
	}
	out, err := c.make("cluster-stop")
	if err != nil {
		c.t.Fatalf("make cluster-stop: %v\n%s", err, out)
	}
	for i, pid := range pids {
		if !strings.Contains(out, fmt.Sprintf("stopped n%d (pid %d)", i, pid)) {
			c.t.Errorf("make cluster-stop does not say it stopped n%d (pid %d):\n%s", i, pid, out)
		}
		if runningNode(pid) {
			c.t.Errorf("n%d (pid %d) still runs after make cluster-stop", i, pid)
		}
		if _, ok := c.pidOf(i); ok {
			c.t.Errorf("n%d's pid file is still there after make cluster-stop", i)
		}
	}
}

// make cluster starts three nodes that elect a leader and serve a payout
// sent to a follower; make cluster-stop stops them all; make cluster again
// restarts them on the same data, which still holds the payout.
func TestMakeCluster(t *testing.T) {
	endToEnd(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("make cluster waits for the nodes with curl, which is missing")
	}
	var c *makeCluster
	for attempt := 0; ; attempt++ {
		c = newMakeCluster(t)
		out, err := c.make("cluster")
		if err == nil {
			if !strings.Contains(out, "three nodes are up") {
				t.Fatalf("make cluster succeeded without saying the nodes are up:\n%s", out)
			}
			break
		}
		// Another process may have taken a port between the check and
		// the start.
		c.killAll()
		if !strings.Contains(c.logs(), "address already in use") || attempt == 2 {
			t.Fatalf("make cluster: %v\n%s\n%s", err, out, c.logs())
		}
	}

	leader := c.leader()
	follower := c.http[(leader+1)%3]
	fundGHS(t, follower, "100.00", "make-cluster-seed")
	var created struct {
		Payout payoutView `json:"payout"`
	}
	if st, err := call(follower, "POST", "/v1/payouts", mtnPayout("10.00", "through-make-cluster"), &created); err != nil || st != 201 || created.Payout.ID == "" {
		t.Fatalf("payout through follower %s: %d %v", follower, st, err)
	}
	c.stop()

	// Again on the same data: no --bootstrap this time, the same cluster.
	if out, err := c.make("cluster"); err != nil {
		t.Fatalf("make cluster again on the same data: %v\n%s\n%s", err, out, c.logs())
	}
	leader = c.leader()
	for i, addr := range c.http {
		// A follower answers from its own state: give it a moment to
		// apply what the leader commits after the restart.
		var got struct {
			Payout payoutView `json:"payout"`
		}
		var st int
		var err error
		if !eventually(10*time.Second, func() bool {
			st, err = call(addr, "GET", "/v1/payouts/by-reference/through-make-cluster", nil, &got)
			return err == nil && st == 200 && got.Payout.ID == created.Payout.ID
		}) {
			t.Errorf("n%d after the restart (leader n%d): payout %d %v %q, want %s", i+1, leader+1, st, err, got.Payout.ID, created.Payout.ID)
		}
	}
	c.stop()
	if t.Failed() {
		t.Log(c.logs())
	}
}
