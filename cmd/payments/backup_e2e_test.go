package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/raft"
)

// runTool runs the binary with args and returns its stdout's key=value
// lines; it fails the test on a non-zero exit.
func runTool(t *testing.T, args ...string) map[string]string {
	t.Helper()
	out, err := exec.Command(binary(t), args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("payments %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	vals := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			vals[k] = v
		}
	}
	return vals
}

// digestOf runs Raft in this process on a stopped single node's data
// directory until it leads (and so applied its whole log), and returns its
// state's digest and applied index.
func digestOf(t *testing.T, dataDir string) (string, uint64) {
	t.Helper()
	node, err := raft.Open(raft.Config{DataDir: dataDir, RaftAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	waitUntil(t, 20*time.Second, "the node leads", node.IsLeader)
	sum, applied, err := node.StateDigest()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sum), applied
}

// startBackupSource starts the node the backup tests back up, in
// dir/source, with an admin address under tokenFile and args added, and
// funds its organization with 100,000.00 GHS; it returns the node and its
// admin address.
func startBackupSource(t *testing.T, dir, tokenFile string, args ...string) (*proc, string) {
	t.Helper()
	src := startReady(t, filepath.Join(dir, "source"), append([]string{"--admin-token-file", tokenFile, "--admin-addr", "127.0.0.1:0",
		"--rate-limit", "1000000", "--sandbox-settlement", "30ms"}, args...)...)
	fundGHS(t, src.addr, "100000.00", "seed")
	return src, src.stdoutValue("admin_addr")
}

// An online backup taken under load restores to a node that serves every
// payout acknowledged before the backup began and takes writes; a backup
// of the quiet node restores to a state byte-identical to the source's at
// the same index (same digest), and seeds a new three-node cluster.
func TestBackupUnderLoadAndRestore(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	tokenFile := writeAdminToken(t, dir)
	src, admin := startBackupSource(t, dir, tokenFile, "--snapshot-threshold", "64", "--snapshot-interval", "100ms")
	var (
		mu    sync.Mutex
		acked = map[string]string{}
	)
	stop := runWriters(4, 2000, func(w, i int) bool {
		ref := fmt.Sprintf("bk-%d-%d", w, i)
		var body struct {
			Payout payoutView `json:"payout"`
		}
		st, err := call(src.addr, "POST", "/v1/payouts", mtnPayout("1.00", ref), &body)
		if err != nil || st != 201 {
			t.Errorf("payout %s: %d %v", ref, st, err)
			return false
		}
		mu.Lock()
		acked[ref] = body.Payout.ID
		mu.Unlock()
		return true
	})
	ackedNow := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitUntil(t, 30*time.Second, "payouts under way", func() bool { return ackedNow() >= 20 })
	mu.Lock()
	before := make(map[string]string, len(acked))
	for k, v := range acked {
		before[k] = v
	}
	mu.Unlock()
	underLoad := filepath.Join(dir, "under-load.backup")
	b1 := runTool(t, "backup", "--to", underLoad, "--admin-addr", admin, "--admin-token-file", tokenFile)
	afterBackup := ackedNow()
	waitUntil(t, 30*time.Second, "payouts after the backup", func() bool { return ackedNow() >= afterBackup+10 })
	stop()
	mu.Lock()
	ackedDuring := len(acked) - len(before)
	mu.Unlock()
	if ackedDuring == 0 {
		t.Fatal("no write was acknowledged while the backup was taken: not under load")
	}

	// Quiet: every payout settled; a second backup, then the source stops.
	waitUntil(t, 30*time.Second, "every payout settled", func() bool {
		for _, status := range []string{"pending", "processing"} {
			var page struct {
				Data []any `json:"data"`
			}
			if st, err := call(src.addr, "GET", "/v1/payouts?limit=1&status="+status, nil, &page); err != nil || st != 200 || len(page.Data) > 0 {
				return false
			}
		}
		return true
	})
	quiet := filepath.Join(dir, "quiet.backup")
	b2 := runTool(t, "backup", "--to", quiet, "--admin-addr", admin, "--admin-token-file", tokenFile)
	if err := src.stop(); err != nil {
		t.Fatal(err)
	}
	srcDigest, srcApplied := digestOf(t, src.dataDir)
	if b2["applied_index"] != fmt.Sprint(srcApplied) {
		t.Fatalf("the quiet backup is at index %s, the source at %d: the source was not quiet", b2["applied_index"], srcApplied)
	}
	restoredQuiet := filepath.Join(dir, "restored-quiet")
	runTool(t, "restore", "--from", quiet, "--data-dir", restoredQuiet, "--raft-addr", "127.0.0.1:0")
	if d, applied := digestOf(t, restoredQuiet); d != srcDigest || applied != srcApplied {
		t.Fatalf("restored state: digest %s at %d; the source's: %s at %d", d, applied, srcDigest, srcApplied)
	}

	// The backup taken under load seeds a node that serves and writes.
	restored := filepath.Join(dir, "restored-under-load")
	r := runTool(t, "restore", "--from", underLoad, "--data-dir", restored, "--raft-addr", "127.0.0.1:0")
	if r["applied_index"] != b1["applied_index"] {
		t.Fatalf("restore says index %s, backup %s", r["applied_index"], b1["applied_index"])
	}
	node := startReady(t, restored, "--rate-limit", "1000000")
	wantPayouts(t, node.addr, before, "before the backup, on the restored node")
	if st, err := call(node.addr, "POST", "/v1/payouts", mtnPayout("1.00", "after-restore"), nil); err != nil || st != 201 {
		t.Fatalf("write on the restored node: %d %v", st, err)
	}
	// The quiet backup seeds a new three-node cluster: each node restored
	// from it, then started without --bootstrap.
	cluster := launchCluster(t, 3, func(i int, d, peers string) []string {
		runTool(t, "restore", "--from", quiet, "--data-dir", d, "--node-id", fmt.Sprintf("n%d", i+1), "--peers", peers)
		return nil
	})
	wantPayouts(t, cluster[2].addr, before, "in the restored cluster")
	if st, err := call(cluster[1].addr, "POST", "/v1/payouts", mtnPayout("1.00", "after-cluster-restore"), nil); err != nil || st != 201 {
		t.Fatalf("write on the restored cluster: %d %v", st, err)
	}
	t.Logf("backup under load at index %s (%s bytes), %d payouts acknowledged after it began; quiet backup at %d",
		b1["applied_index"], b1["bytes"], ackedDuring, srcApplied)
}
