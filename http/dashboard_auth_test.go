package http_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"html"
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

	"payments/actors/app"
	"payments/ledger/team"
)

// dashClient is a cookie-keeping client that does not follow redirects, so
// that a test sees each answer.
type dashClient struct {
	t      *testing.T
	base   string
	client *nethttp.Client
}

func newDashClient(t *testing.T, st *stack) *dashClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &dashClient{t: t, base: "http://" + st.addr, client: &nethttp.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse }}}
}

type dashPage struct {
	status int
	header nethttp.Header
	body   string
}

var dashCSRFField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the page's first form.
func (p dashPage) csrf(t *testing.T) string {
	t.Helper()
	m := dashCSRFField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token in the page: %s", p.body)
	}
	return m[1]
}

func (b *dashClient) do(method, path string, form url.Values, headers ...string) dashPage {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := nethttp.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return dashPage{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *dashClient) get(path string) dashPage { b.t.Helper(); return b.do("GET", path, nil) }

func (b *dashClient) post(path string, form url.Values, headers ...string) dashPage {
	b.t.Helper()
	return b.do("POST", path, form, headers...)
}

func wantDashStatus(t *testing.T, what string, p dashPage, status int) {
	t.Helper()
	if p.status != status {
		t.Fatalf("%s: %d, want %d: %s", what, p.status, status, p.body)
	}
}

const dashOwnerPassword = "violet tractor sings at dawn"

// setUpOwner takes the first organization's setup link to a signed-in
// owner.
func setUpDashboardOwner(t *testing.T, st *stack, email string) *dashClient {
	t.Helper()
	token, err := st.sys.EnsureDashboardSetup(t.Context())
	if err != nil || token == "" {
		t.Fatalf("no setup link: %q %v", token, err)
	}
	b := newDashClient(t, st)
	form := b.get("/dashboard/setup/" + token)
	wantDashStatus(t, "the setup page", form, 200)
	if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("setup dashPage CSP %q", csp)
	}
	csrf := form.csrf(t)
	// A common password, then a form without its CSRF token, are refused.
	wantDashStatus(t, "a common password", b.post("/dashboard/setup/"+token, url.Values{"csrf": {csrf}, "email": {email},
		"password": {"Password123"}, "confirm": {"Password123"}}), 400)
	wantDashStatus(t, "setup without the CSRF token", b.post("/dashboard/setup/"+token, url.Values{"email": {email},
		"password": {dashOwnerPassword}, "confirm": {dashOwnerPassword}}), 403)
	done := b.post("/dashboard/setup/"+token, url.Values{"csrf": {csrf}, "email": {email}, "password": {dashOwnerPassword}, "confirm": {dashOwnerPassword}})
	wantDashStatus(t, "the setup", done, 303)
	cookie := done.header.Values("Set-Cookie")
	var session string
	for _, c := range cookie {
		if strings.HasPrefix(c, "dashboard_session=") {
			session = c
		}
	}
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "path=/dashboard", "max-age="} {
		if !strings.Contains(session, attr) {
			t.Fatalf("session cookie %q lacks %s", session, attr)
		}
	}
	if strings.Contains(session, "Secure") {
		t.Fatalf("session cookie %q is Secure over plain http", session)
	}
	// The link works once.
	wantDashStatus(t, "the setup link again", b.get("/dashboard/setup/"+token), 404)
	return b
}

// setUpOrgBOwner creates a second organization, Org B, with the
// operator's key, and signs in its first owner, email, through a setup
// link of its own (the invitation invitationID, whose token is token).
func setUpOrgBOwner(t *testing.T, st *stack, email, invitationID, token string) *dashClient {
	t.Helper()
	r := st.do("POST", "/v1/organizations", st.key, map[string]any{"name": "Org B", "country": "GH", "timezone": "Africa/Accra", "defaultCurrency": "GHS"})
	if r.status != 201 {
		t.Fatalf("organization B: %d %s", r.status, r.body)
	}
	orgB := r.json(t)["organization"].(map[string]any)["id"].(string)
	hash := sha256.Sum256([]byte(token))
	now := time.Now()
	if rep := st.sys.Propose(t.Context(), &team.CreateInvitation{At: now.UnixMilli(), ID: invitationID, OrgID: orgB, Role: team.RoleOwner,
		Setup: true, TokenHash: string(hash[:]), ExpiresAt: now.Add(time.Hour).UnixMilli()}); rep.Err != nil || rep.Result.Err != nil {
		t.Fatalf("org B's setup link: %v %v", rep.Err, rep.Result.Err)
	}
	owner := newDashClient(t, st)
	form := owner.get("/dashboard/setup/" + token)
	wantDashStatus(t, "org B's setup page", form, 200)
	wantDashStatus(t, "org B's setup", owner.post("/dashboard/setup/"+token, url.Values{"csrf": {form.csrf(t)}, "email": {email},
		"password": {dashOwnerPassword}, "confirm": {dashOwnerPassword}}), 303)
	return owner
}

func TestDashboardSignInTeamAndLockOut(t *testing.T) {
	st := newStack(t, stackOptions{})
	owner := setUpDashboardOwner(t, st, "owner@golden.example")

	// Signed in: the Team dashPage lists the owner, with the owner's forms.
	teamPage := owner.get("/dashboard/team")
	wantDashStatus(t, "the team page", teamPage, 200)
	if !strings.Contains(teamPage.body, "owner@golden.example") || !strings.Contains(teamPage.body, `id="invite"`) {
		t.Fatalf("team page: %s", teamPage.body)
	}
	csrf := teamPage.csrf(t)

	// An invitation: refused without the token, from another site, and
	// for an unknown role; made with them.
	invite := url.Values{"csrf": {csrf}, "email": {"Viewer@Golden.example"}, "role": {"viewer"}}
	wantDashStatus(t, "an invitation without the CSRF token", owner.post("/dashboard/team/invitations", url.Values{"email": {"v@golden.example"}, "role": {"viewer"}}), 403)
	wantDashStatus(t, "an invitation from another site", owner.post("/dashboard/team/invitations", invite, "Sec-Fetch-Site", "cross-site"), 403)
	wantDashStatus(t, "an invitation to an unknown role", owner.post("/dashboard/team/invitations", url.Values{"csrf": {csrf}, "email": {"x@golden.example"}, "role": {"admin"}}), 400)
	made := owner.post("/dashboard/team/invitations", invite)
	wantDashStatus(t, "the invitation", made, 200)
	link := regexp.MustCompile(`/dashboard/invitations/([A-Za-z0-9_-]{43})`).FindStringSubmatch(made.body)
	if link == nil {
		t.Fatalf("no invitation link shown: %s", made.body)
	}
	if strings.Contains(owner.get("/dashboard/team").body, link[1]) {
		t.Fatal("the invitation link is shown again")
	}

	// The viewer joins through the link and is signed in.
	viewer := newDashClient(t, st)
	form := viewer.get(link[0])
	wantDashStatus(t, "the invitation page", form, 200)
	const viewerPassword = "seventeen quiet lanterns"
	wantDashStatus(t, "different passwords", viewer.post(link[0], url.Values{"csrf": {form.csrf(t)}, "password": {viewerPassword}, "confirm": {viewerPassword + "x"}}), 400)
	wantDashStatus(t, "joining", viewer.post(link[0], url.Values{"csrf": {form.csrf(t)}, "password": {viewerPassword}, "confirm": {viewerPassword}}), 303)
	vteam := viewer.get("/dashboard/team")
	wantDashStatus(t, "the viewer's team page", vteam, 200)
	if strings.Contains(vteam.body, `id="invite"`) || !strings.Contains(vteam.body, "viewer@golden.example") {
		t.Fatalf("viewer's team page: %s", vteam.body)
	}
	// A viewer cannot invite, even with a valid token.
	wantDashStatus(t, "a viewer's invitation", viewer.post("/dashboard/team/invitations", url.Values{"csrf": {vteam.csrf(t)}, "email": {"y@golden.example"}, "role": {"owner"}}), 403)
	// The owner's CSRF token is not the viewer's.
	wantDashStatus(t, "another session's CSRF token", viewer.post("/dashboard/team/invitations", url.Values{"csrf": {csrf}, "email": {"y@golden.example"}, "role": {"owner"}}), 403)

	// Sign-in: wrong passwords lock the viewer out, even from the right one.
	stranger := newDashClient(t, st)
	signIn := stranger.get("/dashboard/sign-in")
	wantDashStatus(t, "the sign-in page", signIn, 200)
	fcsrf := signIn.csrf(t)
	wantDashStatus(t, "a sign-in without the CSRF token", stranger.post("/dashboard/sign-in", url.Values{"email": {"viewer@golden.example"}, "password": {viewerPassword}}), 403)
	wantDashStatus(t, "an unknown address", stranger.post("/dashboard/sign-in", url.Values{"csrf": {fcsrf}, "email": {"nobody@golden.example"}, "password": {viewerPassword}}), 401)
	var failedID string
	for i := 0; i < team.SignInFailuresFree; i++ {
		p := stranger.post("/dashboard/sign-in", url.Values{"csrf": {fcsrf}, "email": {"viewer@golden.example"}, "password": {"wrong password " + string(rune('a'+i))}})
		wantDashStatus(t, "a wrong password", p, 401)
		failedID = p.header.Get("x-request-id")
	}
	locked := stranger.post("/dashboard/sign-in", url.Values{"csrf": {fcsrf}, "email": {"viewer@golden.example"}, "password": {viewerPassword}})
	wantDashStatus(t, "the right password while locked", locked, 429)
	if locked.header.Get("Retry-After") == "" || !strings.Contains(locked.body, "locked") {
		t.Fatalf("lock-out answer: %v %s", locked.header, locked.body)
	}
	// The owner still signs in, in a dashClient of their own.
	again := newDashClient(t, st)
	ownerIn := again.post("/dashboard/sign-in?next=%2Fdashboard%2Fteam", url.Values{"csrf": {again.get("/dashboard/sign-in").csrf(t)},
		"email": {"OWNER@golden.example"}, "password": {dashOwnerPassword}})
	wantDashStatus(t, "the owner's sign-in", ownerIn, 303)
	if loc := ownerIn.header.Get("Location"); loc != "/dashboard/team" {
		t.Fatalf("signed in to %q, not where the sign-in was asked to go", loc)
	}
	signInID := ownerIn.header.Get("x-request-id")
	ateam := again.get("/dashboard/team")
	wantDashStatus(t, "the owner's team dashPage in a second session", ateam, 200)

	// The owner makes the viewer a developer; removes them; their
	// session ends with it.
	var viewerID string
	org, _ := st.sys.Reader().FirstOrganization()
	for _, m := range team.Members(st.sys.Reader(), org.ID) {
		if m.Email == "viewer@golden.example" {
			viewerID = m.ID
		}
	}
	wantDashStatus(t, "a role change", again.post("/dashboard/team/members/"+viewerID+"/role", url.Values{"csrf": {ateam.csrf(t)}, "role": {"developer"}}), 303)
	if m, _ := team.MemberByID(st.sys.Reader(), viewerID); m.Role != team.RoleDeveloper {
		t.Fatalf("role is %s", m.Role)
	}
	wantDashStatus(t, "the removal", again.post("/dashboard/team/members/"+viewerID+"/remove", url.Values{"csrf": {ateam.csrf(t)}}), 303)
	if p := viewer.get("/dashboard/team"); p.status != 303 || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/sign-in") {
		t.Fatalf("a removed member's session still works: %d %v", p.status, p.header)
	}

	// Sign-out needs the token, then ends the session.
	wantDashStatus(t, "a sign-out without the CSRF token", again.post("/dashboard/sign-out", url.Values{}), 403)
	wantDashStatus(t, "the sign-out", again.post("/dashboard/sign-out", url.Values{"csrf": {ateam.csrf(t)}}), 303)
	if p := again.get("/dashboard/team"); p.status != 303 {
		t.Fatalf("the session outlived its sign-out: %d", p.status)
	}

	// The request log: the member is the actor of what they did; a failed
	// sign-in is on the organization's record; no password anywhere.
	rec := waitRecord(t, st, st.addr, st.key, teamPage.header.Get("x-request-id"))
	actor, _ := rec["actor"].(map[string]any)
	if actor["type"] != "member" || actor["id"] == nil || rec["keyId"] != nil {
		t.Fatalf("a member's request recorded as %v", rec)
	}
	inv := waitRecord(t, st, st.addr, st.key, made.header.Get("x-request-id"))
	if body, _ := inv["body"].(map[string]any); body == nil || body["role"] != "viewer" || body["csrf"] != nil {
		t.Fatalf("an invitation's form recorded as %v", inv["body"])
	}
	signedIn := waitRecord(t, st, st.addr, st.key, signInID)
	if body, _ := signedIn["body"].(map[string]any); body == nil || body["password"] != nil || body["csrf"] != nil || signedIn["status"] != 303.0 {
		t.Fatalf("a sign-in recorded as %v", signedIn)
	}
	failed := waitRecord(t, st, st.addr, st.key, failedID)
	factor, _ := failed["actor"].(map[string]any)
	if failed["status"] != 401.0 || factor["type"] != "member" || factor["id"] != viewerID || failed["body"] != nil {
		t.Fatalf("a failed sign-in recorded as %v", failed)
	}
	st.requestLog.Close() // flushes; the stack's cleanup closes it again harmlessly
	filepath.Walk(st.requestLogDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		raw, _ := os.ReadFile(path)
		for _, secret := range []string{dashOwnerPassword, viewerPassword, link[1]} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s holds a secret", path)
			}
		}
		return nil
	})
}

// A member of one organization sees and changes nothing of another's.
func TestDashboardTeamIsolation(t *testing.T) {
	st := newStack(t, stackOptions{})
	ownerA := setUpDashboardOwner(t, st, "a@golden.example")
	ownerB := setUpOrgBOwner(t, st, "b@golden.example", "inv_orgb", "setup-link-token-of-org-b-0123456789abcdefg")

	teamB := ownerB.get("/dashboard/team")
	if strings.Contains(teamB.body, "a@golden.example") || !strings.Contains(teamB.body, "b@golden.example") {
		t.Fatalf("org B's team page: %s", teamB.body)
	}
	a, _ := team.MemberByEmail(st.sys.Reader(), "a@golden.example")
	wantDashStatus(t, "B's owner demoting A's owner", ownerB.post("/dashboard/team/members/"+a.ID+"/role", url.Values{"csrf": {teamB.csrf(t)}, "role": {"viewer"}}), 404)
	wantDashStatus(t, "B's owner removing A's owner", ownerB.post("/dashboard/team/members/"+a.ID+"/remove", url.Values{"csrf": {teamB.csrf(t)}}), 404)
	if m, _ := team.MemberByID(st.sys.Reader(), a.ID); m.Role != team.RoleOwner || m.Removed {
		t.Fatalf("A's owner changed: %+v", m)
	}
	teamA := ownerA.get("/dashboard/team")
	if strings.Contains(teamA.body, "b@golden.example") {
		t.Fatal("org A's team dashPage shows org B's member")
	}
}

// Served over https (behind a proxy that ends TLS), the cookies are Secure.
func TestDashboardCookiesSecureOverHTTPS(t *testing.T) {
	st := newStack(t, stackOptions{publicBase: "https://pay.example"})
	p := newDashClient(t, st).get("/dashboard/sign-in")
	wantDashStatus(t, "the sign-in page", p, 200)
	c := p.header.Get("Set-Cookie")
	if !strings.HasPrefix(c, "dashboard_form=") || !strings.Contains(c, "secure") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
		t.Fatalf("form cookie over https: %q", c)
	}
	if cc := p.header.Get("Cache-Control"); cc != "no-store" || p.header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("sign-in dashPage headers: %v", p.header)
	}
}

// The dashboard is limited per client address like the checkout: past the
// limit a dashPage says so, with Retry-After.
func TestDashboardLimitedPerAddress(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1})
	b := newDashClient(t, st)
	for i := 0; i < 20; i++ {
		p := b.get("/dashboard/sign-in")
		if p.status == 429 {
			if p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "Too many requests") {
				t.Fatalf("limited: %v %s", p.header, p.body)
			}
			return
		}
		wantDashStatus(t, "the sign-in page", p, 200)
	}
	t.Fatal("20 pages in a row at a limit of 1 a second")
}

// The operator makes a setup link for an organization made through the
// API, which then has its first owner; a second link is refused.
func TestDashboardSetupLinkForNewOrganization(t *testing.T) {
	st := newStack(t, stackOptions{publicBase: "http://pay.example"})
	r := st.do("POST", "/v1/organizations", st.key, map[string]any{"name": "Org C"})
	if r.status != 201 {
		t.Fatalf("organization: %d %s", r.status, r.body)
	}
	created := r.json(t)
	orgC := created["organization"].(map[string]any)["id"].(string)
	keyC := created["key"].(map[string]any)["secret"].(string)
	if r := st.do("POST", "/v1/organizations/"+orgC+"/dashboard-setup-link", keyC, nil); r.status != 403 {
		t.Fatalf("a merchant's key made a setup link: %d %s", r.status, r.body)
	}
	if r := st.do("POST", "/v1/organizations/org_nope/dashboard-setup-link", st.key, nil); r.status != 404 {
		t.Fatalf("a setup link for no organization: %d %s", r.status, r.body)
	}
	r = st.do("POST", "/v1/organizations/"+orgC+"/dashboard-setup-link", st.key, nil)
	if r.status != 201 || r.header["cache-control"] != "no-store" {
		t.Fatalf("setup link: %d %v %s", r.status, r.header, r.body)
	}
	link := r.json(t)["dashboardSetupLink"].(map[string]any)
	path, ok := strings.CutPrefix(link["url"].(string), "http://pay.example")
	if !ok || link["organizationId"] != orgC || link["expiresAt"] == nil {
		t.Fatalf("setup link %v", link)
	}
	b := newDashClient(t, st)
	form := b.get(path)
	wantDashStatus(t, "the setup page", form, 200)
	if !strings.Contains(form.body, "Org C") {
		t.Fatalf("the setup page does not name the organization: %s", form.body)
	}
	wantDashStatus(t, "the setup", b.post(path, url.Values{"csrf": {form.csrf(t)}, "email": {"c@golden.example"},
		"password": {dashOwnerPassword}, "confirm": {dashOwnerPassword}}), 303)
	if m, ok := team.MemberByEmail(st.sys.Reader(), "c@golden.example"); !ok || m.OrgID != orgC || m.Role != "owner" {
		t.Fatalf("org C's owner: %+v %v", m, ok)
	}
	if r := st.do("POST", "/v1/organizations/"+orgC+"/dashboard-setup-link", st.key, nil); r.status != 409 {
		t.Fatalf("a setup link for an organization with an owner: %d %s", r.status, r.body)
	}
}

// A member changes their password on the Account page: a wrong current
// password changes nothing and counts toward the lock-out, a weak or
// mistyped new one is refused; the change keeps the session it was made
// from, ends the member's others, and only the new password signs in. No
// password of the form reaches the request log.
func TestDashboardChangePassword(t *testing.T) {
	st := newStack(t, stackOptions{})
	owner := setUpDashboardOwner(t, st, "owner@account.example")
	signIn := func(b *dashClient, password string) int {
		t.Helper()
		form := b.get("/dashboard/sign-in")
		wantDashStatus(t, "the sign-in page", form, 200)
		return b.post("/dashboard/sign-in", url.Values{"csrf": {form.csrf(t)}, "email": {"owner@account.example"}, "password": {password}}).status
	}
	other := newDashClient(t, st) // the same member on another browser
	if got := signIn(other, dashOwnerPassword); got != 303 {
		t.Fatalf("signing in on the other browser: %d", got)
	}
	wantDashStatus(t, "the other browser's session", other.get("/dashboard"), 200)

	page := owner.get("/dashboard/account")
	wantDashStatus(t, "the account page", page, 200)
	if !strings.Contains(page.body, `id="change-password"`) || !strings.Contains(page.body, "owner@account.example") {
		t.Fatalf("the account page: %s", page.body)
	}
	csrf := page.csrf(t)
	const newPassword = "amber lantern drifts downstream"
	change := func(current, password, confirm string) dashPage {
		t.Helper()
		return owner.post("/dashboard/account/password", url.Values{"csrf": {csrf}, "current": {current}, "password": {password}, "confirm": {confirm}})
	}
	for _, c := range []struct {
		name                       string
		current, password, confirm string
		status                     int
		says                       string
	}{
		{"a wrong current password", "not my password at all", newPassword, newPassword, 403, "The current password is wrong"},
		{"two new passwords that differ", dashOwnerPassword, newPassword, newPassword + "!", 400, "The two new passwords differ"},
		{"a common new password", dashOwnerPassword, "password1234", "password1234", 400, "one of the most common passwords"},
		{"a short new password", dashOwnerPassword, "short", "short", 400, "at least 10 characters"},
		{"the current one again", dashOwnerPassword, dashOwnerPassword, dashOwnerPassword, 400, "is the current one"},
	} {
		p := change(c.current, c.password, c.confirm)
		wantDashStatus(t, c.name, p, c.status)
		if !strings.Contains(p.body, c.says) {
			t.Fatalf("%s: the page does not say %q: %s", c.name, c.says, p.body)
		}
	}
	wantDashStatus(t, "a change without the CSRF token", owner.post("/dashboard/account/password",
		url.Values{"current": {dashOwnerPassword}, "password": {newPassword}, "confirm": {newPassword}}), 403)
	m, _ := team.MemberByEmail(st.sys.Reader(), "owner@account.example")
	if ok, _ := app.VerifyPassword(m.PasswordHash, dashOwnerPassword); !ok || m.FailedSignIns != 1 {
		t.Fatalf("after the refusals: the old password no longer signs in, or the wrong one was not counted (%d)", m.FailedSignIns)
	}

	done := change(dashOwnerPassword, newPassword, newPassword)
	wantDashStatus(t, "the change", done, 303)
	if loc := done.header.Get("Location"); loc != "/dashboard/account?done=password" {
		t.Fatalf("after the change, to %q", loc)
	}
	after := owner.get("/dashboard/account?done=password")
	wantDashStatus(t, "this session after the change", after, 200)
	if !strings.Contains(after.body, "Your password is changed") {
		t.Fatalf("the account page after the change: %s", after.body)
	}
	wantDashStatus(t, "the other browser after the change", other.get("/dashboard"), 303)
	if got := signIn(newDashClient(t, st), dashOwnerPassword); got != 401 {
		t.Fatalf("the old password signs in: %d", got)
	}
	m, _ = team.MemberByEmail(st.sys.Reader(), "owner@account.example")
	if m.FailedSignIns != 1 { // the old password's sign-in just now; the change cleared the one before
		t.Fatalf("%d failed sign-ins after the change and one wrong sign-in, want 1", m.FailedSignIns)
	}
	if got := signIn(newDashClient(t, st), newPassword); got != 303 {
		t.Fatalf("the new password does not sign in: %d", got)
	}

	// The request log has the member's changes, without a password.
	var r response
	if !eventually(10*time.Second, func() bool {
		r = st.do("GET", "/v1/requests?path=/dashboard/account/password", st.key, nil)
		return r.status == 200 && len(r.json(t)["data"].([]any)) >= 7
	}) {
		t.Fatalf("the request log lists the changes: %d %s", r.status, r.body)
	}
	for _, secret := range []string{dashOwnerPassword, newPassword, "not my password at all", "password1234", csrf} {
		if strings.Contains(string(r.body), secret) {
			t.Fatalf("the request log holds %q: %s", secret, r.body)
		}
	}
	if !strings.Contains(string(r.body), `"member"`) {
		t.Fatalf("the records do not name the member as their actor: %s", r.body)
	}

	// Guessing the current password from a signed-in session meets the
	// sign-in lock-out: locked, even the right one changes nothing.
	for i := range team.SignInFailuresFree {
		wantDashStatus(t, fmt.Sprint("wrong current password ", i+1), change("guess "+fmt.Sprint(i), "another fine password", "another fine password"), 403)
	}
	locked := change(newPassword, "another fine password", "another fine password")
	wantDashStatus(t, "the right password while locked", locked, 429)
	if locked.header.Get("Retry-After") == "" || !strings.Contains(locked.body, "locked") {
		t.Fatalf("the locked answer: %v %s", locked.header, locked.body)
	}
	if got := signIn(newDashClient(t, st), newPassword); got != 429 {
		t.Fatalf("signing in while locked: %d", got)
	}
}

// An organization's only owner who lost their password gets back in by
// the operator's reset link: only the operator's key makes one, only for
// a member of that organization; a newer link revokes the older; the link
// sets the password once, clears the lock-out and signs out the member's
// other sessions; the team page does not list it as an invitation.
func TestDashboardPasswordResetLink(t *testing.T) {
	st := newStack(t, stackOptions{publicBase: "http://pay.example"})
	owner := setUpDashboardOwner(t, st, "owner@reset.example")
	wantDashStatus(t, "the owner's session", owner.get("/dashboard"), 200)
	m, _ := team.MemberByEmail(st.sys.Reader(), "owner@reset.example")
	org := m.OrgID
	// Locked out by wrong passwords.
	stranger := newDashClient(t, st)
	form := stranger.get("/dashboard/sign-in")
	for i := range team.SignInFailuresFree {
		stranger.post("/dashboard/sign-in", url.Values{"csrf": {form.csrf(t)}, "email": {"owner@reset.example"}, "password": {fmt.Sprint("forgotten ", i)}})
	}

	r := st.do("POST", "/v1/organizations", st.key, map[string]any{"name": "Org R"})
	if r.status != 201 {
		t.Fatalf("organization: %d %s", r.status, r.body)
	}
	merchantKey := r.json(t)["key"].(map[string]any)["secret"].(string)
	reset := func(key, org, email string) response {
		t.Helper()
		return st.do("POST", "/v1/organizations/"+org+"/dashboard-password-reset-link", key, map[string]any{"email": email})
	}
	for _, c := range []struct {
		name      string
		key, org  string
		email     string
		status    int
		errorCode string
	}{
		{"a merchant's key", merchantKey, org, "owner@reset.example", 403, "forbidden"},
		{"no such organization", st.key, "org_nope", "owner@reset.example", 404, "not_found"},
		{"no member with the address", st.key, org, "nobody@reset.example", 404, "not_found"},
		{"no address", st.key, org, "", 400, "validation_error"},
	} {
		if r := reset(c.key, c.org, c.email); r.status != c.status || r.json(t)["error"] != c.errorCode {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	first := reset(st.key, org, "Owner@Reset.example")
	if first.status != 201 || first.header["cache-control"] != "no-store" {
		t.Fatalf("the first link: %d %v %s", first.status, first.header, first.body)
	}
	r = reset(st.key, org, "owner@reset.example")
	link := r.json(t)["dashboardPasswordResetLink"].(map[string]any)
	path, ok := strings.CutPrefix(link["url"].(string), "http://pay.example/dashboard/reset/")
	if r.status != 201 || !ok || link["organizationId"] != org || link["email"] != "owner@reset.example" || link["expiresAt"] == nil {
		t.Fatalf("the second link: %d %s", r.status, r.body)
	}
	firstPath := strings.TrimPrefix(first.json(t)["dashboardPasswordResetLink"].(map[string]any)["url"].(string), "http://pay.example")
	b := newDashClient(t, st)
	wantDashStatus(t, "the revoked first link", b.get(firstPath), 404)
	wantDashStatus(t, "a reset link under the invitations' path", b.get("/dashboard/invitations/"+path), 404)
	teamPage := owner.get("/dashboard/team")
	if strings.Contains(teamPage.body, "Pending invitations") {
		t.Fatalf("the team page lists the reset link as an invitation: %s", teamPage.body)
	}

	page := b.get("/dashboard/reset/" + path)
	wantDashStatus(t, "the reset page", page, 200)
	if !strings.Contains(page.body, "Choose a new password") || !strings.Contains(page.body, "owner@reset.example") {
		t.Fatalf("the reset page: %s", page.body)
	}
	const newPassword = "amber lantern drifts downstream"
	wantDashStatus(t, "a common password", b.post("/dashboard/reset/"+path, url.Values{"csrf": {page.csrf(t)},
		"password": {"password1234"}, "confirm": {"password1234"}}), 400)
	wantDashStatus(t, "the reset", b.post("/dashboard/reset/"+path, url.Values{"csrf": {page.csrf(t)},
		"password": {newPassword}, "confirm": {newPassword}}), 303)
	wantDashStatus(t, "the new session", b.get("/dashboard"), 200)
	wantDashStatus(t, "the owner's session from before", owner.get("/dashboard"), 303)
	wantDashStatus(t, "the link again", newDashClient(t, st).get("/dashboard/reset/"+path), 404)
	if m, _ := team.MemberByEmail(st.sys.Reader(), "owner@reset.example"); m.ID == "" || m.Role != "owner" || m.LockedUntil != 0 || m.FailedSignIns != 0 {
		t.Fatalf("the member after the reset: %+v", m)
	}
	signIn := newDashClient(t, st)
	form = signIn.get("/dashboard/sign-in")
	wantDashStatus(t, "signing in with the new password", signIn.post("/dashboard/sign-in", url.Values{"csrf": {form.csrf(t)},
		"email": {"owner@reset.example"}, "password": {newPassword}}), 303)
	if n := len(team.Members(st.sys.Reader(), org)); n != 1 {
		t.Fatalf("%d members after the reset, want 1", n)
	}
}

// A session in use lives on past the idle timeout; one left unused for
// longer ends, everywhere: the next page goes to the sign-in page, which
// says why, and signing in again works.
func TestDashboardIdleTimeout(t *testing.T) {
	const idle = 1500 * time.Millisecond
	st := newStack(t, stackOptions{dashboardIdle: idle})
	owner := setUpDashboardOwner(t, st, "owner@idle.example")
	for start := time.Now(); time.Since(start) < 2*idle; time.Sleep(idle / 5) {
		wantDashStatus(t, "a page while in use", owner.get("/dashboard/payouts"), 200)
	}
	token := ""
	for _, c := range owner.client.Jar.Cookies(mustURL(t, owner.base+"/dashboard")) {
		if c.Name == "dashboard_session" {
			token = c.Value
		}
	}
	time.Sleep(idle + idle/2)
	p := owner.get("/dashboard/payouts")
	wantDashStatus(t, "a page after the idle timeout", p, 303)
	if loc := p.header.Get("Location"); loc != "/dashboard/sign-in?idle=1&next=%2Fdashboard%2Fpayouts" {
		t.Fatalf("after the idle timeout, to %q", loc)
	}
	if sess, ok := team.SessionByToken(st.sys.Reader(), sha256.Sum256([]byte(token))); !ok || !sess.Ended {
		t.Fatalf("the idle session in the ledger: %+v %v", sess, ok)
	}
	signIn := owner.get(p.header.Get("Location"))
	if !strings.Contains(signIn.body, "You were signed out after 2 seconds without activity") {
		t.Fatalf("the sign-in page does not say why: %s", signIn.body)
	}
	wantDashStatus(t, "signing in again", owner.post(signInActionOf(t, signIn), url.Values{"csrf": {signIn.csrf(t)},
		"email": {"owner@idle.example"}, "password": {dashOwnerPassword}}), 303)
	wantDashStatus(t, "a page after signing in again", owner.get("/dashboard/payouts"), 200)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)

// signInActionOf is the sign-in form's target on the page.
func signInActionOf(t *testing.T, p dashPage) string {
	t.Helper()
	m := formAction.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no form on the page: %s", p.body)
	}
	return html.UnescapeString(m[1])
}
