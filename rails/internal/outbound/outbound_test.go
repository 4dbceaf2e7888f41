package outbound

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSendWrote(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) }))
	url := srv.URL
	req, _ := http.NewRequest("POST", url, nil)
	resp, wrote, err := Send(srv.Client(), req)
	if err != nil || !wrote || resp.Status != 202 {
		t.Fatalf("resp %v wrote %v err %v", resp, wrote, err)
	}
	srv.Close()
	req, _ = http.NewRequest("POST", url, nil)
	if _, wrote, err = Send(&http.Client{}, req); err == nil || wrote {
		t.Fatalf("a refused connection: wrote %v err %v", wrote, err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name, v string
		want    time.Duration
	}{
		{"absent", "", 7 * time.Second},
		{"seconds", "3", 3 * time.Second},
		{"date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"garbage", "soon", 7 * time.Second},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.v != "" {
			h.Set("Retry-After", c.v)
		}
		if got := RetryAfter(h, now, 7*time.Second); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMaskAndCut(t *testing.T) {
	if got := Mask("233241234567"); got != "********4567" {
		t.Fatal(got)
	}
	if got := Mask("12"); got != "****" {
		t.Fatal(got)
	}
	if got := Cut("héllo", 2); got != "h" {
		t.Fatalf("%q", got)
	}
}

func TestRefusalAndPlainText(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"code and message", Refusal(400, "E1", "bad"), "E1: bad"},
		{"message alone", Refusal(400, "", "bad"), "bad"},
		{"neither", Refusal(503, "", ""), "HTTP 503"},
		{"spaces alone", Refusal(503, " ", ""), "HTTP 503"},
		{"punctuation kept", PlainText(" Invoice 42, O'Brien ", " ,"), "Invoice 42, OBrien"},
		{"nothing kept", PlainText("'''", " "), ""},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}
