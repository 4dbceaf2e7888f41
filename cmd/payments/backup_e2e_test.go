package main

import (
	"bytes"
	"crypto/sha256"
	byteorder "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	nethttp "net/http"
	"net/url"
	"os"
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

// uploadPNG uploads content (which starts with PNG's signature) as dispute
// evidence and returns the file's id.
func uploadPNG(addr, name string, content []byte) (string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	w.WriteField("purpose", "dispute.evidence")
	fw, _ := w.CreateFormFile("file", name)
	fw.Write(content)
	w.Close()
	req, err := nethttp.NewRequest("POST", "http://"+addr+"/v1/files", &buf)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		File struct {
			ID string `json:"id"`
		} `json:"file"`
	}
	if resp.StatusCode != 201 && resp.StatusCode != 200 || json.Unmarshal(raw, &body) != nil || body.File.ID == "" {
		return "", fmt.Errorf("upload %s: %d %s", name, resp.StatusCode, raw)
	}
	return body.File.ID, nil
}

// downloadFile fetches a file's signed URL from the node at addr, then its
// bytes.
func downloadFile(addr, id string) ([]byte, error) {
	var body struct {
		File struct {
			URL string `json:"url"`
		} `json:"file"`
	}
	if st, err := call(addr, "GET", "/v1/files/"+id, nil, &body); err != nil || st != 200 {
		return nil, fmt.Errorf("get file %s: %d %v", id, st, err)
	}
	u, err := url.Parse(body.File.URL)
	if err != nil {
		return nil, err
	}
	resp, err := client.Get("http://" + addr + u.RequestURI())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("download file %s: %d %s", id, resp.StatusCode, b)
	}
	return b, err
}

func pngBytes(rng *rand.Rand, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

// A backup taken while files are uploaded and payouts written holds the
// bytes of every file its state records: the node restored from it serves
// each one, byte for byte. A backup damaged in a file's bytes, or in its
// state, is refused with a message that says so, and nothing is restored.
func TestBackupHoldsUploadedFiles(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	tokenFile := writeAdminToken(t, dir)
	src, admin := startBackupSource(t, dir, tokenFile)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	first := pngBytes(rng, 300<<10)
	firstID, err := uploadPNG(src.addr, "evidence.png", first)
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		uploaded = map[string][]byte{firstID: first} // id → bytes, acknowledged
		rngs     [3]*rand.Rand                       // one a writer
	)
	for w := range rngs {
		rngs[w] = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
	}
	// Bounded in count, and by stop in time.
	stop := runWriters(len(rngs), 400, func(w, i int) bool {
		content := pngBytes(rngs[w], 16+rngs[w].IntN(16<<10))
		id, err := uploadPNG(src.addr, fmt.Sprintf("load-%d-%d.png", w, i), content)
		if err != nil {
			t.Error(err)
			return false
		}
		mu.Lock()
		uploaded[id] = content
		mu.Unlock()
		if st, err := call(src.addr, "POST", "/v1/payouts", mtnPayout("1.00", fmt.Sprintf("bf-%d-%d", w, i)), nil); err != nil || st != 201 {
			t.Errorf("payout: %d %v", st, err)
			return false
		}
		return true
	})
	uploadedNow := func() int { mu.Lock(); defer mu.Unlock(); return len(uploaded) }
	waitUntil(t, 30*time.Second, "uploads under way", func() bool { return uploadedNow() >= 5 })
	mu.Lock()
	before := len(uploaded)
	mu.Unlock()
	backupFile := filepath.Join(dir, "files.backup")
	b := runTool(t, "backup", "--to", backupFile, "--admin-addr", admin, "--admin-token-file", tokenFile)
	afterBackup := uploadedNow()
	waitUntil(t, 30*time.Second, "uploads after the backup", func() bool { return uploadedNow() >= afterBackup+3 })
	mu.Lock()
	after := len(uploaded)
	mu.Unlock()
	stop()
	// Uploads were acknowledged before the backup began and after it
	// ended: it was taken while they went on.
	if before < 2 || after == before {
		t.Fatalf("uploads acknowledged: %d before the backup, %d after: not under load", before, after)
	}
	if b["files"] == "" || b["files"] == "0" {
		t.Fatalf("the backup holds no files: %v", b)
	}

	restored := filepath.Join(dir, "restored")
	r := runTool(t, "restore", "--from", backupFile, "--data-dir", restored, "--raft-addr", "127.0.0.1:0")
	if r["files"] != b["files"] {
		t.Fatalf("restore says %s files, backup %s", r["files"], b["files"])
	}
	if err := src.stop(); err != nil {
		t.Fatal(err)
	}
	node := startReady(t, restored, "--rate-limit", "1000000", "--admin-token-file", tokenFile, "--admin-addr", "127.0.0.1:0")
	got, err := downloadFile(node.addr, firstID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, first) {
		t.Fatalf("the file uploaded before the backup: %d bytes back, %d uploaded, not the same", len(got), len(first))
	}
	// Every file the restored state records is served whole: the ones
	// uploaded while the backup was taken that made it into its state too.
	var listed []string
	for cursor := ""; ; {
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			NextCursor *string `json:"nextCursor"`
		}
		if st, err := call(node.addr, "GET", "/v1/files?limit=100"+cursor, nil, &page); err != nil || st != 200 {
			t.Fatalf("list files: %d %v", st, err)
		}
		for _, f := range page.Data {
			listed = append(listed, f.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(*page.NextCursor)
	}
	if fmt.Sprint(len(listed)) != b["files"] {
		t.Errorf("the restored node lists %d files, the backup holds %s", len(listed), b["files"])
	}
	if len(listed) < before {
		t.Errorf("the restored node lists %d files; %d were acknowledged before the backup began", len(listed), before)
	}
	for _, id := range listed {
		want, ok := uploaded[id]
		if !ok {
			t.Errorf("the restored node lists file %s, which no upload acknowledged", id)
			continue
		}
		got, err := downloadFile(node.addr, id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("file %s: %d bytes back, %d uploaded, not the same", id, len(got), len(want))
		}
	}

	// Damaged copies are refused, and leave no data directory behind.
	good, err := os.ReadFile(backupFile)
	if err != nil {
		t.Fatal(err)
	}
	const firstBlobBytesAt = len("PAYBACKUP") + 1 + 8 + 8 + 4 + 32 + 8
	for _, c := range []struct {
		name string
		at   int
		says string
	}{
		{"a file's bytes", firstBlobBytesAt + 100, "do not match its SHA-256"},
		{"the state", len(good) - 10, "checksum does not match"},
		{"the header", len("PAYBACKUP") + 3, "header's checksum does not match"},
	} {
		damaged := bytes.Clone(good)
		damaged[c.at] ^= 0x40
		path := filepath.Join(dir, "damaged.backup")
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		into := filepath.Join(dir, "restored-damaged")
		out, err := exec.Command(binary(t), "restore", "--from", path, "--data-dir", into, "--raft-addr", "127.0.0.1:0").CombinedOutput()
		if err == nil {
			t.Fatalf("damaged %s: restore succeeded:\n%s", c.name, out)
		}
		if !strings.Contains(string(out), "is damaged and was not restored") || !strings.Contains(string(out), c.says) {
			t.Fatalf("damaged %s: restore said:\n%s", c.name, out)
		}
		if _, err := os.Stat(into); !os.IsNotExist(err) {
			t.Fatalf("damaged %s: the data directory was created (%v)", c.name, err)
		}
	}
	// A node that lost a recorded file's bytes, with no peer to fetch them
	// from, cannot be backed up: no backup silently lacks a file.
	sum := sha256.Sum256(first)
	digest := hex.EncodeToString(sum[:])
	if err := os.Remove(filepath.Join(restored, "blobs", digest[:2], digest)); err != nil {
		t.Fatal(err)
	}
	lacking := filepath.Join(dir, "lacking.backup")
	out, err := exec.Command(binary(t), "backup", "--to", lacking, "--admin-addr", node.stdoutValue("admin_addr"), "--admin-token-file", tokenFile).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "stopped sending the backup") {
		t.Fatalf("backup of a node lacking a file's bytes: %v\n%s", err, out)
	}
	if _, err := os.Stat(lacking); !os.IsNotExist(err) {
		t.Fatalf("a backup lacking a file was written (%v)", err)
	}

	// A backup of format version 1, the state's dump alone, still
	// restores (without files).
	at := len("PAYBACKUP") + 1 + 8 + 8 + 4
	for i := 0; fmt.Sprint(i) != b["files"]; i++ {
		at += 32 + 8 + int(byteorder.BigEndian.Uint64(good[at+32:]))
	}
	v1 := filepath.Join(dir, "v1.backup")
	if err := os.WriteFile(v1, good[at:], 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runTool(t, "restore", "--from", v1, "--data-dir", filepath.Join(dir, "restored-v1"), "--raft-addr", "127.0.0.1:0"); r["applied_index"] != b["applied_index"] || r["files"] != "0" {
		t.Fatalf("restore of a version 1 backup: %v", r)
	}
	t.Logf("backup at index %s: %s files, %s bytes; %d uploads acknowledged before it, %d while and just after it was taken",
		b["applied_index"], b["files"], b["bytes"], before, after-before)
}
