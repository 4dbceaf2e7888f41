package logscrub

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

const (
	testKey    = "sk_test_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz0123"
	liveKey    = "sk_live_ZyXwVu9876543210TsRqPoNmLkJiHgFeDcBa9876"
	testSecret = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LWJ5dGVzLTEyMzQ1Ng=="
)

func TestString(t *testing.T) {
	cases := []struct {
		name, in string
		gone     []string // must not survive
		kept     []string // must survive
	}{
		{"test key", "key " + testKey + " used", []string{testKey[8:]}, []string{"sk_test_" + Masked, " used"}},
		{"live key", liveKey, []string{liveKey[8:]}, []string{"sk_live_" + Masked}},
		{"signing secret", "secret=" + testSecret + "&x=1", []string{"c2VjcmV0"}, []string{"whsec_" + Masked, "&x=1"}},
		{"raw header", "POST / HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\nHost: h\r\n", []string{"dXNlcjpwYXNz"}, []string{"Authorization: " + Masked, "Host: h"}},
		{"quoted header", `"POST / HTTP/1.1\r\nauthorization: Token abc.def\r\nHost: h\r\n"`, []string{"abc.def"}, []string{"Host: h"}},
		{"header at end of quote", `"Authorization: opaque-token-1"`, []string{"opaque-token-1"}, []string{`"`}},
		{"bearer of any shape", "sent Bearer eyJhbGciOi.x.y, then", []string{"eyJhbGciOi"}, []string{", then"}},
		{"nothing secret", "payout po_123 failed: timeout", nil, []string{"payout po_123 failed: timeout"}},
	}
	for _, tc := range cases {
		got := String(tc.in)
		for _, g := range tc.gone {
			if strings.Contains(got, g) {
				t.Errorf("%s: %q still carries %q", tc.name, got, g)
			}
		}
		for _, k := range tc.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s: %q lost %q", tc.name, got, k)
			}
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// Every kind of attribute a log call may carry is masked: strings, errors,
// Stringers, other values, groups and attributes bound with With.
func TestHandlerMasksEveryAttribute(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l = l.With("bound", testKey).WithGroup("g")
	l.Debug("message with "+liveKey,
		"s", "Authorization: Bearer "+testKey,
		"err", errors.New("wrapped "+testSecret),
		"stringer", stringer(liveKey),
		"any", struct{ K string }{testKey},
		slog.Group("grp", "inner", testSecret),
		"n", 42,
	)
	out := buf.String()
	for _, secret := range []string{testKey[8:], liveKey[8:], testSecret[6:]} {
		if strings.Contains(out, secret) {
			t.Fatalf("log line carries a secret: %s", out)
		}
	}
	for _, want := range []string{"g.n=42", "sk_test_" + Masked, "whsec_" + Masked} {
		if !strings.Contains(out, want) {
			t.Fatalf("log line lacks %q: %s", want, out)
		}
	}
}
