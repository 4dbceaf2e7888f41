package http_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawRequest sends head and the first part of a body over a fresh
// connection, without the rest, and reads the answer. A server that read
// the body before answering would wait for the rest until its read
// timeout; the deadline here is far shorter.
func rawRequest(t *testing.T, addr, head string, sent int) *nethttp.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, head+"\r\n"+strings.Repeat("x", sent)); err != nil {
		t.Fatal(err)
	}
	resp, err := nethttp.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp
}

// Anonymous bodies are refused before a byte past fasthttp's first read
// is read: the answer comes while most of the declared body is unsent, on
// every kind of route, and the connection is closed after it. A hundred
// anonymous 10 MiB uploads leave the heap as it was.
func TestAnonymousBodiesAreRefusedUnread(t *testing.T) {
	st := newStack(t, stackOptions{})
	const declared = 10 << 20
	digest := strings.Repeat("ab", 32)
	cases := []struct {
		name, head string
		status     int
		code       string
	}{
		{"blob push without a peer token", "PUT /internal/blobs/" + digest + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + fmt.Sprint(declared) + "\r\n", 403, "forbidden"},
		{"upload without a key", "POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: " + fmt.Sprint(declared) + "\r\n", 401, "unauthorized"},
		{"payout with a bad key", "POST /v1/payouts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test_notakey000000000000\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n", 401, "unauthorized"},
		{"chunked payout without a key", "POST /v1/payouts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n", 401, "unauthorized"},
		{"unknown route", "POST /v1/nothing-here HTTP/1.1\r\nHost: x\r\nContent-Length: " + fmt.Sprint(declared) + "\r\n", 404, "not_found"},
	}
	for _, tc := range cases {
		sent := 16 << 10 // fasthttp reads the first 8 KiB before the handler
		if strings.Contains(tc.head, "chunked") {
			sent = 0
		}
		resp := rawRequest(t, st.addr, tc.head, sent)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || !strings.Contains(string(b), `"error":"`+tc.code+`"`) || !strings.Contains(string(b), `"requestId":"req_`) {
			t.Errorf("%s: %d %s, want %d %s in the envelope", tc.name, resp.StatusCode, b, tc.status, tc.code)
		}
		if !resp.Close {
			t.Errorf("%s: the connection stays open with the body unread", tc.name)
		}
	}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for range 100 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.Dial("tcp", st.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			go func() { // the whole body, as an attacker sends it; writes fail once the server closes
				io.WriteString(c, "PUT /internal/blobs/"+digest+" HTTP/1.1\r\nHost: x\r\nContent-Length: "+fmt.Sprint(declared)+"\r\n\r\n")
				chunk := make([]byte, 64<<10)
				for sent := 0; sent < declared; sent += len(chunk) {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
			resp, err := nethttp.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != 403 {
				t.Errorf("anonymous push: %v %v", resp, err)
			}
		}()
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 32<<20 {
		t.Fatalf("100 anonymous 10 MiB pushes grew the heap by %d MiB", grown>>20)
	}
}

// Past the bound on body bytes in flight, a request is refused with 503
// and Retry-After in the error envelope, before its body is read; within
// it, the same request is served.
func TestBodyBytesInFlightBound(t *testing.T) {
	st := newStack(t, stackOptions{bodyBytes: 1 << 20})
	big := fmt.Sprint(2 << 20)
	resp := rawRequest(t, st.addr, "POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+st.key+
		"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: "+big+"\r\n", 16<<10)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"error":"service_unavailable"`) {
		t.Fatalf("upload past the bound: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	r := st.upload("dispute.evidence", "receipt.pdf", "application/pdf", []byte("%PDF-1.4 within the bound"))
	st.mustStatus(r, 201)
}

// A client address holding ConnsPerIPMax connections has its next one
// answered 429 rate_limited in the error envelope; once one closes, it is
// served again.
func TestConnectionsPerAddressLimit(t *testing.T) {
	st := newStack(t, stackOptions{connsPerIP: 2})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", st.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// Each try on a connection of its own, read raw: a refused connection
	// is answered at once, before its request, which Go's client reads as
	// an unsolicited answer and drops.
	var r response
	eventually(5*time.Second, func() bool { // the server counts the held connections once it accepts them
		r = rawGet(t, st.addr, "/v1/organization", st.key)
		return r.status == 429
	})
	if r.status != 429 || r.json(t)["error"] != "rate_limited" || r.header["retry-after"] == "" {
		t.Fatalf("third connection: %d %s", r.status, r.body)
	}
	st.checkEnvelope(r)
	held[0].Close()
	eventually(5*time.Second, func() bool {
		r = rawGet(t, st.addr, "/v1/organization", st.key)
		return r.status == 200
	})
	st.mustStatus(r, 200)
}

// rawGet sends one GET on a new connection and reads the answer, whenever
// it comes; a connection that breaks reads as status 0.
func rawGet(t *testing.T, addr, path, key string) response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", path, addr, key)
	resp, err := nethttp.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return response{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}
	}
	r := response{status: resp.StatusCode, header: map[string]string{}, body: b}
	for k, v := range resp.Header {
		r.header[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return r
}
