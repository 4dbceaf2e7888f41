package http_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The 101st request of a key inside one second is refused with 429, a
// Retry-After header and details.retryAfter; another key is unaffected.
func TestRateLimitOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{})
	k := st.do("POST", "/v1/keys", st.key, `{"name":"second"}`)
	st.mustStatus(k, 201)
	second := k.json(t)["key"].(map[string]any)["secret"].(string)
	var limited *response
	for i := 0; i < 101; i++ {
		r := st.do("GET", "/v1/organization", st.key, nil)
		if r.status == 429 {
			limited = &r
			break
		}
		st.mustStatus(r, 200)
		if got := r.header["ratelimit-limit"]; got != "100" {
			t.Fatalf("ratelimit-limit %q", got)
		}
	}
	if limited == nil {
		t.Fatal("101 requests in well under a second were all allowed")
	}
	e := limited.json(t)
	if e["error"] != "rate_limited" || e["message"] != "Too many requests: this API key is limited to 100 requests per second" {
		t.Fatalf("error %v: %v", e["error"], e["message"])
	}
	retry, _ := e["details"].(map[string]any)["retryAfter"].(float64)
	if retry < 1 || limited.header["retry-after"] != strconv.Itoa(int(retry)) {
		t.Fatalf("retryAfter %v, Retry-After header %q", retry, limited.header["retry-after"])
	}
	// The second key of the same organization has its own window.
	st.mustStatus(st.do("GET", "/v1/organization", second, nil), 200)
}

// Bodies past the limits are refused in the envelope and move nothing.
func TestOversizedBodies(t *testing.T) {
	st := newStack(t, stackOptions{})
	st.fund(st.key, "GHS", "1000.00", "seed")
	pad := strings.Repeat("x", 70<<10)
	r := st.do("POST", "/v1/payouts", st.key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":1},"externalReference":"big","narration":"`+pad+`"}`)
	st.mustStatus(r, 400)
	if e := r.json(t); e["error"] != "validation_error" || !strings.Contains(e["message"].(string), "65536") {
		t.Fatalf("64 KiB limit: %s", r.body)
	}
	huge := strings.Repeat("y", 2<<20)
	r = st.do("POST", "/v1/payouts", st.key, `{"narration":"`+huge+`"}`)
	st.mustStatus(r, 400)
	if e := r.json(t); e["error"] != "validation_error" || !strings.Contains(e["message"].(string), "65536") {
		t.Fatalf("2 MiB body: %s", r.body)
	}
	// Nothing was created, nothing moved.
	r = st.do("GET", "/v1/payouts", st.key, nil)
	if got := r.json(t)["data"].([]any); len(got) != 0 {
		t.Fatalf("%d payouts exist after refused requests", len(got))
	}
	acct := st.do("GET", "/v1/accounts", st.key, nil).json(t)["data"].([]any)[0].(map[string]any)
	if acct["totalBalance"] != "1000.00" {
		t.Fatalf("balance %v after refused requests", acct["totalBalance"])
	}
}

// Through the whole stack: N concurrent payouts against a balance that
// covers K of them; exactly K are created, the others are refused for
// insufficient funds, and the balance never goes negative.
func TestExactlyKPayoutsOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1000})
	const n, k = 60, 23
	// 10.00 each plus a 0.10 fee: fund K of them and 5.00, short of one more.
	funded := k*1010 + 500
	st.fund(st.key, "GHS", fmt.Sprintf("%d.%02d", funded/100, funded%100), "seed")
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := st.do("POST", "/v1/payouts", st.key, fmt.Sprintf(
				`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"10.00"},"externalReference":"k-%d"}`, i))
			statuses <- r.status
		}(i)
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[201] != k || count[422] != n-k {
		t.Fatalf("statuses %v, want %d×201 and %d×422", count, k, n-k)
	}
	acct := st.do("GET", "/v1/accounts", st.key, nil).json(t)["data"].([]any)[0].(map[string]any)
	if strings.HasPrefix(acct["availableBalance"].(string), "-") {
		t.Fatalf("negative balance %v", acct["availableBalance"])
	}
}

// The same externalReference sent concurrently creates one payout; every
// caller gets its id, one with 201 and the others 200 as replays.
func TestConcurrentSameReferenceOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1000})
	st.fund(st.key, "GHS", "1000.00", "seed")
	const n = 40
	type answer struct {
		status int
		id     string
	}
	answers := make(chan answer, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := st.do("POST", "/v1/payouts", st.key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"10.00"},"externalReference":"same"}`)
			p, _ := r.json(t)["payout"].(map[string]any)
			id, _ := p["id"].(string)
			answers <- answer{r.status, id}
		}()
	}
	wg.Wait()
	close(answers)
	ids := map[string]bool{}
	created := 0
	for a := range answers {
		ids[a.id] = true
		switch a.status {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("status %d", a.status)
		}
	}
	if len(ids) != 1 || created != 1 {
		t.Fatalf("%d distinct ids, %d created; want one payout created once", len(ids), created)
	}
}
