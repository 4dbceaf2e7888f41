package http_test

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

// Malformed requests carrying a key, a signing secret and an account
// number, at debug level: fasthttp's parse errors quote the raw request,
// and none of it may reach a log line.
func TestMalformedRequestsLeaveNoSecretInTheLog(t *testing.T) {
	var logs testkit.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newStack(t, stackOptions{logger: logger})

	const (
		key     = "sk_test_LeakCanary0123456789abcdefABCDEF0123"
		secret  = "whsec_TGVha0NhbmFyeVNpZ25pbmdTZWNyZXQwMTIzNDU="
		account = "0241234567890"
	)
	body := `{"to":{"accountNumber":"` + account + `"},"secret":"` + secret + `"}`
	headers := "Host: x\r\nAuthorization: Bearer " + s.key + "\r\nX-Other-Key: " + key + "\r\n"
	requests := []string{
		// A request line without a protocol: "cannot find whitespace in the first line of request %q" (not covered by SecureErrorLogMessage).
		"POST /v1/payouts?api_key=" + key + "\r\n" + headers + "\r\n" + body,
		"NOT-A-METHOD /v1/payouts HTTP/1.1\r\n" + headers + "\r\n" + body,
		"POST /v1/payouts HTTP/9.9\r\n" + headers + "\r\n" + body,
		"POST /v1/payouts HTTP/1.1\r\n" + headers + "Content-Length: nope\r\n\r\n" + body,
		"POST /v1/payouts HTTP/1.1\r\n" + headers + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + "\r\n0\r\n\r\n",
		"POST /v1/payouts HTTP/1.1\r\n" + headers + "Bad Header Line " + secret + "\r\n\r\n" + body,
		"POST /v1/payouts HTTP/1.1\r\n" + headers + strings.Repeat("X-Pad: "+key+"\r\n", 200) + "\r\n" + body,
		"GET /v1/payouts HTTP/1.1\r\n" + headers + "Content-Length: 10\r\n\r\n" + body,
	}
	for _, raw := range requests {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		if cw, ok := c.(*net.TCPConn); ok {
			cw.CloseWrite() // the server sees the end of what was sent
		}
		io.Copy(io.Discard, c) // the answer, until the server closes
		c.Close()
	}
	// The lines fasthttp logs when a connection ends come after the answer.
	eventually(2*time.Second, func() bool { return strings.Contains(logs.String(), "component=fasthttp") })
	out := logs.String()
	if !strings.Contains(out, "component=fasthttp") {
		t.Fatalf("no fasthttp line logged at debug, so nothing was tested:\n%s", out)
	}
	for _, leak := range []string{s.key[len("sk_test_"):], key[len("sk_test_"):], secret[len("whsec_"):], account, "Bearer sk_"} {
		if strings.Contains(out, leak) {
			t.Errorf("the log carries %q:\n%s", leak, out)
		}
	}
}
