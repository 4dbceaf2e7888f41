package http_test

import (
	"net/url"
	"testing"
)

// Every path that answers 503, as a client meets it over HTTP, says when
// to retry: the API's errors (no provider, no rate, the bound on bodies in
// flight), a page of the hosted checkout, and /readyz while draining.
func TestEvery503CarriesRetryAfter(t *testing.T) {
	st := newStack(t, stackOptions{live: true})
	link := st.plCreate("25.00", `["bank_transfer"]`)
	form := url.Values{"method": {"bank_transfer"}, "attempt": {"form-attempt-00000001"}}.Encode()
	cases := []struct {
		name       string
		send       func() response
		retryAfter string
	}{
		{"payout without a provider", func() response {
			return st.do("POST", "/v1/payouts", st.key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":150},"externalReference":"x"}`)
		}, "1"},
		{"rate without a source", func() response { return st.do("GET", "/v1/rates/GHS/USD", st.key, nil) }, "5"},
		{"checkout page without a provider", func() response {
			return st.page("POST", "/checkout/"+link, "application/x-www-form-urlencoded", form, "Sec-Fetch-Site", "same-origin")
		}, "1"},
		{"readyz while draining", func() response { st.srv.StartDraining(); return st.do("GET", "/readyz", "", nil) }, "1"},
	}
	for _, tc := range cases {
		r := tc.send()
		if r.status != 503 || r.header["retry-after"] != tc.retryAfter {
			t.Errorf("%s: %d, Retry-After %q, want 503 with %s: %s", tc.name, r.status, r.header["retry-after"], tc.retryAfter, r.body)
		}
	}
}
