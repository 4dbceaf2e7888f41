package main

import (
	"context"
	"fmt"
	"html"
	"io"
	nethttp "net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// End-to-end tests of the dashboard's pages: a team member in headless
// Chromium against the real binary on the sandbox stack, checking what
// the pages did through the API itself.

// dashEnv is a server, its default organization, and the tabs of its
// members.
type dashEnv struct {
	nodeEnv
	org string // the bootstrap key's organization
	// setupFrom printed the first owner's setup link: the leader when p
	// is a follower; nil: p.
	setupFrom *proc
	owner     *nethttp.Client   // the first owner's, signed in
	sessions  map[string]string // role → a member's session token
}

func newDashEnv(t *testing.T, serverArgs ...string) *dashEnv {
	t.Helper()
	endToEnd(t)
	t.Parallel()
	e := &dashEnv{nodeEnv: nodeEnv{t: t}}
	e.p = startReady(t, t.TempDir(), append([]string{"--webhook-timeout", "2s"}, serverArgs...)...)
	// Ready means a leader is known; the bootstrap key commits just after.
	var out struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
	}
	waitUntil(t, 10*time.Second, "the bootstrap key", func() bool {
		st, err := call(e.p.addr, "GET", "/v1/organization", nil, &out)
		if err == nil && st != 200 && st != 401 {
			t.Fatalf("read the organization: %d", st)
		}
		return err == nil && st == 200
	})
	e.org = out.Organization.ID
	return e
}

// open opens a dashboard page in a new tab, signed in as a member of org
// with role.
func (e *dashEnv) open(org, role, path string) context.Context {
	e.t.Helper()
	ctx := newTab(e.t)
	e.signIn(ctx, org, role)
	e.goTo(ctx, path)
	return ctx
}

// goTo loads a dashboard page in the tab.
func (e *dashEnv) goTo(ctx context.Context, path string) {
	e.t.Helper()
	do(e.t, ctx, chromedp.Navigate("http://"+e.p.addr+path))
	waitFor(e.t, ctx, `document.readyState === "complete" && document.getElementById("main") !== null`)
}

// session returns the name and value of the session cookie of a member
// of the first organization with role (org must be it: other
// organizations get no setup link to make members with). The first owner
// comes through the setup link the process printed, the others through
// the owner's invitations, each by the forms of the members' pages
// (dashboard_members_e2e_test.go drives those in the browser); one member
// per role and server.
func (e *dashEnv) session(org, role string) (string, string) {
	e.t.Helper()
	if org != e.org {
		e.t.Fatalf("a member of %s: only the first organization %s gets a setup link", org, e.org)
	}
	if s, ok := e.sessions[role]; ok {
		return "dashboard_session", s
	}
	if e.sessions == nil {
		e.sessions = map[string]string{}
	}
	base := "http://" + e.p.addr
	if e.owner == nil {
		setupFrom := e.setupFrom
		if setupFrom == nil {
			setupFrom = e.p
		}
		e.owner = formClient(e.t)
		setup := setupFrom.stdoutValue("dashboard_setup_url")
		csrf := formCSRF(e.t, e.owner, setup)
		st, body, session := postForm(e.t, e.owner, setup, url.Values{"csrf": {csrf}, "email": {"owner@merchant.example"},
			"password": {memberPassword}, "confirm": {memberPassword}})
		if st != 303 || session == "" {
			e.t.Fatalf("the first owner's setup: %d\n%s", st, body)
		}
		e.sessions["owner"] = session
	}
	if role != "owner" {
		csrf := formCSRF(e.t, e.owner, base+"/dashboard/team")
		st, body, _ := postForm(e.t, e.owner, base+"/dashboard/team/invitations", url.Values{"csrf": {csrf},
			"email": {role + "@merchant.example"}, "role": {role}})
		m := invitationLink.FindStringSubmatch(body)
		if st != 200 || m == nil {
			e.t.Fatalf("inviting a %s: %d\n%s", role, st, body)
		}
		link := html.UnescapeString(m[1])
		member := formClient(e.t)
		csrf = formCSRF(e.t, member, link)
		st, body, session := postForm(e.t, member, link, url.Values{"csrf": {csrf}, "password": {memberPassword}, "confirm": {memberPassword}})
		if st != 303 || session == "" {
			e.t.Fatalf("the %s's acceptance: %d\n%s", role, st, body)
		}
		e.sessions[role] = session
	}
	return "dashboard_session", e.sessions[role]
}

const memberPassword = "violet tractor sings at dawn"

var invitationLink = regexp.MustCompile(`id="invitation-link" type="text" readonly value="([^"]+)"`)

// formClient is a cookie-keeping client that does not follow redirects.
func formClient(t *testing.T) *nethttp.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &nethttp.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse }}
}

// formCSRF gets a page and returns its first form's CSRF token.
func formCSRF(t *testing.T, hc *nethttp.Client, u string) string {
	t.Helper()
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	m := csrfInput.FindStringSubmatch(string(raw))
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, raw)
	}
	return html.UnescapeString(m[1])
}

// postForm sends a form, and returns the answer's status and body, and
// the session cookie it set, if any.
func postForm(t *testing.T, hc *nethttp.Client, u string, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := hc.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	session := ""
	for _, c := range resp.Cookies() {
		if c.Name == "dashboard_session" {
			session = c.Value
		}
	}
	return resp.StatusCode, string(raw), session
}

// cookie is the Cookie header of a member of org with role.
func (e *dashEnv) cookie(org, role string) string {
	name, value := e.session(org, role)
	return name + "=" + value
}

// signIn gives the tab a session of a member of org with role.
func (e *dashEnv) signIn(ctx context.Context, org, role string) {
	e.t.Helper()
	name, value := e.session(org, role)
	httpOnly := true
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: name, Value: value,
		URL: "http://" + e.p.addr + "/dashboard", Path: "/dashboard", HTTPOnly: &httpOnly}); err != nil {
		e.t.Fatalf("set the session cookie: %v", err)
	}
}

// sendForm submits the form with the given id as its submit button would
// (confirmations, if any, accepted), and waits for the next page.
func sendForm(t *testing.T, ctx context.Context, formID string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.confirm = () => true; document.getElementById("main").dataset.old = "1"; document.getElementById(`+quoteJS(formID)+`).requestSubmit()`))
	waitFor(t, ctx, `document.readyState === "complete" && document.getElementById("main") !== null && document.getElementById("main").dataset.old !== "1"`)
}

// clickThrough clicks the element the selector names and waits for the
// next page.
func clickThrough(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.confirm = () => true; document.getElementById("main").dataset.old = "1"; document.querySelector(`+quoteJS(selector)+`).click()`))
	waitFor(t, ctx, `document.readyState === "complete" && document.getElementById("main") !== null && document.getElementById("main").dataset.old !== "1"`)
}

func quoteJS(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// An owner creates a key in the page with a per-payment cap and an IP
// allowlist; the secret is shown once; the API then admits a payment
// under the cap from the allowed address, refuses one over it, and
// refuses the key from any other address; the key's page shows the use
// against the cap.
func TestDashboardKeyWithCapAndAllowlist(t *testing.T) {
	e := newDashEnv(t)
	allowed, other := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3")
	e.api("POST", "/v1/simulations/fund-balance", map[string]any{"amount": "10000.00", "currency": "GHS", "externalReference": "seed"}, nil, 201)

	ctx := e.open(e.org, "owner", "/dashboard/keys")
	wantText(t, ctx, "Sandbox", "Create a key")
	do(t, ctx,
		chromedp.SendKeys(`#key-name`, "Payroll"),
		chromedp.Click(`input[name=scopes][value="payouts:write"]`),
		chromedp.Click(`input[name=scopes][value="payouts:read"]`),
		chromedp.SendKeys(`input[name=capPerTransaction]`, "10.00"),
		chromedp.SendKeys(`textarea[name=ipAllowlist]`, "127.0.0.2"),
	)
	sendForm(t, ctx, "create-key")
	wantText(t, ctx, "Your new key “Payroll”", "shown this once")
	secret := eval[string](t, ctx, `document.getElementById("new-key-secret").textContent.trim()`)
	if !strings.HasPrefix(secret, "sk_test_") {
		t.Fatalf("the page shows %q as the new key", secret)
	}
	screenshot(t, ctx, "key-created")

	// The page shows it once: a reload of the list does not.
	e.goTo(ctx, "/dashboard/keys")
	if page := text(t, ctx); strings.Contains(page, secret) || !strings.Contains(page, "Payroll") {
		t.Fatalf("the keys page after the creation:\n%s", page)
	}

	payout := func(hc *nethttp.Client, amount, ref string) (int, errorView) {
		var ev errorView
		st, err := callWith(hc, secret, nil, e.p.addr, "POST", "/v1/payouts", mtnPayout(amount, ref), &ev)
		if err != nil {
			t.Fatal(err)
		}
		return st, ev
	}
	// GHS 100.00 + 1.00 fee is 6.41 USD at the sandbox rate: under the cap.
	if st, ev := payout(allowed, "100.00", "under"); st != 201 {
		t.Fatalf("a payout under the cap from the allowed address: %d %+v", st, ev)
	}
	if st, ev := payout(allowed, "200.00", "over"); st != 403 || ev.Error != "spend_cap_exceeded" || ev.Details["cap"] != "perTransaction" {
		t.Fatalf("a payout over the cap: %d %+v, want 403 spend_cap_exceeded perTransaction", st, ev)
	}
	if st, ev := payout(other, "100.00", "elsewhere"); st != 403 || !strings.Contains(ev.Message, "not on this API key's IP allowlist") {
		t.Fatalf("a payout from an address not on the allowlist: %d %+v, want 403", st, ev)
	}

	// The key's page: its cap, its allowlist, and today's use.
	clickThrough(t, ctx, `#key-table a`)
	wantText(t, ctx, "127.0.0.2/32", "10.00", "6.41")
	screenshot(t, ctx, "key")

	// The allowlist emptied and a per-payment cap raised in the page: the
	// key works from anywhere, and the payout refused before is admitted.
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#edit-key textarea[name=ipAllowlist]").value = "";
		document.querySelector("#edit-key input[name=capPerTransaction]").value = "50.00"`))
	sendForm(t, ctx, "edit-key")
	wantText(t, ctx, "Saved.", "any address", "50.00")
	if st, ev := payout(other, "200.00", "over-now-allowed"); st != 201 {
		t.Fatalf("a payout under the raised cap from any address: %d %+v", st, ev)
	}

	// Revoked in the page, behind its confirmation: the API refuses it.
	do(t, ctx, chromedp.Click(`#revoke-key input[name=confirm]`))
	sendForm(t, ctx, "revoke-key")
	wantText(t, ctx, "The key is revoked")
	if st, _ := payout(allowed, "10.00", "after-revoke"); st != 401 {
		t.Fatalf("a revoked key: %d, want 401", st)
	}
}

// A member finds a request by the x-request-id its answer carried, and
// sees its record and redacted body.
func TestDashboardFindsRequestByID(t *testing.T) {
	e := newDashEnv(t)
	req, err := nethttp.NewRequest("POST", "http://"+e.p.addr+"/v1/simulations/fund-balance",
		strings.NewReader(`{"amount":"25.00","currency":"GHS","externalReference":"find-me"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("x-request-id")
	if resp.StatusCode != 201 || id == "" {
		t.Fatalf("fund: %d, request id %q", resp.StatusCode, id)
	}

	ctx := e.open(e.org, "viewer", "/dashboard/requests")
	// The recorder writes a record shortly after its answer.
	if !eventually(10*time.Second, func() bool {
		if strings.Contains(text(t, ctx), id) {
			return true
		}
		e.goTo(ctx, "/dashboard/requests")
		return false
	}) {
		t.Fatalf("the request log does not list %s:\n%s", id, text(t, ctx))
	}
	do(t, ctx, chromedp.SendKeys(`#find-request-id`, id))
	sendForm(t, ctx, "request-search")
	waitLocation(t, ctx, "http://"+e.p.addr+"/dashboard/requests/"+id)
	wantText(t, ctx, id, "POST /v1/simulations/fund-balance", "201", "find-me", "api_key")
	screenshot(t, ctx, "request")

	// Filters reach the API's: only the failed requests.
	e.goTo(ctx, "/dashboard/requests?status=404")
	if strings.Contains(text(t, ctx), id) {
		t.Fatalf("the 404 filter lists %s", id)
	}
}

// A delivery replayed from the page reaches the loopback receiver again
// and shows as a new attempt in its history; "Send test event" delivers at
// once.
func TestDashboardReplaysDelivery(t *testing.T) {
	e := newDashEnv(t)
	var received atomic.Int64
	rcv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if received.Add(1) == 1 { // the first request finds the receiver not ready
			w.WriteHeader(nethttp.StatusServiceUnavailable)
			io.WriteString(w, "not ready yet")
			return
		}
		w.WriteHeader(nethttp.StatusOK)
	}))
	t.Cleanup(rcv.Close)

	ctx := e.open(e.org, "developer", "/dashboard/webhooks")
	do(t, ctx, chromedp.SendKeys(`#create-endpoint input[name=url]`, rcv.URL+"/hooks"))
	sendForm(t, ctx, "create-endpoint")
	wantText(t, ctx, rcv.URL+"/hooks", "Created.")

	clickThrough(t, ctx, `button.send-test`)
	wantText(t, ctx, "The test event was not delivered: HTTP 503", "(the endpoint answered 503)", "webhook.test")
	if n := received.Load(); n != 1 {
		t.Fatalf("the receiver got %d requests after the test event, want 1", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#delivery-table tr[data-delivery]").length`); n != 1 {
		t.Fatalf("%d deliveries listed, want 1", n)
	}

	// The delivery's page lists its one attempt; Replay there sends it
	// again in place (a failed delivery keeps its id), and the new attempt
	// joins the history above the first.
	clickThrough(t, ctx, `#delivery-table tr[data-delivery] a`)
	delivery := eval[string](t, ctx, `document.querySelector("#delivery-facts code").textContent`)
	waitLocation(t, ctx, "http://"+e.p.addr+"/dashboard/webhooks/deliveries/"+delivery)
	attempts := `[...document.querySelectorAll("#attempt-table tr[data-attempt]")].map(r => [r.dataset.attempt, r.querySelector(".outcome").textContent, r.querySelector(".answer").textContent].join(" ")).join("; ")`
	if got := eval[string](t, ctx, attempts); got != "1 failed 503" {
		t.Fatalf("the attempts before the replay: %q", got)
	}
	wantText(t, ctx, "HTTP 503", "failed")
	clickThrough(t, ctx, `#replay-delivery button.replay`)
	wantText(t, ctx, "The delivery is sent again")
	waitLocation(t, ctx, "http://"+e.p.addr+"/dashboard/webhooks/deliveries/"+delivery)
	if !eventually(15*time.Second, func() bool {
		if eval[string](t, ctx, attempts) == "2 delivered 200; 1 failed 503" {
			return true
		}
		e.goTo(ctx, "/dashboard/webhooks/deliveries/"+delivery)
		return false
	}) {
		t.Fatalf("the attempts after the replay: %q", eval[string](t, ctx, attempts))
	}
	if n := received.Load(); n != 2 {
		t.Fatalf("the receiver got %d requests after the replay, want 2", n)
	}
	wantText(t, ctx, "success")
	screenshot(t, ctx, "delivery")

	// Replayed from the list after its success: a new delivery of the
	// same event, attempted once.
	e.goTo(ctx, "/dashboard/webhooks")
	clickThrough(t, ctx, `button.replay`)
	wantText(t, ctx, "The delivery is sent again")
	waitUntil(t, 15*time.Second, "the replay at the receiver", func() bool { return received.Load() >= 3 })
	if !eventually(10*time.Second, func() bool {
		e.goTo(ctx, "/dashboard/webhooks")
		return eval[bool](t, ctx, `(() => { const rows = [...document.querySelectorAll("#delivery-table tr[data-delivery]")];
			return rows.length === 2 && rows.every(r => r.querySelector(".status").textContent === "success") &&
				rows.map(r => r.dataset.attempts).sort().join() === "1,2"; })()`)
	}) {
		t.Fatalf("the deliveries after the replay:\n%s", text(t, ctx))
	}
	screenshot(t, ctx, "webhooks")

	// The signing secret rotated: the new one shown once, with how long
	// the previous one still signs; then the endpoint disabled.
	clickThrough(t, ctx, `form[action$="/rotate"] button`)
	wantText(t, ctx, "The signing secret is rotated", "The previous secret still signs until")
	if s := eval[string](t, ctx, `document.getElementById("signing-secret").textContent`); !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("the new signing secret shows as %q", s)
	}
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("details.edit").open = true;
		document.querySelector(".edit-endpoint input[name=events]").value = "payout.completed, payout.failed"`))
	clickThrough(t, ctx, `.edit-endpoint button`)
	wantText(t, ctx, "Saved.", "payout.completed, payout.failed")
	clickThrough(t, ctx, `form[action$="/status"] button`)
	wantText(t, ctx, "The endpoint's status is changed.")
	if st := eval[string](t, ctx, `document.querySelector("#endpoint-table tr[data-endpoint] td:nth-child(3)").textContent`); !strings.HasPrefix(st, "disabled") {
		t.Fatalf("the endpoint's status after Disable: %q", st)
	}
}

// A viewer sees keys but has no form to create one, and a create sent
// anyway with the viewer's own CSRF token is refused by the API's scope
// check; a form without the token is refused before anything runs.
func TestDashboardViewerCannotCreateKeys(t *testing.T) {
	e := newDashEnv(t)
	ctx := e.open(e.org, "viewer", "/dashboard/keys")
	wantText(t, ctx, "Bootstrap key", "may see keys but not create")
	if eval[bool](t, ctx, `document.getElementById("create-key") !== null`) {
		t.Fatal("a viewer is offered the form to create a key")
	}
	// The form an owner would send, built in the viewer's page.
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.createElement("form");
		f.method = "post"; f.action = "/dashboard/keys"; f.id = "forged";
		for (const [k, v] of [["csrf", document.querySelector("input[name=csrf]").value], ["name", "Sneaky"]]) {
			const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; f.appendChild(i);
		}
		document.body.appendChild(f);
	})()`))
	sendForm(t, ctx, "forged")
	wantText(t, ctx, "does not have the scope keys:admin")
	var keys struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	e.api("GET", "/v1/keys", nil, &keys, 200)
	for _, k := range keys.Data {
		if k.Name == "Sneaky" {
			t.Fatal("a viewer's form created a key")
		}
	}

	// An owner's form without its CSRF token: 403, nothing created.
	jar := nethttp.Header{"Cookie": {e.cookie(e.org, "owner")}, "Content-Type": {"application/x-www-form-urlencoded"}}
	req, _ := nethttp.NewRequest("POST", "http://"+e.p.addr+"/dashboard/keys", strings.NewReader(url.Values{"name": {"No token"}}.Encode()))
	req.Header = jar
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a form without its CSRF token: %d, want 403", resp.StatusCode)
	}
	e.api("GET", "/v1/keys", nil, &keys, 200)
	for _, k := range keys.Data {
		if k.Name == "No token" {
			t.Fatal("a form without its CSRF token created a key")
		}
	}
}

// The home page on a phone and on a desktop: balances, the stack named,
// the latest payouts, and the charts counted from them: three payouts
// today, one rejected by the sandbox rail (amount ending in .01).
func TestDashboardHome(t *testing.T) {
	e := newDashEnv(t)
	e.api("POST", "/v1/simulations/fund-balance", map[string]any{"amount": "1500.00", "currency": "GHS", "externalReference": "home"}, nil, 201)
	for i, amount := range []string{"10.00", "20.00", "30.01"} {
		e.api("POST", "/v1/payouts", mtnPayout(amount, fmt.Sprintf("home-%d", i)), nil, 201)
	}
	ctx := e.open(e.org, "owner", "/dashboard")
	successDesc := func() string {
		return eval[string](t, ctx, `(document.querySelector("#success desc") || {}).textContent || ""`)
	}
	if !eventually(20*time.Second, func() bool {
		if successDesc() == "gh_mtn: 2 of 3 succeeded (67%)." {
			return true
		}
		e.goTo(ctx, "/dashboard")
		return false
	}) {
		t.Fatalf("the success chart says %q", successDesc())
	}
	today := time.Now().UTC().Format("2 Jan")
	if desc := eval[string](t, ctx, `document.querySelector("#volume desc").textContent`); desc != today+": 3." &&
		desc != time.Now().UTC().AddDate(0, 0, -1).Format("2 Jan")+": 3." { // midnight may have passed
		t.Fatalf("the volume chart says %q, want %q", desc, today+": 3.")
	}
	wantText(t, ctx, "Sandbox", "Balances", "GHS", "Latest Payouts", "home-2")
	screenshot(t, ctx, "desktop")
	do(t, ctx, chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile))
	e.goTo(ctx, "/dashboard")
	if overflow := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
		t.Fatal("the home page is wider than a phone's screen")
	}
	screenshot(t, ctx, "phone")
}

// The sandbox tools fund a balance and move the clock; a payout made
// through the API shows in its list and on its page with its timeline; the
// ledger shows the running balance, and its CSV export downloads.
func TestDashboardSandboxLedgerAndMoney(t *testing.T) {
	e := newDashEnv(t)
	ctx := e.open(e.org, "developer", "/dashboard/sandbox")
	ref := eval[string](t, ctx, `document.querySelector("#fund input[name=externalReference]").value`)
	do(t, ctx, chromedp.SendKeys(`#fund input[name=amount]`, "500.00"))
	sendForm(t, ctx, "fund")
	wantText(t, ctx, "The balance is funded with 500.00 GHS.")
	// The same form sent again (a double click): one simulation, by its
	// reference.
	call(e.p.addr, "POST", "/v1/simulations/fund-balance", map[string]any{"amount": "500.00", "currency": "GHS", "externalReference": ref}, nil)
	if got := ghsAccount(t, e.p.addr).TotalBalance; got != "500.00" {
		t.Fatalf("the GHS balance is %s after the form and its replay, want 500.00", got)
	}

	var created struct {
		Payout payoutView `json:"payout"`
	}
	e.api("POST", "/v1/payouts", mtnPayout("40.00", "dash-payout"), &created, 201)
	e.goTo(ctx, "/dashboard/payouts")
	wantText(t, ctx, created.Payout.ID, "dash-payout")
	clickThrough(t, ctx, `#main table.grid a[href="/dashboard/payouts/`+created.Payout.ID+`"]`)
	wantText(t, ctx, "Timeline", "dash-payout", "gh_mtn")
	e.goTo(ctx, "/dashboard/payouts?status=failed")
	if strings.Contains(text(t, ctx), created.Payout.ID) {
		t.Fatal("the failed filter lists a pending payout")
	}

	e.goTo(ctx, "/dashboard/ledger")
	wantText(t, ctx, "500.00", "topup")
	screenshot(t, ctx, "ledger")
	today := time.Now().UTC().Format("2006-01-02")
	req, _ := nethttp.NewRequest("GET", "http://"+e.p.addr+"/dashboard/ledger/export.csv?from="+today+"&to="+today, nil)
	req.Header.Set("Cookie", e.cookie(e.org, "viewer"))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") ||
		!strings.HasPrefix(string(raw), "id,type,reference,amount,runningBalance") || !strings.Contains(string(raw), ",500.00,") {
		t.Fatalf("the CSV export: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Disposition"), raw)
	}

	e.goTo(ctx, "/dashboard/sandbox")
	do(t, ctx, chromedp.SetValue(`#clock select[name=seconds]`, "86400"))
	sendForm(t, ctx, "clock")
	wantText(t, ctx, "The clock now reads")

	// A viewer has no tools.
	viewer := e.open(e.org, "viewer", "/dashboard/sandbox")
	wantText(t, viewer, "may not use the sandbox tools")
}

// dashHTTP sends a dashboard request with a member's cookie through hc and
// returns the status and the page.
func (e *dashEnv) dashHTTP(addr, method, path, cookie string, form url.Values) (int, string) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := nethttp.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Cookie", cookie)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

var (
	csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	newSecret = regexp.MustCompile(`id="new-key-secret" class="secret-value">(sk_test_[A-Za-z0-9]+)<`)
)

// On a cluster, a member uses the dashboard through a follower: its pages
// read the leader's state, and a key created in a follower's page works at
// once against another node.
func TestDashboardThroughFollower(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	procs := startCluster(t, 3)
	leader, followers := roles(t, procs)
	e := &dashEnv{nodeEnv: nodeEnv{t: t, p: followers[0]}, setupFrom: leader}
	var out struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
	}
	waitUntil(t, 10*time.Second, "the organization through the leader", func() bool {
		st, err := call(leader.addr, "GET", "/v1/organization", nil, &out)
		return err == nil && st == 200
	})
	e.org = out.Organization.ID
	cookie := e.cookie(e.org, "owner")

	st, page := e.dashHTTP(followers[0].addr, "GET", "/dashboard/keys", cookie, nil)
	m := csrfInput.FindStringSubmatch(page)
	if st != 200 || m == nil || !strings.Contains(page, "Bootstrap key") {
		t.Fatalf("the keys page through a follower: %d\n%s", st, page)
	}
	st, page = e.dashHTTP(followers[0].addr, "POST", "/dashboard/keys", cookie,
		url.Values{"csrf": {html.UnescapeString(m[1])}, "name": {"Through a follower"}, "scopes": {"balances:read"}})
	secret := newSecret.FindStringSubmatch(page)
	if st != 201 || secret == nil {
		t.Fatalf("creating a key through a follower's page: %d\n%s", st, page)
	}
	if st, err := callWith(client, secret[1], nil, followers[1].addr, "GET", "/v1/accounts", nil, nil); err != nil || st != 200 {
		t.Fatalf("the new key on another follower: %d %v", st, err)
	}
}

// Without JavaScript the forms still work: a key is created (its secret
// shown) and revoked behind the ticked confirmation.
func TestDashboardWithoutJavaScript(t *testing.T) {
	e := newDashEnv(t)
	ctx := newTab(t)
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	e.signIn(ctx, e.org, "owner")
	do(t, ctx, chromedp.Navigate("http://"+e.p.addr+"/dashboard/keys"))
	do(t, ctx, chromedp.SendKeys(chromedp.ID("key-name"), "No script"))
	submitLoad := func(selector string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(selector)))); err != nil {
			t.Fatal(err)
		}
	}
	submitLoad(`#create-key-submit`)
	wantText(t, ctx, "Your new key “No script”", "sk_test_")
	submitLoad(`#key-table tr:first-child a`)
	wantText(t, ctx, "API key No script")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#revoke-key input[name=confirm]`)))
	submitLoad(`#revoke-key button[type=submit]`)
	wantText(t, ctx, "The key is revoked", "revoked")
}
