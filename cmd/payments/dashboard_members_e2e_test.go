package main

import (
	"bytes"
	"context"
	"io"
	nethttp "net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The dashboard's team members in a real browser against the real binary:
// the setup link the first start prints makes the first owner; the owner
// invites a viewer through a one-time link; the viewer cannot manage the
// team; a form without its CSRF token is refused; wrong passwords lock a
// member out; sign-out ends the session.
func TestDashboardMembers(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	p := startReady(t, t.TempDir())
	setupURL := p.stdoutValue("dashboard_setup_url")
	base := "http://" + p.addr
	if !strings.HasPrefix(setupURL, base+"/dashboard/setup/") {
		t.Fatalf("setup link %q is not under %s", setupURL, base)
	}
	const (
		ownerEmail     = "owner@merchant.example"
		ownerPassword  = "violet tractor sings at dawn"
		viewerEmail    = "viewer@merchant.example"
		viewerPassword = "seventeen quiet lanterns"
	)

	// The first owner sets a password through the setup link; a common
	// one is refused first.
	first := newTab(t)
	do(t, first, chromedp.Navigate(setupURL))
	waitFor(t, first, `document.readyState === "complete"`)
	wantText(t, first, "Set up the dashboard's first owner")
	screenshot(t, first, "setup")
	dashFill(t, first, map[string]string{"email": ownerEmail, "password": "password1234", "confirm": "password1234"})
	dashSubmit(t, first, `main form button[type=submit]`)
	wantText(t, first, "one of the most common passwords")
	owner := dashboardSetUpOwner(t, p, ownerEmail, ownerPassword)
	do(t, owner, chromedp.Navigate(base+"/dashboard/team"))
	waitFor(t, owner, `document.readyState === "complete" && !!document.getElementById("members")`)
	wantText(t, owner, ownerEmail, "Invite a member")
	if eval[bool](t, owner, `document.cookie.includes("dashboard_session")`) {
		t.Fatal("the session cookie is readable by the page's scripts")
	}

	// A form stripped of its CSRF token is refused.
	do(t, owner, chromedp.Evaluate[chromedp.Void](`document.querySelector('#invite input[name=csrf]').remove()`))
	dashFill(t, owner, map[string]string{"invite-email": viewerEmail})
	dashSubmit(t, owner, `#invite button[type=submit]`)
	wantText(t, owner, "This form expired")

	// With it, the invitation's one-time link is shown.
	link := dashboardInvite(t, owner, base, viewerEmail, "viewer")
	screenshot(t, owner, "team")

	// The viewer joins, and sees the team without the owner's forms; a
	// crafted invitation with the viewer's own CSRF token is refused.
	viewer := dashboardJoin(t, link, viewerPassword, "You are invited as viewer")
	cookies, err := chromedp.Call(viewer, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/dashboard/team"}})
	if err != nil {
		t.Fatal(err)
	}
	var sessionToken string
	for _, c := range cookies.Cookies {
		if c.Name == "dashboard_session" {
			sessionToken = c.Value
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax || c.Path != "/dashboard" {
				t.Fatalf("session cookie %+v", c)
			}
		}
	}
	if sessionToken == "" {
		t.Fatal("no session cookie after joining")
	}
	do(t, viewer, chromedp.Navigate(base+"/dashboard/team"))
	waitFor(t, viewer, `document.readyState === "complete" && !!document.getElementById("members")`)
	wantText(t, viewer, viewerEmail, "viewer")
	if eval[bool](t, viewer, `!!document.getElementById("invite") || document.querySelectorAll("form[action*='/members/']").length > 0`) {
		t.Fatal("a viewer is shown the owner's forms")
	}
	do(t, viewer, chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.createElement("form");
		f.method = "post"; f.action = "/dashboard/team/invitations";
		for (const [k, v] of [["csrf", document.querySelector("header input[name=csrf]").value], ["email", "x@merchant.example"], ["role", "owner"]]) {
			const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; f.append(i);
		}
		f.id = "crafted"; document.body.append(f);
	})()`))
	dashSubmit(t, viewer, `#crafted`)
	wantText(t, viewer, "Only an owner manages the team")

	// Wrong passwords lock the viewer out, the right one included then
	// (at phone width).
	guesser := newTab(t)
	do(t, guesser, chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile))
	do(t, guesser, chromedp.Navigate(base+"/dashboard/sign-in"))
	waitFor(t, guesser, `document.readyState === "complete"`)
	for i := 0; i < 5; i++ {
		dashFill(t, guesser, map[string]string{"email": viewerEmail, "password": "not the password " + string(rune('a'+i))})
		dashSubmit(t, guesser, `main form button[type=submit]`)
		wantText(t, guesser, "Wrong email or password")
	}
	dashFill(t, guesser, map[string]string{"email": viewerEmail, "password": viewerPassword})
	dashSubmit(t, guesser, `main form button[type=submit]`)
	wantText(t, guesser, "locked")
	screenshot(t, guesser, "locked")

	// The owner signs out: the session ends, and the team page sends the
	// browser to the sign-in page.
	dashSubmit(t, owner, `header form button[type=submit]`)
	waitLocation(t, owner, base+"/dashboard/sign-in")
	wantText(t, owner, "You are signed out")
	do(t, owner, chromedp.Navigate(base+"/dashboard/team"))
	waitLocation(t, owner, base+"/dashboard/sign-in")

	// And signs in again with the password.
	dashboardSignIn(t, owner, ownerEmail, ownerPassword)
	waitLocation(t, owner, base+"/dashboard/team")
	waitFor(t, owner, `document.readyState === "complete" && !!document.getElementById("members")`)
	wantText(t, owner, viewerEmail)

	// No password or session token is in the node's files (the log, the
	// state, the request log): only their hashes are.
	filepath.Walk(p.dataDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		raw, _ := os.ReadFile(path)
		for _, secret := range []string{ownerPassword, viewerPassword, "password1234", sessionToken} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s holds a password or a session token", path)
			}
		}
		return nil
	})
}

// fill sets form fields by element id.
func dashFill(t *testing.T, ctx context.Context, values map[string]string) {
	t.Helper()
	for id, v := range values {
		do(t, ctx, chromedp.SetValue(chromedp.ID(id), v))
	}
}

// submitForm clicks a submit button (or submits a form) and waits for
// the page that answers to load.
func dashSubmit(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__before = true`))
	if strings.HasPrefix(selector, "#crafted") {
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#crafted").submit()`))
	} else {
		do(t, ctx, chromedp.Click(chromedp.CSS(selector)))
	}
	waitFor(t, ctx, `!window.__before && document.readyState === "complete"`)
}

// Members and sessions are replicated: the first owner is set up through
// one follower, signs in through the other, and the session holds on
// every node.
func TestDashboardMembersCluster(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	procs := startCluster(t, 3)
	leader, followers := roles(t, procs)
	_, token, _ := strings.Cut(leader.stdoutValue("dashboard_setup_url"), "/dashboard/setup/")
	jar, err := cookiejar.New(nil) // cookies are per host, not port: one jar for every node
	if err != nil {
		t.Fatal(err)
	}
	client := &nethttp.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse }}
	csrfOf := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	page := func(method, addr, path string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := nethttp.NewRequest(method, "http://"+addr+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	csrf := func(body string) string {
		m := csrfOf.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no CSRF token in %s", body)
		}
		return m[1]
	}
	const email, password = "owner@cluster.example", "violet tractor sings at dawn"
	st, body := page("GET", followers[0].addr, "/dashboard/setup/"+token, nil)
	if st != 200 {
		t.Fatalf("setup page through a follower: %d %s", st, body)
	}
	if st, body = page("POST", followers[0].addr, "/dashboard/setup/"+token, url.Values{"csrf": {csrf(body)},
		"email": {email}, "password": {password}, "confirm": {password}}); st != 303 {
		t.Fatalf("setup through a follower: %d %s", st, body)
	}
	// Sign out, then in again through the other follower.
	_, body = page("GET", followers[1].addr, "/dashboard/team", nil)
	if st, body = page("POST", followers[1].addr, "/dashboard/sign-out", url.Values{"csrf": {csrf(body)}}); st != 303 {
		t.Fatalf("sign-out through a follower: %d %s", st, body)
	}
	_, body = page("GET", followers[1].addr, "/dashboard/sign-in", nil)
	if st, body = page("POST", followers[1].addr, "/dashboard/sign-in", url.Values{"csrf": {csrf(body)},
		"email": {email}, "password": {password}}); st != 303 {
		t.Fatalf("sign-in through a follower: %d %s", st, body)
	}
	for _, p := range procs {
		if st, body = page("GET", p.addr, "/dashboard/team", nil); st != 200 || !strings.Contains(body, email) {
			t.Fatalf("the team page through %s: %d %s", p.addr, st, body)
		}
	}
}

// Helpers for the dashboard's browser tests.

// dashboardInvite makes an invitation of email to role on the Team page
// open in an owner's tab, and returns its one-time link.
func dashboardInvite(t *testing.T, owner context.Context, base, email, role string) string {
	t.Helper()
	do(t, owner, chromedp.Navigate(base+"/dashboard/team"))
	waitFor(t, owner, `document.readyState === "complete" && !!document.getElementById("invite")`)
	dashFill(t, owner, map[string]string{"invite-email": email})
	do(t, owner, chromedp.SetValue(chromedp.ID("invite-role"), role))
	dashSubmit(t, owner, `#invite button[type=submit]`)
	waitFor(t, owner, `!!document.getElementById("invitation-link")`)
	link := eval[string](t, owner, `document.getElementById("invitation-link").value`)
	if !strings.HasPrefix(link, base+"/dashboard/invitations/") {
		t.Fatalf("invitation link %q", link)
	}
	return link
}

// dashboardJoin accepts an invitation in a new tab with password, the page
// first showing each of want; it returns the tab, signed in.
func dashboardJoin(t *testing.T, link, password string, want ...string) context.Context {
	t.Helper()
	tab := newTab(t)
	do(t, tab, chromedp.Navigate(link))
	waitFor(t, tab, `document.readyState === "complete" && !!document.getElementById("confirm")`)
	wantText(t, tab, want...)
	dashFill(t, tab, map[string]string{"password": password, "confirm": password})
	dashSubmit(t, tab, `main form button[type=submit]`)
	waitFor(t, tab, `location.pathname === "/dashboard"`) // signed in: the home page
	return tab
}

// dashboardSignIn signs in on the sign-in page open in tab.
func dashboardSignIn(t *testing.T, tab context.Context, email, password string) {
	t.Helper()
	waitFor(t, tab, `document.readyState === "complete" && !!document.getElementById("email") && !!document.getElementById("password")`)
	dashFill(t, tab, map[string]string{"email": email, "password": password})
	dashSubmit(t, tab, `main form button[type=submit]`)
}

// dashboardSetUpOwner takes the setup link p printed to its first owner,
// with email and password, in a new tab, and returns the tab, signed in.
func dashboardSetUpOwner(t *testing.T, p *proc, email, password string) context.Context {
	t.Helper()
	setupURL := p.stdoutValue("dashboard_setup_url")
	tab := newTab(t)
	do(t, tab, chromedp.Navigate(setupURL))
	waitFor(t, tab, `document.readyState === "complete" && !!document.getElementById("confirm")`)
	dashFill(t, tab, map[string]string{"email": email, "password": password, "confirm": password})
	dashSubmit(t, tab, `main form button[type=submit]`)
	waitFor(t, tab, `location.pathname === "/dashboard"`) // signed in: the home page
	return tab
}

// A viewer changes their own password on the Account page, reached from
// their address at the top of every page: a wrong current password is
// refused on the page; the change keeps the tab signed in, and from then
// on only the new password signs in.
func TestDashboardChangesOwnPassword(t *testing.T) {
	e := newDashEnv(t)
	base := "http://" + e.p.addr
	ctx := e.open(e.org, "viewer", "/dashboard")
	clickThrough(t, ctx, `#account-link`)
	waitLocation(t, ctx, base+"/dashboard/account")
	wantText(t, ctx, "viewer@merchant.example", "Change your password")
	const newPassword = "amber lantern drifts downstream"
	fill := func(current string) {
		t.Helper()
		do(t, ctx, chromedp.SendKeys(`#change-password input[name=current]`, current),
			chromedp.SendKeys(`#change-password input[name=password]`, newPassword),
			chromedp.SendKeys(`#change-password input[name=confirm]`, newPassword))
		sendForm(t, ctx, "change-password")
	}
	fill("not my password")
	wantText(t, ctx, "The current password is wrong; nothing was changed.")
	fill(memberPassword)
	wantText(t, ctx, "Your password is changed.")
	waitLocation(t, ctx, base+"/dashboard/account?done=password")
	screenshot(t, ctx, "account")

	signIn := func(password string) int {
		t.Helper()
		hc := formClient(t)
		csrf := formCSRF(t, hc, base+"/dashboard/sign-in")
		st, _, _ := postForm(t, hc, base+"/dashboard/sign-in", url.Values{"csrf": {csrf}, "email": {"viewer@merchant.example"}, "password": {password}})
		return st
	}
	if st := signIn(memberPassword); st != 401 {
		t.Fatalf("the old password: %d, want 401", st)
	}
	if st := signIn(newPassword); st != 303 {
		t.Fatalf("the new password: %d, want 303", st)
	}
	e.goTo(ctx, "/dashboard/payouts")
	wantText(t, ctx, "viewer@merchant.example")
}

// The only owner lost their password: the operator's reset link opens a
// page where they choose a new one, and they are signed in with it; the
// old password no longer works.
func TestDashboardPasswordResetLink(t *testing.T) {
	e := newDashEnv(t)
	base := "http://" + e.p.addr
	e.session(e.org, "owner")
	var out struct {
		Link struct {
			URL   string `json:"url"`
			Email string `json:"email"`
		} `json:"dashboardPasswordResetLink"`
	}
	e.api("POST", "/v1/organizations/"+e.org+"/dashboard-password-reset-link", map[string]any{"email": "owner@merchant.example"}, &out, 201)
	u, err := url.Parse(out.Link.URL)
	if err != nil || !strings.HasPrefix(u.Path, "/dashboard/reset/") || out.Link.Email != "owner@merchant.example" {
		t.Fatalf("the reset link: %+v %v", out, err)
	}
	ctx := newTab(t)
	do(t, ctx, chromedp.Navigate(base+u.Path))
	waitFor(t, ctx, `document.readyState === "complete" && document.querySelector("form") !== null`)
	wantText(t, ctx, "Choose a new password", "(owner)")
	if v := eval[string](t, ctx, `document.getElementById("email").value`); v != "owner@merchant.example" {
		t.Fatalf("the reset page's address: %q", v)
	}
	const newPassword = "amber lantern drifts downstream"
	do(t, ctx, chromedp.SendKeys(`#password`, newPassword), chromedp.SendKeys(`#confirm`, newPassword),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("form button[type=submit]").click()`))
	waitLocation(t, ctx, base+"/dashboard")
	waitFor(t, ctx, `document.readyState === "complete" && document.getElementById("main") !== null`)
	wantText(t, ctx, "owner@merchant.example")
	screenshot(t, ctx, "reset")

	for password, want := range map[string]int{memberPassword: 401, newPassword: 303} {
		hc := formClient(t)
		csrf := formCSRF(t, hc, base+"/dashboard/sign-in")
		if st, _, _ := postForm(t, hc, base+"/dashboard/sign-in", url.Values{"csrf": {csrf}, "email": {"owner@merchant.example"}, "password": {password}}); st != want {
			t.Fatalf("signing in with %q: %d, want %d", password, st, want)
		}
	}
}

// A tab left alone past --dashboard-idle-timeout finds itself signed out,
// and the sign-in page says why.
func TestDashboardIdleTimeoutSignsOut(t *testing.T) {
	e := newDashEnv(t, "--dashboard-idle-timeout", "2s")
	base := "http://" + e.p.addr
	ctx := e.open(e.org, "viewer", "/dashboard/payouts")
	wantText(t, ctx, "viewer@merchant.example")
	time.Sleep(3 * time.Second)
	do(t, ctx, chromedp.Reload())
	waitLocation(t, ctx, base+"/dashboard/sign-in?idle=1")
	waitFor(t, ctx, `document.readyState === "complete"`)
	wantText(t, ctx, "You were signed out after 2 seconds without activity")
}
