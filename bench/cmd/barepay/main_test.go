package main

import (
	"net"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// TestPayout starts the bare server on loopback and checks that a payout
// is answered as the service answers it: 201 with a payout-shaped body the
// first time, 200 for the same reference again.
func TestPayout(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer()
	go srv.Serve(ln)
	defer srv.Shutdown()

	c := &fasthttp.Client{ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	body := `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"12.50"},"externalReference":"r-1"}`
	for i, want := range []int{201, 200} {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://" + ln.Addr().String() + "/v1/payouts")
		req.Header.Set("Authorization", "Bearer sk_test_x")
		req.SetBodyString(body)
		if err := c.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != want {
			t.Fatalf("attempt %d: status %d, want %d: %s", i, resp.StatusCode(), want, resp.Body())
		}
		var out struct {
			Payout struct {
				ID                string
				ExternalReference string
				To                struct{ Amount, Currency string }
				Fee               struct{ Amount string }
			}
		}
		if err := json.Unmarshal(resp.Body(), &out); err != nil {
			t.Fatal(err)
		}
		p := out.Payout
		if !strings.HasPrefix(p.ID, "po_") || p.ExternalReference != "r-1" || p.To.Amount != "12.50" || p.To.Currency != "GHS" || p.Fee.Amount != "0.12" {
			t.Fatalf("payout %+v", p)
		}
	}
}

func TestMinorUnits(t *testing.T) {
	for in, want := range map[string]int64{"12.50": 1250, "7": 700, "0.5": 50} {
		if got, ok := minorUnits(in); !ok || got != want {
			t.Errorf("minorUnits(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"1.001", "-1", "NaN", "Infinity", "x"} {
		if _, ok := minorUnits(in); ok {
			t.Errorf("minorUnits(%q) accepted", in)
		}
	}
}

// TestSetupAnswers checks the answers paybench's setup decodes.
func TestSetupAnswers(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer()
	go srv.Serve(ln)
	defer srv.Shutdown()
	for _, path := range []string{"/v1/organizations", "/v1/keys", "/v1/simulations/fund-balance"} {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://" + ln.Addr().String() + path)
		req.SetBodyString(`{}`)
		if err := fasthttp.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if resp.StatusCode() != 201 || json.Unmarshal(resp.Body(), &out) != nil {
			t.Errorf("%s: %d %s", path, resp.StatusCode(), resp.Body())
		}
	}
}
