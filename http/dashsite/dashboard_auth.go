package dashsite

import (
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/http/dashauth"
	"payments/ledger"
	"payments/ledger/team"
)

// The dashboard's team members signing in: the sign-in and sign-out
// routes, the first owner's setup link and the invitation links, the
// session cookie and the CSRF tokens. Checking a password, the lock-out
// after failed sign-ins, and the tokens of sessions and links are the
// team's operations (actors/app/team.go; package ledger/team keeps the rules
// and the replicated state); package dashauth has the CSRF tokens and the
// pages. Every dashboard route runs the
// same gate as the hosted checkout's: a limit per client address, browser
// writes from another site refused, and the relay to the leader, so that
// a session started through one node holds through any.

const (
	// dashboardSessionCookie carries the session token; the ledger keeps
	// only its SHA-256.
	dashboardSessionCookie = "dashboard_session"
	// dashboardFormCookie carries the token that the CSRF tokens of the
	// forms shown before a session (sign-in, setup, invitation) derive
	// from.
	dashboardFormCookie = "dashboard_form"
	dashboardCookiePath = "/dashboard"

	dashboardGatedKey   = "payments.dashboardGated"   // ctx user value: the gate ran (true: it answered)
	dashboardSessionKey = "payments.dashboardSession" // ctx user value: the signed-in session's token

	dashboardSignInPath = "/dashboard/sign-in"
)

// dashboardMember is the signed-in team member of a dashboard request.
type dashboardMember struct {
	ID, OrgID, Email string
	Role             string // "owner", "developer" or "viewer"
	SessionID        string // the session the request is signed in with
}

// caller is who the member's actions act as: the member, in their
// organization, with the scopes of their role.
func (m dashboardMember) caller() app.Caller {
	return app.Caller{OrgID: m.OrgID, Member: m.ID,
		Key: &ledger.APIKey{ID: m.ID, OrgID: m.OrgID, Name: m.Email, Scopes: dashboardScopes(m.Role)}}
}

// The dashboard's sign-in, setup and invitation links, and Team page; and
// its pages: a member's session, not an API key.
func init() {
	core.RegisterRouteSet(dashboardAuthRoutes)
	core.RegisterRouteSet(dashboardRoutes)
}

// dashboardAuthRoutes mounts the routes of signing in and of the team.
func dashboardAuthRoutes(s *core.Server) {
	r := s.Router()
	r.GET(dashboardSignInPath, func(a0 *fasthttp.RequestCtx) { dashboardSignInPage(s, a0) })
	r.POST(dashboardSignInPath, func(a0 *fasthttp.RequestCtx) { dashboardSignIn(s, a0) })
	r.POST("/dashboard/sign-out", func(a0 *fasthttp.RequestCtx) { dashboardSignOut(s, a0) })
	r.GET("/dashboard/setup/{token}", dashboardAcceptPage(s, setupLink))
	r.POST("/dashboard/setup/{token}", dashboardAccept(s, setupLink))
	r.GET("/dashboard/invitations/{token}", dashboardAcceptPage(s, invitationLink))
	r.POST("/dashboard/invitations/{token}", dashboardAccept(s, invitationLink))
	r.GET("/dashboard/reset/{token}", dashboardAcceptPage(s, resetLink))
	r.POST("/dashboard/reset/{token}", dashboardAccept(s, resetLink))
	dashboardTeamRoutes(s)
}

// dashboardGate runs once per request what every dashboard route runs
// first: the request id, the limit per client address, the refusal of a
// browser's write from another site, and the relay to the leader. It
// returns false when it answered (an error page, or the leader's answer).
func dashboardGate(s *core.Server, ctx *fasthttp.RequestCtx) bool {
	if done, ok := ctx.UserValue(dashboardGatedKey).(bool); ok {
		return !done
	}
	ctx.Response.Header.Set("x-request-id", s.RequestID(ctx))
	done, e := dashboardGateOnce(s, ctx)
	if e != nil && e.RetryAfterSeconds > 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, core.Itoa(e.RetryAfterSeconds))
	}
	if e != nil {
		writeDashboardMessage(s, ctx, core.HTTPStatus(e.Code), "Request refused", e.Message)
	}
	ctx.SetUserValue(dashboardGatedKey, done)
	return !done
}

func dashboardGateOnce(s *core.Server, ctx *fasthttp.RequestCtx) (bool, *ledger.Error) {
	return s.PageGate(ctx, "Too many requests from this address: wait a moment, then reload the page",
		"The dashboard refuses forms sent from another site")
}

// dashboardAuth returns the member whose valid session cookie the
// request carries; false (having answered with a redirect to
// /dashboard/sign-in, 303) when none. It runs the dashboard's gate first
// (dashboardGate), and returns false when that answered.
func dashboardAuth(s *core.Server, ctx *fasthttp.RequestCtx) (dashboardMember, bool) {
	if !dashboardGate(s, ctx) {
		return dashboardMember{}, false
	}
	token := string(ctx.Request.Header.Cookie(dashboardSessionCookie))
	m, ok, idle := dashboardSession(s, token)
	if ok {
		ctx.SetUserValue(dashboardSessionKey, token)
		core.NoteMember(ctx, m.ID, m.OrgID)
		return m, true
	}
	if token != "" {
		clearCookie(s, ctx, dashboardSessionCookie)
	}
	q := url.Values{}
	if ctx.IsGet() {
		if next := string(ctx.RequestURI()); safeNext(next) && next != "/dashboard" {
			q.Set("next", next)
		}
	}
	if idle {
		q.Set("idle", "1")
	}
	loc := dashboardSignInPath
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	ctx.Response.Header.Set("Location", loc)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
	return dashboardMember{}, false
}

// dashboardSession finds the member of a live session token, and counts
// this as a use of the session. A session unused for longer than the idle
// timeout ends here, everywhere (idle: true).
func dashboardSession(s *core.Server, token string) (m dashboardMember, ok, idle bool) {
	sess, member, found := s.Config.App.DashboardSession(token)
	if !found {
		return dashboardMember{}, false, false
	}
	if s.DashIdle.Use(sess.ID, s.Config.Actors.Now()) {
		if err := s.Config.App.EndDashboardSession(sess.ID); err != nil {
			s.Logger.Warn("ending an idle dashboard session", "session", sess.ID, "err", core.ErrorOf(err).Message)
		}
		return dashboardMember{}, false, true
	}
	return dashboardMember{ID: member.ID, OrgID: member.OrgID, Email: member.Email, Role: member.Role, SessionID: sess.ID}, true, false
}

// safeNext reports whether next is a place in the dashboard to go back to
// after signing in (never another site).
func safeNext(next string) bool {
	return strings.HasPrefix(next, "/dashboard") && !strings.HasPrefix(next, "//") &&
		!strings.ContainsAny(next, "\\\r\n") && !strings.HasPrefix(next, dashboardSignInPath)
}

// dashboardCSRF returns the CSRF token to embed in forms for m's session
// (hidden input named "csrf"). It derives from the session's token, which
// only the cookie's holder knows.
func dashboardCSRF(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) string {
	token, _ := ctx.UserValue(dashboardSessionKey).(string)
	if token == "" {
		return ""
	}
	return dashauth.CSRF(token)
}

// dashboardCheckCSRF reports whether a POST carries m's session's CSRF
// token (form field "csrf", or the X-CSRF-Token header of a script's
// request); the caller answers 403 when not.
func dashboardCheckCSRF(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) bool {
	token, _ := ctx.UserValue(dashboardSessionKey).(string)
	got := string(ctx.PostArgs().Peek("csrf"))
	if got == "" {
		got = string(ctx.Request.Header.Peek("X-CSRF-Token"))
	}
	return dashauth.CheckCSRF(token, got)
}

// dashboardScopes are the API scopes a role acts with: owner every scope
// of a merchant's key; developer every one but keys:admin (developers see
// keys but do not create or revoke them); viewer the read scopes only.
func dashboardScopes(role string) ledger.Scopes {
	switch role {
	case team.RoleOwner:
		return ledger.ScopesMerchant
	case team.RoleDeveloper:
		return ledger.ScopesMerchant &^ ledger.ScopeKeysAdmin
	case team.RoleViewer:
		return readScopes
	}
	return 0
}

// readScopes are the scopes that only read.
var readScopes = func() ledger.Scopes {
	var read ledger.Scopes
	for _, name := range ledger.ScopesMerchant.Names() {
		if strings.HasSuffix(name, ":read") {
			sc, _ := ledger.ParseScope(name)
			read |= sc
		}
	}
	return read
}()

// formToken returns the token of the forms shown before a session,
// setting its cookie when the browser has none.
func formToken(s *core.Server, ctx *fasthttp.RequestCtx) string {
	token := string(ctx.Request.Header.Cookie(dashboardFormCookie))
	if len(token) != app.TokenLen {
		token = app.NewToken()
		setCookie(s, ctx, dashboardFormCookie, token, 0)
	}
	return token
}

// checkFormCSRF checks a form posted before a session.
func checkFormCSRF(ctx *fasthttp.RequestCtx) bool {
	return dashauth.CheckCSRF(string(ctx.Request.Header.Cookie(dashboardFormCookie)), string(ctx.PostArgs().Peek("csrf")))
}

// setCookie sets a dashboard cookie: HttpOnly, SameSite=Lax, Secure when
// the dashboard is served over https, for the dashboard's paths only.
// maxAge 0 makes a cookie that ends with the browser session.
func setCookie(s *core.Server, ctx *fasthttp.RequestCtx, name, value string, maxAge time.Duration) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath(dashboardCookiePath)
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	c.SetSecure(dashboardHTTPS(s, ctx))
	if maxAge > 0 {
		c.SetMaxAge(int(maxAge / time.Second))
	}
	ctx.Response.Header.SetCookie(c)
}

func clearCookie(s *core.Server, ctx *fasthttp.RequestCtx, name string) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetPath(dashboardCookiePath)
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	c.SetSecure(dashboardHTTPS(s, ctx))
	c.SetMaxAge(-1)
	ctx.Response.Header.SetCookie(c)
}

// dashboardHTTPS reports whether the dashboard is served over https: this
// connection is TLS, or the public base URL is https (behind a proxy that
// ends TLS).
func dashboardHTTPS(s *core.Server, ctx *fasthttp.RequestCtx) bool {
	return ctx.IsTLS() || strings.HasPrefix(s.Config.PublicBaseURL, "https://")
}

// writeDashboardPage answers with one of the sign-in or team pages.
func writeDashboardPage(s *core.Server, ctx *fasthttp.RequestCtx, status int, name string, p *dashauth.Page) {
	p.RequestID = core.RequestIDOf(ctx)
	body, err := p.Render(name)
	if err != nil {
		s.Logger.Error("rendering a dashboard page", "page", name, "err", err)
		p = &dashauth.Page{Title: "Something went wrong", Message: "Please try again in a moment."}
		status = fasthttp.StatusInternalServerError
		if body, err = p.Render("message"); err != nil {
			body = []byte("Internal error")
		}
	}
	core.WriteHTML(ctx, status, p.CSP(), body)
}

func writeDashboardMessage(s *core.Server, ctx *fasthttp.RequestCtx, status int, title, message string) {
	writeDashboardPage(s, ctx, status, "message", &dashauth.Page{Title: title, Message: message})
}

// dashboardSignInPage: GET /dashboard/sign-in.
func dashboardSignInPage(s *core.Server, ctx *fasthttp.RequestCtx) {
	if !dashboardGate(s, ctx) {
		return
	}
	if _, ok, _ := dashboardSession(s, string(ctx.Request.Header.Cookie(dashboardSessionCookie))); ok {
		ctx.Response.Header.Set("Location", "/dashboard")
		ctx.SetStatusCode(fasthttp.StatusSeeOther)
		return
	}
	p := &dashauth.Page{Title: "Sign in", CSRF: dashauth.CSRF(formToken(s, ctx)), Action: signInAction(ctx)}
	switch {
	case string(ctx.QueryArgs().Peek("signed-out")) == "1":
		p.Notice = "You are signed out."
	case string(ctx.QueryArgs().Peek("idle")) == "1" && s.Config.DashboardIdleTimeout > 0:
		p.Notice = "You were signed out after " + core.IdleWords(s.Config.DashboardIdleTimeout) + " without activity. Please sign in again."
	}
	writeDashboardPage(s, ctx, fasthttp.StatusOK, "signin", p)
}

// signInAction is the sign-in form's target, carrying where to go next.
func signInAction(ctx *fasthttp.RequestCtx) string {
	if next := string(ctx.QueryArgs().Peek("next")); safeNext(next) {
		return dashboardSignInPath + "?next=" + url.QueryEscape(next)
	}
	return dashboardSignInPath
}

// dashboardSignIn: POST /dashboard/sign-in, email and password. A wrong
// password counts against the member (the ledger locks them out, with
// backoff, past a few in a row), and answers 401 so that the request log
// keeps the attempt, under the member's organization when the address is
// a member's. An unknown address costs the same time as a wrong password.
func dashboardSignIn(s *core.Server, ctx *fasthttp.RequestCtx) {
	if !dashboardGate(s, ctx) {
		return
	}
	p := &dashauth.Page{Title: "Sign in", CSRF: dashauth.CSRF(formToken(s, ctx)), Action: signInAction(ctx)}
	if !checkFormCSRF(ctx) {
		p.Error = "This form expired. Please sign in again."
		writeDashboardPage(s, ctx, fasthttp.StatusForbidden, "signin", p)
		return
	}
	args := ctx.PostArgs()
	email := team.NormalizeEmail(string(args.Peek("email")))
	p.Email = email
	sess, err := s.Config.App.SignIn(email, string(args.Peek("password")))
	if err != nil {
		e := core.ErrorOf(err)
		if m := sess.Member; m.ID != "" {
			core.NoteFailedSignIn(ctx, m.ID, m.OrgID)
		}
		if e.RetryAfterSeconds > 0 {
			ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, core.Itoa(e.RetryAfterSeconds))
		}
		p.Error = e.Message
		writeDashboardPage(s, ctx, core.HTTPStatus(e.Code), "signin", p)
		return
	}
	setCookie(s, ctx, dashboardSessionCookie, sess.Token, app.DashboardSessionLifetime)
	m := sess.Member
	core.NoteMember(ctx, m.ID, m.OrgID)
	next := string(ctx.QueryArgs().Peek("next"))
	if !safeNext(next) {
		next = "/dashboard"
	}
	ctx.Response.Header.Set("Location", next)
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// dashboardFormMember is the signed-in member who posted a form with the
// session's CSRF token; false (having answered: the sign-in redirect, or a
// 403 page) otherwise.
func dashboardFormMember(s *core.Server, ctx *fasthttp.RequestCtx) (dashboardMember, bool) {
	m, ok := dashboardAuth(s, ctx)
	if !ok {
		return m, false
	}
	if !dashboardCheckCSRF(s, ctx, m) {
		writeDashboardMessage(s, ctx, fasthttp.StatusForbidden, "Request refused", "This form expired: reload the page and try again.")
		return m, false
	}
	return m, true
}

// dashboardSignOut: POST /dashboard/sign-out, with the session's CSRF
// token: the session ends everywhere, and the cookie goes.
func dashboardSignOut(s *core.Server, ctx *fasthttp.RequestCtx) {
	m, ok := dashboardFormMember(s, ctx)
	if !ok {
		return
	}
	if err := s.Config.App.EndDashboardSession(m.SessionID); err != nil {
		e := core.ErrorOf(err)
		writeDashboardMessage(s, ctx, core.HTTPStatus(e.Code), "Sign-out failed", e.Message)
		return
	}
	s.DashIdle.Forget(m.SessionID)
	clearCookie(s, ctx, dashboardSessionCookie)
	ctx.Response.Header.Set("Location", dashboardSignInPath+"?signed-out=1")
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// linkKind is what a one-time link of the dashboard is for.
type linkKind uint8

const (
	invitationLink linkKind = iota // an owner's invitation: a new member
	setupLink                      // the first owner of an organization
	resetLink                      // a new password for a member (the operator's)
)

func linkKindOf(inv *team.Invitation) linkKind {
	switch {
	case inv.Setup:
		return setupLink
	case inv.Reset:
		return resetLink
	}
	return invitationLink
}

// pendingInvitation reads the invitation of a setup, invitation or reset link,
// once the request passes the dashboard's gate (dashboardGate), answering
// with a page when it is not one that can be accepted. The link's token is
// never logged nor kept in the request log: these routes note no actor,
// and they answer nothing the log keeps.
func pendingInvitation(s *core.Server, ctx *fasthttp.RequestCtx, kind linkKind) (team.Invitation, bool) {
	if !dashboardGate(s, ctx) {
		return team.Invitation{}, false
	}
	token, _ := ctx.UserValue("token").(string)
	inv, found := s.Config.App.PendingInvitation(token)
	if !found || linkKindOf(&inv) != kind {
		ask := "Ask an owner of your organization for a new invitation."
		if kind == resetLink {
			ask = "Ask the operator of this service for a new reset link."
		}
		writeDashboardMessage(s, ctx, fasthttp.StatusNotFound, "This link does not work",
			"The link is unknown, was used already, or expired. "+ask)
		return inv, false
	}
	return inv, true
}

func acceptPage(s *core.Server, ctx *fasthttp.RequestCtx, inv *team.Invitation, kind linkKind) *dashauth.Page {
	p := &dashauth.Page{Title: "Join the team", CSRF: dashauth.CSRF(formToken(s, ctx)), Setup: kind == setupLink,
		Reset: kind == resetLink, Email: inv.Email, Role: inv.Role, Action: string(ctx.Path())}
	if org, ok := s.Config.Actors.Reader().Organization(inv.OrgID); ok {
		p.OrgName = org.Name
	}
	switch kind {
	case setupLink:
		p.Title = "Set up the dashboard"
	case resetLink:
		p.Title = "Choose a new password"
	}
	return p
}

// dashboardAcceptPage: GET /dashboard/setup/{token},
// /dashboard/invitations/{token} and /dashboard/reset/{token}: the form
// that chooses a password.
func dashboardAcceptPage(s *core.Server, kind linkKind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		inv, ok := pendingInvitation(s, ctx, kind)
		if !ok {
			return
		}
		writeDashboardPage(s, ctx, fasthttp.StatusOK, "accept", acceptPage(s, ctx, &inv, kind))
	}
}

// dashboardAccept: POST of the same: the member is made (or, for a reset
// link, given) the chosen password (its argon2id hash), and signed in.
func dashboardAccept(s *core.Server, kind linkKind) fasthttp.RequestHandler {
	setup := kind == setupLink
	return func(ctx *fasthttp.RequestCtx) {
		inv, ok := pendingInvitation(s, ctx, kind)
		if !ok {
			return
		}
		p := acceptPage(s, ctx, &inv, kind)
		if !checkFormCSRF(ctx) {
			p.Error = "This form expired. Please fill it in again."
			writeDashboardPage(s, ctx, fasthttp.StatusForbidden, "accept", p)
			return
		}
		args := ctx.PostArgs()
		email := inv.Email
		if setup {
			email = team.NormalizeEmail(string(args.Peek("email")))
			p.Email = email
		}
		password := string(args.Peek("password"))
		problem := ""
		switch {
		case setup && !plausibleEmail(email):
			problem = "Enter your email address."
		case password != string(args.Peek("confirm")):
			problem = "The two passwords differ."
		}
		if problem != "" {
			p.Error = problem
			writeDashboardPage(s, ctx, fasthttp.StatusBadRequest, "accept", p)
			return
		}
		token, _ := ctx.UserValue("token").(string)
		sess, err := s.Config.App.AcceptInvitation(app.Acceptance{Token: token, Email: email, Password: password})
		if err != nil {
			e := core.ErrorOf(err)
			p.Error = e.Message
			writeDashboardPage(s, ctx, core.HTTPStatus(e.Code), "accept", p)
			return
		}
		setCookie(s, ctx, dashboardSessionCookie, sess.Token, app.DashboardSessionLifetime)
		ctx.Response.Header.Set("Location", "/dashboard")
		ctx.SetStatusCode(fasthttp.StatusSeeOther)
	}
}

// plausibleEmail is the shape check of an email address a form gives.
func plausibleEmail(email string) bool {
	at := strings.LastIndexByte(email, '@')
	return at > 0 && at < len(email)-1 && len(email) <= 254 && !strings.ContainsAny(email, " \t\r\n<>\"")
}

func init() {
	core.RegisterRoutes(core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/organizations/{id}/dashboard-setup-link", Scope: ledger.ScopeOrganizationsAdmin, H: createDashboardSetupLink},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/organizations/{id}/dashboard-password-reset-link", Scope: ledger.ScopeOrganizationsAdmin, H: createPasswordResetLink})
}

type passwordResetRequestBody struct {
	Email *string `json:"email"`
}

type passwordResetLinkBody struct {
	Link passwordResetLinkJSON `json:"dashboardPasswordResetLink"`
}

type passwordResetLinkJSON struct {
	OrganizationID string `json:"organizationId"`
	Email          string `json:"email"`
	URL            string `json:"url"`
	ExpiresAt      string `json:"expiresAt"`
}

// createPasswordResetLink: POST
// /v1/organizations/{id}/dashboard-password-reset-link, the operator's: a
// one-time link that sets a new password for the member with the given
// email, and ends their sessions; the way back in for an organization's
// only owner who lost theirs. It is shown once (only its hash is kept),
// and a newer one revokes the member's older ones.
func createPasswordResetLink(c *core.Call) {
	c.NoStore()
	reset, ok := core.ParamInput(c, "id", passwordResetInput)
	if !ok {
		return
	}
	link := c.Server.Config.App.CreatePasswordReset(c.Caller(), reset.orgID, reset.email)
	c.Reply(link.Reply, fasthttp.StatusCreated, func(res *ledger.Result) any {
		inv := team.InvitationOf(*res)
		return &passwordResetLinkBody{passwordResetLinkJSON{OrganizationID: reset.orgID, Email: inv.Email,
			URL: c.Server.Config.PublicBaseURL + "/dashboard/reset/" + link.Token, ExpiresAt: core.Timestamp(inv.ExpiresAt)}}
	})
}

// passwordReset is a checked request for a member's reset link: the
// organization the path names and the member's email.
type passwordReset struct{ orgID, email string }

func passwordResetInput(orgID string, req *passwordResetRequestBody) (passwordReset, *ledger.Error) {
	var p core.Problems
	email := team.NormalizeEmail(p.Text("email", req.Email, true, 254))
	return passwordReset{orgID, email}, p.Err()
}

type dashboardSetupLinkBody struct {
	DashboardSetupLink dashboardSetupLinkJSON `json:"dashboardSetupLink"`
}

type dashboardSetupLinkJSON struct {
	OrganizationID string `json:"organizationId"`
	URL            string `json:"url"`
	ExpiresAt      string `json:"expiresAt"`
}

// createDashboardSetupLink: POST /v1/organizations/{id}/dashboard-setup-link,
// the operator's: a one-time link for the first dashboard owner of an
// organization that has no member (one made by POST /v1/organizations, or
// one whose printed link was lost). It is shown once: only its hash is kept.
func createDashboardSetupLink(c *core.Call) {
	c.NoStore()
	id, ok := c.Param("id")
	if !ok {
		return
	}
	link := c.Server.Config.App.DashboardSetupLink(c.Caller(), id)
	c.Reply(link.Reply, fasthttp.StatusCreated, func(*ledger.Result) any {
		return &dashboardSetupLinkBody{dashboardSetupLinkJSON{
			OrganizationID: id, URL: c.Server.Config.PublicBaseURL + "/dashboard/setup/" + link.Token,
			ExpiresAt: link.ExpiresAt.UTC().Format(core.TimeLayout),
		}}
	})
}
