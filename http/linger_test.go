package http_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"strings"
	"testing"
	"time"
)

// Limits as the server has them (http/server.go, http/upload.go).
const (
	jsonReadBytesMax = 4 << 20         // what the server reads of a JSON body
	jsonBodyBytesMax = 64 << 10        // what a JSON endpoint accepts
	uploadBytesMax   = 10<<20 + 64<<10 // a file and its multipart framing
	bigBodyBytes     = 8 << 20         // the body an integrator sent by mistake
	lingerTries      = 5               // each case, on fresh connections: the reset was a race
	chunked          = -1              // sent without a Content-Length
)

// A body past a limit reaches Go's net/http client, which reads the answer
// while it still writes, as the error answer and never as "connection reset
// by peer": the server answers, then reads and discards what the client
// still sends before it closes the connection. With a key (refused for its
// size) and without one (refused before any of it is read); declared or
// chunked; just past each limit and far past them.
func TestOversizedBodiesAreAnsweredToGoClients(t *testing.T) {
	st := newStack(t, stackOptions{})
	cases := []struct {
		name, path, key, contentType string
		size                         int
		length                       int // the declared length; chunked: none
		status                       int
		code, message                string
	}{
		{"8 MiB payout", "/v1/payouts", st.key, "application/json", bigBodyBytes, bigBodyBytes, 400, "validation_error", "larger than the limit of 4194304 bytes"},
		{"8 MiB payout, chunked", "/v1/payouts", st.key, "application/json", bigBodyBytes, chunked, 400, "validation_error", "larger than the limit of 4194304 bytes"},
		{"payout just past the read limit", "/v1/payouts", st.key, "application/json", jsonReadBytesMax + 1, jsonReadBytesMax + 1, 400, "validation_error", "larger than the limit of 4194304 bytes"},
		{"payout just past the JSON limit", "/v1/payouts", st.key, "application/json", jsonBodyBytesMax + 1, jsonBodyBytesMax + 1, 400, "validation_error", "larger than the limit of 65536 bytes"},
		{"upload just past its limit", "/v1/files", st.key, "multipart/form-data; boundary=b", uploadBytesMax + 1, uploadBytesMax + 1, 400, "validation_error", fmt.Sprintf("larger than the limit of %d bytes", uploadBytesMax)},
		{"8 MiB payout without a key", "/v1/payouts", "", "application/json", bigBodyBytes, bigBodyBytes, 401, "unauthorized", "Invalid API key"},
		{"8 MiB to an unknown route", "/v1/nothing-here", st.key, "application/json", bigBodyBytes, bigBodyBytes, 404, "not_found", "No endpoint"},
	}
	client := &nethttp.Client{Timeout: 30 * time.Second, Transport: &nethttp.Transport{DisableKeepAlives: true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tc.size)
			for try := range lingerTries {
				var rd io.Reader = bytes.NewReader(body)
				if tc.length == chunked {
					rd = io.MultiReader(rd) // no length known: sent chunked
				}
				req, err := nethttp.NewRequest("POST", "http://"+st.addr+tc.path, rd)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", tc.contentType)
				if tc.key != "" {
					req.Header.Set("Authorization", "Bearer "+tc.key)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("try %d: no answer: %v", try, err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("try %d: answer cut: %v", try, err)
				}
				var e struct{ Error, Message, RequestID string }
				if resp.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Error != tc.code ||
					!strings.Contains(e.Message, tc.message) || e.RequestID != resp.Header.Get("x-request-id") {
					t.Fatalf("try %d: %d %s, want %d %s (%q)", try, resp.StatusCode, b, tc.status, tc.code, tc.message)
				}
			}
		})
	}
}

// A client that sends its whole request before it reads anything (as
// simple clients and scripts do) still gets the answer to an oversized
// body: what it sends after the answer is read and discarded, not met with
// a reset.
func TestOversizedBodyIsAnsweredToAClientThatReadsLast(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, err := net.Dial("tcp", st.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "POST /v1/payouts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", st.key, bigBodyBytes)
	if _, err := c.Write(bytes.Repeat([]byte("x"), bigBodyBytes)); err != nil {
		t.Fatalf("the server stopped reading the body: %v", err)
	}
	resp, err := nethttp.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer after the whole body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"error":"validation_error"`) || !resp.Close {
		t.Fatalf("%d close=%v %s, want 400 validation_error and the connection closed", resp.StatusCode, resp.Close, b)
	}
}
