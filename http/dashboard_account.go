package http

import (
	"github.com/valyala/fasthttp"

	"payments/http/dashauth"
	"payments/http/dashboard"
	"payments/ledger"
)

// The dashboard's Account page: the signed-in member's own email and role,
// and the change of their password. The current password is checked here,
// where the hashes can be computed; a wrong one counts as a failed sign-in
// (so a stolen session cannot guess it without the lock-out), and a locked
// member changes nothing until the lock passes. The ledger stores the new
// hash and ends the member's other sessions (ledger.ChangeMemberPassword).

// account: GET /dashboard/account.
func (d *dashboardRequest) account() { d.accountPage(fasthttp.StatusOK, nil) }

func (d *dashboardRequest) accountPage(status int, problem *dashboard.Problem) {
	d.render(status, &dashboard.Page{Name: "account", Title: "Your account", Section: "account", Problem: problem})
}

// changePassword: POST /dashboard/account/password, with the current
// password, the new one and its confirmation.
func (d *dashboardRequest) changePassword() {
	refuse := func(e *ledger.Error) {
		d.accountPage(HTTPStatus(e.Code), &dashboard.Problem{Status: HTTPStatus(e.Code), Code: string(e.Code), Message: e.Message})
	}
	current, next := d.form("current"), d.form("password")
	st := d.s.cfg.Actors.Reader()
	m, ok := st.Member(d.m.ID)
	if !ok || m.Removed {
		refuse(notFound("Member"))
		return
	}
	now := d.s.cfg.Actors.Now()
	if wait := m.LockedUntil - now.UnixMilli(); wait > 0 {
		d.ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, itoa(int((wait+999)/1000)))
		refuse(&ledger.Error{Code: ledger.CodeRateLimited,
			Message: "Too many wrong passwords: your account is locked for " + lockWords(wait) + ". Try again then."})
		return
	}
	right, err := dashauth.VerifyPassword(m.PasswordHash, current)
	if err != nil {
		d.s.logger.Error("a member's password hash is unreadable", "member", m.ID, "err", err)
	}
	if !right {
		if _, e := d.s.dashboardPropose(&ledger.RecordSignInFailure{At: now.UnixMilli(), MemberID: m.ID}); e != nil {
			d.s.logger.Warn("recording a wrong current password", "member", m.ID, "err", e.Message)
		}
		refuse(&ledger.Error{Code: ledger.CodeForbidden, Message: "The current password is wrong; nothing was changed."})
		return
	}
	problem := ""
	switch {
	case next != d.form("confirm"):
		problem = "The two new passwords differ."
	case next == current:
		problem = "The new password is the current one."
	default:
		if why := dashauth.CheckPassword(next, m.Email); why != "" {
			problem = "The new password " + why + "."
		}
	}
	if problem != "" {
		refuse(&ledger.Error{Code: ledger.CodeValidation, Message: problem})
		return
	}
	var keep string
	if token, _ := d.ctx.UserValue(dashboardSessionKey).(string); token != "" {
		if sess, found := st.DashboardSessionByToken(dashauth.Digest(token)); found {
			keep = sess.ID
		}
	}
	if _, e := d.s.dashboardPropose(&ledger.ChangeMemberPassword{At: now.UnixMilli(), OrgID: m.OrgID, MemberID: m.ID,
		PasswordHash: dashauth.HashPassword(next), KeepSessionID: keep}); e != nil {
		refuse(e)
		return
	}
	d.seeOther(dashboard.Base + "/account?done=password")
}
