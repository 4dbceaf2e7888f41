package outbound

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// BodySizeMax is the most of a response body Send reads.
const BodySizeMax = 1 << 20

// Response is a provider's answer, its body read in full (up to
// BodySizeMax).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Send does req with client. Wrote reports whether any of the request
// reached the wire: when err is not nil and wrote is false the provider
// cannot have acted on it. A response whose body cannot be read is an
// error with wrote true.
func Send(client *http.Client, req *http.Request) (resp *Response, wrote bool, err error) {
	var written atomic.Bool
	trace := &httptrace.ClientTrace{
		// WroteHeaders and WroteRequest fire once bytes went out, even
		// if writing then failed: count that as written.
		WroteHeaders: func() { written.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) { written.Store(true) },
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	r, err := client.Do(req)
	if err != nil {
		return nil, written.Load(), err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, BodySizeMax))
	if err != nil {
		return nil, true, fmt.Errorf("reading the response: %w", err)
	}
	return &Response{Status: r.StatusCode, Header: r.Header, Body: body}, true, nil
}

// RetryAfter reads a Retry-After header (seconds or an HTTP date), or
// returns fallback.
func RetryAfter(h http.Header, now time.Time, fallback time.Duration) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return fallback
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
		return 0
	}
	return fallback
}

// Mask shows only the last four characters of an account or phone number.
func Mask(number string) string {
	const shown = 4
	if len(number) <= shown {
		return "****"
	}
	b := make([]byte, len(number))
	for i := range b {
		if i < len(number)-shown {
			b[i] = '*'
		} else {
			b[i] = number[i]
		}
	}
	return string(b)
}

// Digits reports whether s is one or more ASCII digits: what the adapters
// require of phone numbers, short codes and the parts of an amount.
func Digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Cut shortens a provider's message to at most n bytes, on a character
// boundary, so one long answer cannot swell a status message.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Refusal describes a provider's refusal for messages: its code and
// message joined by ": " (either may be empty), or the HTTP status when it
// gave neither; cut to 200 bytes.
func Refusal(status int, code, message string) string {
	s := strings.TrimSpace(CodeMessage(code, message))
	if s == "" {
		s = fmt.Sprintf("HTTP %d", status)
	}
	return Cut(s, 200)
}

// CodeMessage joins a provider's code and message by ": ", leaving out
// an empty one.
func CodeMessage(code, message string) string {
	switch {
	case code == "":
		return message
	case message == "":
		return code
	}
	return code + ": " + message
}

// Decode reads resp's body as JSON into a T; what it cannot read stays
// zero, as a refusal's body may be anything.
func Decode[T any](resp *Response) T {
	var v T
	_ = json.Unmarshal(resp.Body, &v)
	return v
}

// PlainText keeps of s the ASCII letters and digits and the characters of
// punctuation, what providers take in their free-text fields, and trims
// the spaces at its ends.
func PlainText(s, punctuation string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(punctuation, r):
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
