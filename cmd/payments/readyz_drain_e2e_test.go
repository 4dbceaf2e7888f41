package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"mime/multipart"
	nethttp "net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// On SIGTERM /readyz answers 503 with a reason while the node still serves
// (--drain-notice), so a load balancer stops sending it requests; a slow
// request in flight all along still completes, and the process exits 0.
func TestReadyzRefusesWhileDraining(t *testing.T) {
	endToEnd(t)
	const notice = 1500 * time.Millisecond
	p := startReady(t, t.TempDir(), "--rate-limit", "1000000", "--log-level", "info", "--drain-notice", notice.String())
	probe := &nethttp.Client{Timeout: 2 * time.Second, Transport: &nethttp.Transport{DisableKeepAlives: true}}
	readyz := func() (int, string, error) {
		resp, err := probe.Get("http://" + p.addr + "/readyz")
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	if st, body, err := readyz(); err != nil || st != 200 {
		t.Fatalf("before SIGTERM: /readyz %d %s %v", st, body, err)
	}

	// The slow request: an upload whose body arrives in two halves, the
	// second only once the node has stopped taking connections.
	content := pngBytes(rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2)), 256<<10)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("purpose", "dispute.evidence")
	fw, _ := mw.CreateFormFile("file", "slow.png")
	fw.Write(content)
	mw.Close()
	pr, pw := io.Pipe()
	req, err := nethttp.NewRequest("POST", "http://"+p.addr+"/v1/files", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(form.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+testKey)
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := (&nethttp.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- answer{status: resp.StatusCode, body: string(b)}
	}()
	half := form.Len() / 2
	if _, err := pw.Write(form.Bytes()[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the handler is reading the body

	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var refused503, refusedConn time.Duration
	var reason struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	for deadline := signalled.Add(10 * time.Second); time.Now().Before(deadline) && refusedConn == 0; time.Sleep(50 * time.Millisecond) {
		st, body, err := readyz()
		switch {
		case err != nil:
			refusedConn = time.Since(signalled)
		case st == 503 && refused503 == 0:
			refused503 = time.Since(signalled)
			if err := json.Unmarshal([]byte(body), &reason); err != nil {
				t.Fatalf("/readyz 503 body %q: %v", body, err)
			}
		case st == 200 && time.Since(signalled) > 100*time.Millisecond:
			t.Fatalf("/readyz answered 200 %s after SIGTERM", time.Since(signalled))
		}
	}
	select {
	case a := <-answered:
		t.Fatalf("the slow request ended before its body was sent: %d %s %v", a.status, a.body, a.err)
	default:
	}
	if refused503 == 0 || refused503 > notice {
		t.Fatalf("/readyz did not answer 503 within the notice of %s (503 after %s, connections refused after %s)", notice, refused503, refusedConn)
	}
	if reason.Error != "service_unavailable" || !strings.Contains(reason.Message, "shutting down") {
		t.Fatalf("/readyz 503 without the reason: %+v", reason)
	}
	if refusedConn < notice {
		t.Fatalf("the listener closed %s after SIGTERM, before the notice of %s", refusedConn, notice)
	}

	// The node no longer takes connections but finishes what it has.
	if _, err := pw.Write(form.Bytes()[half:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	a := <-answered
	if a.err != nil || a.status != 201 {
		t.Fatalf("the slow request in flight: %d %s %v", a.status, a.body, a.err)
	}
	if err := p.waitExit(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("/readyz 503 %s after SIGTERM, connections refused after %s, exit after %s\n%s", refused503, refusedConn, time.Since(signalled), p.stderr)
}
