package http_test

import (
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hosted checkout over the real stack: its HTML routes, its limits,
// and that paying through it is paying through the API.

// page sends a request to an HTML route as a browser would, without
// following redirects.
func (s *stack) page(method, path, contentType, body string, headers ...string) response {
	s.t.Helper()
	req, err := nethttp.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &nethttp.Client{Timeout: 30 * time.Second, CheckRedirect: func(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: map[string]string{}, body: b}
	for k, v := range resp.Header {
		r.header[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	if !strings.HasPrefix(r.header["x-request-id"], "req_") {
		s.t.Fatalf("%s %s: no request id", method, path)
	}
	return r
}

func (r response) wantHTML(t *testing.T, status int, parts ...string) {
	t.Helper()
	if r.status != status || !strings.HasPrefix(r.header["content-type"], "text/html") {
		t.Fatalf("status %d %s, want %d HTML:\n%s", r.status, r.header["content-type"], status, r.body)
	}
	for _, h := range []string{"content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy"} {
		if r.header[h] == "" {
			t.Fatalf("no %s header", h)
		}
	}
	if r.header["cache-control"] != "no-store" {
		t.Fatalf("cache-control %q", r.header["cache-control"])
	}
	for _, p := range parts {
		if !strings.Contains(string(r.body), p) {
			t.Fatalf("the page lacks %q:\n%s", p, r.body)
		}
	}
}

func TestCheckoutPages(t *testing.T) {
	st := newStack(t, stackOptions{})
	link := st.plCreate("25.00", `["bank_transfer","crypto"]`)

	r := st.page("GET", "/checkout/"+link, "", "")
	r.wantHTML(t, 200, "Pay GHS 25.00", `name="attempt"`, "/checkout/assets/checkout.")
	if csp := r.header["content-security-policy"]; !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "'nonce-") {
		t.Fatalf("CSP %s", csp)
	}
	asset := strings.Split(strings.Split(string(r.body), `href="/checkout/assets/`)[2], `"`)[0] // the stylesheet
	a := st.page("GET", "/checkout/assets/"+asset, "", "")
	if a.status != 200 || a.header["cache-control"] != "public, max-age=31536000, immutable" || !strings.HasPrefix(a.header["content-type"], "text/css") {
		t.Fatalf("asset %s: %d %v", asset, a.status, a.header)
	}

	st.page("GET", "/checkout/pl_nope00000000000000000", "", "").wantHTML(t, 404, "Payment link not found")

	form := url.Values{"method": {"bank_transfer"}, "attempt": {"form-attempt-00000001"}}.Encode()
	st.page("POST", "/checkout/"+link, "application/x-www-form-urlencoded", form, "Origin", "https://evil.example").
		wantHTML(t, 403, "Request refused")
	bad := url.Values{"method": {"crypto"}, "cryptoNetwork": {"nope"}, "attempt": {"form-attempt-00000001"}}.Encode()
	st.page("POST", "/checkout/"+link, "application/x-www-form-urlencoded", bad, "Sec-Fetch-Site", "same-origin").
		wantHTML(t, 400, "is not a stablecoin network")
	ok := st.page("POST", "/checkout/"+link, "application/x-www-form-urlencoded", form, "Sec-Fetch-Site", "same-origin", "Origin", "http://"+st.addr)
	if ok.status != 303 || ok.header["location"] != "/checkout/"+link {
		t.Fatalf("form: %d %v", ok.status, ok.header)
	}
	st.page("GET", "/checkout/"+link, "", "").wantHTML(t, 200, "Pay by bank transfer", "Sandbox Pooled Bank")
	st.page("GET", "/checkout/"+link+"?change=1", "", "").wantHTML(t, 200, "Choose how to pay")

	crypto := url.Values{"method": {"crypto"}, "cryptoNetwork": {"usdt_tron"}, "attempt": {"form-attempt-00000002"}}.Encode()
	st.page("POST", "/checkout/"+link, "application/x-www-form-urlencoded", crypto)
	sessions := st.plGet(link)["sessions"].([]any)
	cs := sessions[0].(map[string]any)["id"].(string)
	qr := st.page("GET", "/checkout/"+link+"/sessions/"+cs+"/qr.svg", "", "")
	if qr.status != 200 || qr.header["content-type"] != "image/svg+xml" || !strings.HasPrefix(string(qr.body), "<svg") {
		t.Fatalf("qr: %d %v", qr.status, qr.header)
	}
	other := st.plCreate("5.00", `["crypto"]`)
	if r := st.page("GET", "/checkout/"+other+"/sessions/"+cs+"/qr.svg", "", ""); r.status != 404 {
		t.Fatalf("another link's QR code: %d", r.status)
	}
}

// The checkout counts requests per client address, pages and endpoints
// alike, and says when to come back.
func TestCheckoutRateLimitedPerAddress(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 3})
	link := st.plCreate("25.00", `["bank_transfer"]`)
	var last response
	for range 4 {
		last = st.page("GET", "/checkout/"+link, "", "")
	}
	last.wantHTML(t, 429, "Too many requests")
	if last.header["retry-after"] == "" {
		t.Fatal("no Retry-After")
	}
	r := st.do("GET", "/v1/checkout/"+link, "", nil)
	st.mustStatus(r, 429)
	if d := r.json(t)["details"].(map[string]any); d["retryAfter"] == nil {
		t.Fatalf("details %v", d)
	}
}

// A double click sends the same attempt twice at once: one session opens,
// and both answers show it.
func TestCheckoutAttemptOpensOneSession(t *testing.T) {
	st := newStack(t, stackOptions{})
	link := st.plCreate("25.00", `["bank_transfer"]`)
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	ids := make([]string, n)
	for i := range n {
		wg.Go(func() {
			r := st.do("POST", "/v1/checkout/"+link+"/sessions", "", `{"method":"bank_transfer","attempt":"double-click-000001"}`)
			statuses[i] = r.status
			if r.status < 300 {
				ids[i] = r.json(t)["checkout"].(map[string]any)["session"].(map[string]any)["id"].(string)
			}
		})
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if created != 1 {
		t.Fatalf("statuses %v, want one 201 and the rest 200", statuses)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("different sessions %v", ids)
		}
	}
	if s := st.plGet(link)["sessions"].([]any); len(s) != 1 {
		t.Fatalf("%d sessions", len(s))
	}
}

// Paying through the checkout fires the events paying through the API
// fires: the same collections, credits and webhooks, by mobile money and
// by a deposit.
func TestCheckoutPaysLikeTheAPI(t *testing.T) {
	st := newStack(t, stackOptions{timing: checkoutFastTiming, settlement: time.Millisecond})
	events := func() []string {
		r := st.do("GET", "/v1/webhooks/events?limit=100", st.key, nil)
		st.mustStatus(r, 200)
		var out []string
		for _, e := range r.json(t)["data"].([]any) {
			out = append(out, e.(map[string]any)["eventType"].(string))
		}
		return out
	}
	// pay returns the types of the events a payment fired, sorted.
	pay := func(f func()) []string {
		before := len(events())
		f()
		time.Sleep(50 * time.Millisecond) // nothing more is to come
		after := events()
		got := slices.Clone(after[:len(after)-before]) // newest first
		slices.Sort(got)
		return got
	}
	awaitPaid := func(link string) {
		waitFor(t, "link "+link+" paid", 10*time.Second, func() bool { return st.plGet(link)["status"] == "paid" })
	}
	publicSession := func(link, body string) string {
		r := st.do("POST", "/v1/checkout/"+link+"/sessions", "", body)
		st.mustStatus(r, 201)
		return r.json(t)["checkout"].(map[string]any)["session"].(map[string]any)["id"].(string)
	}

	page := pay(func() {
		link := st.plCreate("40.00", `["mobile_money"]`)
		publicSession(link, `{"method":"mobile_money","code":"gh_mtn","accountNumber":"233241234567","attempt":"mm-attempt-00000001"}`)
		awaitPaid(link)
	})
	api := pay(func() {
		link := st.plCreate("40.00", `["mobile_money"]`)
		st.plSession(link, `{"method":"mobile_money","code":"gh_mtn","accountNumber":"233241234567"}`)
		awaitPaid(link)
	})
	if !slices.Equal(page, api) || len(page) == 0 {
		t.Fatalf("mobile money: the checkout fired %v, the API %v", page, api)
	}

	page = pay(func() {
		link := st.plCreate("40.00", `["bank_transfer"]`)
		cs := publicSession(link, `{"method":"bank_transfer","attempt":"bank-attempt-0000001"}`)
		st.mustStatus(st.do("POST", fmt.Sprintf("/v1/checkout/%s/sessions/%s/simulate", link, cs), "", nil), 202)
		awaitPaid(link)
	})
	api = pay(func() {
		link := st.plCreate("40.00", `["bank_transfer"]`)
		st.plDeposit(st.plSession(link, `{"method":"bank_transfer"}`)["id"].(string), "", "api-deposit-1")
		awaitPaid(link)
	})
	if !slices.Equal(page, api) || len(page) == 0 {
		t.Fatalf("bank transfer: the checkout fired %v, the API %v", page, api)
	}
}
