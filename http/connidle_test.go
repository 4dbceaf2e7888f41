package http_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// A connection that sends no byte of a request is closed when its timeout
// passes without a word written to it: a new one past the read timeout,
// and a kept-alive one past the idle timeout, after a GET or after a POST
// whose body was read. A request begun and left unfinished is still
// answered.
func TestIdleConnectionsCloseSilently(t *testing.T) {
	const timeout = 200 * time.Millisecond
	st := newStack(t, stackOptions{readTimeout: timeout, idleTimeout: timeout})
	cases := []struct {
		name   string
		before string // requests sent and answered first, one per line group
		then   string // bytes sent after them, then nothing
		answer string // the status line expected after the timeout; "": none
	}{
		{name: "new connection"},
		{name: "after a GET", before: "GET /v1/organization HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + st.key + "\r\n\r\n"},
		{name: "after a POST with a body", before: "POST /v1/payouts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + st.key +
			"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
		{name: "after an unknown route", before: "GET /v1/nothing-here HTTP/1.1\r\nHost: x\r\n\r\n"},
		{name: "a request left unfinished", then: "GET /v1/organization HTTP/1.1\r\nHo", answer: "HTTP/1.1 400 Bad Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", st.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * timeout)) // far past the server's
			br := bufio.NewReader(c)
			if tc.before != "" {
				if _, err := io.WriteString(c, tc.before); err != nil {
					t.Fatal(err)
				}
				resp, err := nethttp.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.Close {
					t.Fatalf("the first request's answer closes the connection (%d)", resp.StatusCode)
				}
			}
			if tc.then != "" {
				io.WriteString(c, tc.then)
			}
			start := time.Now()
			rest, err := io.ReadAll(br)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the server kept the connection open %v past its timeout", time.Since(start))
			}
			if tc.answer == "" && len(rest) != 0 {
				t.Fatalf("the idle connection received %q before it closed", rest)
			}
			if tc.answer != "" && !strings.HasPrefix(string(rest), tc.answer) {
				t.Fatalf("the unfinished request got %q, want %s", rest, tc.answer)
			}
		})
	}
}
