package main

import (
	"encoding/json"
	"io"
	nethttp "net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The request log of the real binary: a request is on record under
// <data-dir>/requestlog (owner-only), it survives a restart, and
// --request-log=false turns the log off (its endpoints answer 503).
func TestRequestLogAcrossRestart(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	p := startReady(t, dir)
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
		eventually(10*time.Second, func() bool {
			var rec struct {
				ID string `json:"id"`
			}
			got, err = call(p.addr, "GET", "/v1/requests/"+id, nil, &rec)
			return got == want && (want != 200 || rec.ID == id)
		})
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
	p = startReady(t, dir)
	lookup(p, 200)
	stop(p)

	p = startReady(t, dir, "--request-log=false")
	lookup(p, 503)
}

// The operator reads the failed authentications that belong to no
// organization through the admin API, newest first and a page at a time,
// with the presented key's hint only; a request to no route without a key
// is there too, one with a valid key is not. The operator token is needed.
func TestUnattributedRequestsThroughAdminAPI(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	const token = "operator-token-e2e-0123456789"
	tokenFile := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startReady(t, filepath.Join(dir, "node"), "--admin-token-file", tokenFile, "--admin-addr", "127.0.0.1:0")
	admin := p.stdoutValue("admin_addr")
	unknown := "sk_test_" + strings.Repeat("Qx8", 9) + "h3j7" // well-formed, not ours
	send := func(key, path string, want int) string {
		t.Helper()
		req, _ := nethttp.NewRequest("GET", "http://"+p.addr+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("GET %s: %v %v, want %d", path, resp, err, want)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("x-request-id")
	}
	first := send(unknown, "/v1/payouts", 401)
	second := send("", "/v1/organization", 401)
	unrouted := send("", "/v1/nowhere", 404)
	keyed := send(testKey, "/v1/nowhere", 404)

	type record struct {
		ID     string `json:"id"`
		Path   string `json:"path"`
		Status int    `json:"status"`
		Actor  struct {
			Type    string `json:"type"`
			KeyHint string `json:"keyHint"`
		} `json:"actor"`
	}
	type page struct {
		Data       []record `json:"data"`
		HasMore    bool     `json:"hasMore"`
		NextCursor *string  `json:"nextCursor"`
	}
	list := func(query string) (page, []byte) {
		t.Helper()
		req, _ := nethttp.NewRequest("GET", "http://"+admin+"/v1/requests/unattributed"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var pg page
		if resp.StatusCode != 200 || json.Unmarshal(raw, &pg) != nil {
			t.Fatalf("GET /v1/requests/unattributed%s: %d %s", query, resp.StatusCode, raw)
		}
		return pg, raw
	}
	var all page
	var raw []byte
	eventually(10*time.Second, func() bool {
		all, raw = list("")
		return len(all.Data) >= 3
	})
	var ids []string
	for _, r := range all.Data {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{unrouted, second, first}) || all.HasMore {
		t.Fatalf("records %v, want the three without a valid key, newest first (not %s): %s", ids, keyed, raw)
	}
	if r := all.Data[2]; r.Status != 401 || r.Path != "/v1/payouts" || r.Actor.Type != "anonymous" || r.Actor.KeyHint != "sk_test_…h3j7" {
		t.Fatalf("the unknown key's attempt: %+v", r)
	}
	if strings.Contains(string(raw), unknown[8:]) || strings.Contains(string(raw), unknown[8:20]) {
		t.Fatalf("the presented key is in the answer: %s", raw)
	}

	// Failed authentications only, a page of one at a time.
	pg, _ := list("?status=401&limit=1")
	if len(pg.Data) != 1 || pg.Data[0].ID != second || !pg.HasMore || pg.NextCursor == nil {
		t.Fatalf("first page: %+v", pg)
	}
	pg, _ = list("?status=401&limit=1&cursor=" + *pg.NextCursor)
	if len(pg.Data) != 1 || pg.Data[0].ID != first {
		t.Fatalf("second page: %+v", pg)
	}

	for _, tc := range []struct {
		token, query string
		status       int
		code         string
	}{
		{"not-the-operator-token", "", 401, "unauthorized"},
		{token, "?limit=0", 400, "validation_error"},
		{token, "?cursor=x", 400, "validation_error"},
	} {
		var e struct {
			Error string `json:"error"`
		}
		if st, err := callWith(client, tc.token, nil, admin, "GET", "/v1/requests/unattributed"+tc.query, nil, &e); st != tc.status || e.Error != tc.code {
			t.Errorf("token %q query %q: %d %v %q, want %d %s", tc.token, tc.query, st, err, e.Error, tc.status, tc.code)
		}
	}
}
