package main

import (
	"io"
	nethttp "net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The request log of the real binary: a request is on record under
// <data-dir>/requestlog (owner-only), it survives a restart, and
// --request-log=false turns the log off (its endpoints answer 503).
func TestRequestLogAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dir := t.TempDir()
	p := startServer(t, dir)
	p.waitReady()
	req, _ := nethttp.NewRequest("GET", "http://"+p.addr+"/v1/organization", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("x-request-id")

	lookup := func(p *proc, want int) {
		t.Helper()
		var got int
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var rec struct {
				ID string `json:"id"`
			}
			got, err = call(p.addr, "GET", "/v1/requests/"+id, nil, &rec)
			if got == want && (want != 200 || rec.ID == id) || time.Now().After(deadline) {
				break
			}
		}
		if got != want {
			t.Fatalf("GET /v1/requests/%s: %d (%v), want %d\n%s", id, got, err, want, p.stderr)
		}
	}
	lookup(p, 200)
	if fi, err := os.Stat(filepath.Join(dir, "requestlog")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("requestlog directory: %v %v", fi, err)
	}

	stop := func(p *proc) {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			t.Fatal("no exit after SIGTERM")
		}
	}
	stop(p)
	p = startServer(t, dir)
	p.waitReady()
	lookup(p, 200)
	stop(p)

	p = startServer(t, dir, "--request-log=false")
	p.waitReady()
	lookup(p, 503)
}
