package main

import (
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// The bare server answers a payout as the service does at its edge: 201
// with the amount in the currency's minor units formatted back, 200 for
// the same reference again, 400 for an amount with more decimals than the
// currency has.
func TestBarePayout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: routes().Handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	post := func(body string) (int, string) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("http://" + ln.Addr().String() + "/v1/payouts")
		req.Header.SetMethod("POST")
		req.Header.Set("Authorization", "Bearer sk_test_x")
		req.SetBodyString(body)
		if err := fasthttp.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode(), string(resp.Body())
	}
	body := `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"12.5"},"externalReference":"b-1"}`
	st, out := post(body)
	if st != 201 || !strings.Contains(out, `"amount":"12.50"`) || !strings.Contains(out, `"pay_ghs_`) {
		t.Fatalf("payout: %d %s", st, out)
	}
	if st, _ := post(body); st != 200 {
		t.Fatalf("replay: %d", st)
	}
	if st, _ := post(`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"1","amount":"1.234"},"externalReference":"b-2"}`); st != 400 {
		t.Fatalf("three decimals: %d", st)
	}
}
