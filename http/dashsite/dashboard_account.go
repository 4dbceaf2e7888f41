package dashsite

import (
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/http/dashboard"
)

// The dashboard's Account page: the signed-in member's own email and role,
// and the change of their password (app.ChangePassword, which checks the
// current one and counts a wrong one as a failed sign-in).

// account: GET /dashboard/account.
func (d *dashboardRequest) account() { d.accountPage(fasthttp.StatusOK, nil) }

func (d *dashboardRequest) accountPage(status int, problem *dashboard.Problem) {
	d.render(status, &dashboard.Page{Name: "account", Title: "Your account", Section: "account", Problem: problem})
}

// changePassword: POST /dashboard/account/password, with the current
// password, the new one and its confirmation.
func (d *dashboardRequest) changePassword() {
	err := d.s.Config.App.ChangePassword(d.m.caller(), app.PasswordChange{
		Current: d.form("current"), New: d.form("password"), Confirm: d.form("confirm"), KeepSessionID: d.m.SessionID,
	})
	if err != nil {
		e := core.ErrorOf(err)
		if e.RetryAfterSeconds > 0 {
			d.ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, core.Itoa(e.RetryAfterSeconds))
		}
		d.accountPage(core.HTTPStatus(e.Code), problemOfError(e))
		return
	}
	d.seeOther(dashboard.Base + "/account?done=password")
}
