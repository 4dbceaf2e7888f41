package http_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	nethttp "net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"payments/actors"
	api "payments/http"
	"payments/ledger"
	"payments/ledger/disputes"
	"payments/raft"
	"payments/rails"
	"payments/wal/requestlog"
)

// filesNode is one member of a three-node cluster: Raft on Pebble, the
// actors, and the HTTP server with its own blob directory.
type filesNode struct {
	node     *raft.Node
	sys      *actors.System
	addr     string // HTTP
	filesDir string
	srv      *api.Server
	reqlog   *requestlog.Store // the node's own request log
}

// newFilesCluster starts three nodes on loopback that know each other's
// Raft and HTTP addresses, each with its own request log, and bootstraps
// the leader's organization.
func newFilesCluster(t *testing.T) ([]*filesNode, string) {
	t.Helper()
	peers, raftLns := clusterPeers(t, 3)
	var httpLns []net.Listener
	peerHTTP := map[string]string{}
	for _, p := range peers {
		h := listenLoopback(t)
		httpLns = append(httpLns, h)
		peerHTTP[p.ID] = h.Addr().String()
	}
	var nodes []*filesNode
	for i := 0; i < 3; i++ {
		node := openClusterNode(t, peers, i, raftLns[i])
		sys := actors.Start(actors.Config{Log: node, State: node, Rail: rails.NewSandbox(frozenTiming)})
		reqlog, err := requestlog.Open(t.TempDir(), requestlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := &filesNode{node: node, sys: sys, addr: httpLns[i].Addr().String(), filesDir: t.TempDir(), reqlog: reqlog}
		srv := api.New(api.Config{Actors: sys, Cluster: node, PeerHTTP: peerHTTP, FilesDir: n.filesDir, RequestLog: reqlog})
		n.srv = srv
		go srv.Serve(httpLns[i])
		done := make(chan struct{})
		go sys.FollowLeadership(node.Leadership(), done)
		t.Cleanup(func() {
			close(done)
			srv.Shutdown(t.Context())
			reqlog.Close()
			sys.Stop()
			node.Close()
		})
		nodes = append(nodes, n)
	}
	leader := -1
	waitFor(t, "a leader", 15*time.Second, func() bool {
		for i, n := range nodes {
			if n.node.IsLeader() {
				leader = i
			}
		}
		return leader >= 0
	})
	nodes[0], nodes[leader] = nodes[leader], nodes[0]
	key := actors.KeyPrefix(false) + "filesclusterkey0000000"
	if _, err := nodes[0].sys.EnsureBootstrap(t.Context(), actors.Bootstrap{Secret: key, OrgName: "Files Org", Country: "GH", DefaultCurrency: "GHS"}); err != nil {
		t.Fatal(err)
	}
	return nodes, key // nodes[0] leads
}

func filesUpload(t *testing.T, addr, key, purpose, name string, content []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	w.WriteField("purpose", purpose)
	fw, _ := w.CreateFormFile("file", name)
	fw.Write(content)
	w.Close()
	req, _ := nethttp.NewRequest("POST", "http://"+addr+"/v1/files", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := nethttp.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("upload answered %d %s", resp.StatusCode, b)
	}
	return resp.StatusCode, body
}

// filesGet fetches a URL's path and query from the node at addr.
func filesGet(t *testing.T, addr, rawURL string) (status int, body []byte, contentType string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := nethttp.Get("http://" + addr + u.RequestURI())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

// A file uploaded on the leader (or through a follower) is stored on a
// majority before it is acknowledged, and its signed URL serves the bytes
// from every node of the cluster; a node that lost the bytes fetches them
// from a peer, checks them and keeps them; a tampered, expired or
// transplanted signature is refused on every node.
func TestFileFetchedFromAnyNode(t *testing.T) {
	nodes, key := newFilesCluster(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("pixels"), 50_000)...) // 300 kB
	status, body := filesUpload(t, nodes[0].addr, key, "dispute.evidence", "photo.png", png)
	if status != 201 {
		t.Fatalf("upload: %d %v", status, body)
	}
	file := body["file"].(map[string]any)
	fileURL, id := file["url"].(string), file["id"].(string)
	if file["contentType"] != "image/png" || file["size"] != float64(len(png)) {
		t.Fatalf("file = %v", file)
	}
	digest := sha256.Sum256(png)
	blobPath := func(n *filesNode) string {
		d := hex.EncodeToString(digest[:])
		return filepath.Join(n.filesDir, d[:2], d)
	}
	holders := 0
	for _, n := range nodes {
		if _, err := os.Stat(blobPath(n)); err == nil {
			holders++
		}
	}
	if holders < 2 {
		t.Fatalf("acknowledged with the bytes on %d nodes, not a majority", holders)
	}
	for i, n := range nodes {
		status, got, ct := filesGet(t, n.addr, fileURL)
		if status != 200 || !bytes.Equal(got, png) || ct != "image/png" {
			t.Fatalf("node %d: %d %s, %d bytes", i, status, ct, len(got))
		}
	}

	// Every node applies the record and (the pushes past the majority go
	// on in the background) holds the bytes.
	ready := 0
	if !eventually(10*time.Second, func() bool {
		ready = 0
		for _, n := range nodes {
			_, found := disputes.FileByID(n.sys.Reader(), id)
			if _, err := os.Stat(blobPath(n)); err == nil && found {
				ready++
			}
		}
		return ready == len(nodes)
	}) {
		t.Fatalf("%d of %d nodes have the file", ready, len(nodes))
	}

	// A follower that lost the bytes fetches them again from a peer.
	follower := nodes[2]
	if err := os.Remove(blobPath(follower)); err != nil {
		t.Fatal(err)
	}
	if status, got, _ := filesGet(t, follower.addr, fileURL); status != 200 || !bytes.Equal(got, png) {
		t.Fatalf("after losing the blob: %d, %d bytes", status, len(got))
	}
	if b, err := os.ReadFile(blobPath(follower)); err != nil || !bytes.Equal(b, png) {
		t.Fatalf("the fetched blob was not kept: %v", err)
	}

	// Signatures: tampered, expired, or for another file.
	var signingKey []byte
	signingKey, _ = disputes.FileSigningKey(nodes[1].sys.Reader())
	sign := func(id string, expires int64) string {
		e := strconv.FormatInt(expires, 10)
		m := hmac.New(sha256.New, signingKey)
		m.Write([]byte("file-url\x00" + id + "\x00" + e))
		return "/v1/files/" + id + "/content?expires=" + e + "&signature=" + hex.EncodeToString(m.Sum(nil))
	}
	if status, got, _ := filesGet(t, nodes[1].addr, sign(id, time.Now().Add(time.Minute).Unix())); status != 200 || !bytes.Equal(got, png) {
		t.Fatalf("a URL signed with the replicated key: %d", status)
	}
	tampered := fileURL[:len(fileURL)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", fileURL[len(fileURL)-1])+1)%16])
	later := strings.Replace(fileURL, "expires=", "expires=9", 1)
	for name, u := range map[string]string{
		"tampered signature":       tampered,
		"extended expiry":          later,
		"another file's signature": strings.Replace(fileURL, id, "file_aaaaaaaaaaaaaaaaaaaa", 1),
		"expired":                  sign(id, time.Now().Add(-time.Second).Unix()),
	} {
		for i, n := range nodes {
			status, got, _ := filesGet(t, n.addr, u)
			if status != 403 || !bytes.Contains(got, []byte(`"error":"forbidden"`)) {
				t.Fatalf("%s on node %d: %d %s", name, i, status, got)
			}
		}
	}

	// An upload through a follower is forwarded to the leader; its URL too
	// works everywhere.
	pdf := []byte("%PDF-1.4\nforwarded\n")
	status, body = filesUpload(t, nodes[1].addr, key, "business.document", "doc.pdf", pdf)
	if status != 201 {
		t.Fatalf("upload via a follower: %d %v", status, body)
	}
	for i, n := range nodes {
		if status, got, _ := filesGet(t, n.addr, body["file"].(map[string]any)["url"].(string)); status != 200 || !bytes.Equal(got, pdf) {
			t.Fatalf("forwarded upload from node %d: %d", i, status)
		}
	}

	// With both peers' HTTP down (Raft still has its quorum) the bytes
	// cannot reach a majority: the upload is refused and nothing is
	// recorded.
	var org string
	f, _ := disputes.FileByID(nodes[0].sys.Reader(), id)
	org = f.OrgID
	count := func() int {
		var n int
		n = len(disputes.Files(nodes[0].sys.Reader(), org, "", ledger.CursorStart, 100).Items)
		return n
	}
	before := count()
	nodes[1].srv.Shutdown(t.Context())
	nodes[2].srv.Shutdown(t.Context())
	status, body = filesUpload(t, nodes[0].addr, key, "dispute.evidence", "late.pdf", []byte("%PDF-1.4\nlate\n"))
	if status != 503 || body["error"] != "service_unavailable" {
		t.Fatalf("upload without a majority: %d %v", status, body)
	}
	if count() != before {
		t.Fatal("a refused upload was recorded")
	}
}

// OpenBlob, which backups read files through, fetches from a peer (and
// keeps) the bytes of a recorded file the node lacks: a backup taken on
// any node holds every file its state records.
func TestOpenBlobFetchesWhatTheNodeLacks(t *testing.T) {
	nodes, key := newFilesCluster(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("backup"), 20_000)...)
	if status, body := filesUpload(t, nodes[0].addr, key, "dispute.evidence", "photo.png", png); status != 201 {
		t.Fatalf("upload: %d %v", status, body)
	}
	sum := sha256.Sum256(png)
	digest := hex.EncodeToString(sum[:])
	follower := nodes[2]
	waitFor(t, "the follower applying the file's record", 10*time.Second, func() bool { return disputes.FileDigests(follower.sys.Reader())[digest] })
	path := filepath.Join(follower.filesDir, digest[:2], digest)
	eventually(10*time.Second, func() bool { // the background push has landed, or will not
		_, err := os.Stat(path)
		return err == nil
	})
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	r, size, err := follower.srv.OpenBlob(digest)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || size != int64(len(png)) || !bytes.Equal(got, png) {
		t.Fatalf("OpenBlob: %d bytes (size %d), %v; uploaded %d", len(got), size, err, len(png))
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, png) {
		t.Fatalf("the fetched bytes were not kept: %v", err)
	}
	if _, _, err := follower.srv.OpenBlob(strings.Repeat("0", 64)); err == nil {
		t.Fatal("OpenBlob of bytes no node holds succeeded")
	}
}
