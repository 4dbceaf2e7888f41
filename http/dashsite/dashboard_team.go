package dashsite

import (
	"time"

	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/http/dashauth"
	"payments/http/dashboard"
	"payments/ledger"
	"payments/ledger/team"
)

// The dashboard's Team page: every member sees the team; owners invite
// members by one-time link, change roles, remove members and revoke
// invitations. The ledger keeps the rules (an organization keeps an
// owner; only owners invite).

func dashboardTeamRoutes(s *core.Server) {
	r := s.Router()
	r.GET("/dashboard/team", func(a0 *fasthttp.RequestCtx) { dashboardTeam(s, a0) })
	r.POST("/dashboard/team/invitations", dashboardTeamAction(s, func(ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
		return teamInvite(s, ctx, m)
	}))
	r.POST("/dashboard/team/invitations/{id}/revoke", dashboardTeamAction(s, func(ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
		return teamRevokeInvitation(s, ctx, m)
	}))
	r.POST("/dashboard/team/members/{id}/role", dashboardTeamAction(s, func(ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
		return teamSetRole(s, ctx, m)
	}))
	r.POST("/dashboard/team/members/{id}/remove", dashboardTeamAction(s, func(ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
		return teamRemove(s, ctx, m)
	}))
}

var teamRoles = []string{team.RoleOwner, team.RoleDeveloper, team.RoleViewer}

// teamPage is the Team page of m's organization. Members and invitations
// come from one pinned view: accepting an invitation changes both.
func teamPage(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) *dashauth.Page {
	st, release := s.Config.Actors.Reader().Pinned()
	defer release()
	now := s.Config.Actors.Now()
	p := &dashauth.Page{Title: "Team", CSRF: dashboardCSRF(s, ctx, m), Member: &dashauth.PageMember{Email: m.Email, Role: m.Role},
		Owner: m.Role == team.RoleOwner, Roles: teamRoles}
	for _, tm := range team.Members(st, m.OrgID) {
		if !tm.Removed {
			p.Members = append(p.Members, dashauth.TeamMember{ID: tm.ID, Email: tm.Email, Role: tm.Role, You: tm.ID == m.ID})
		}
	}
	for _, inv := range team.Invitations(st, m.OrgID) {
		if !inv.Setup && !inv.Reset && inv.Pending(now.UnixMilli()) {
			p.Invitations = append(p.Invitations, dashauth.TeamInvitation{ID: inv.ID, Email: inv.Email, Role: inv.Role,
				Expires: time.UnixMilli(inv.ExpiresAt).UTC().Format("2006-01-02 15:04 UTC")})
		}
	}
	return p
}

// dashboardTeam: GET /dashboard/team.
func dashboardTeam(s *core.Server, ctx *fasthttp.RequestCtx) {
	m, ok := dashboardAuth(s, ctx)
	if !ok {
		return
	}
	writeTeamPage(s, ctx, m, fasthttp.StatusOK, teamPage(s, ctx, m))
}

// writeTeamPage shows the Team page in the dashboard's shared layout (its
// navigation, stack and sign-out), with the team as the page's view.
func writeTeamPage(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember, status int, team *dashauth.Page) {
	d := &dashboardRequest{s: s, ctx: ctx, m: m}
	d.render(status, &dashboard.Page{Name: "team", Title: "Team", Section: "team", View: team})
}

// dashboardTeamAction wraps an owner's form on the Team page: a member
// signed in, the CSRF token (the operations refuse a member who is not an
// owner). The action returns the page to show (nil: back to the team page,
// 303) or the error to show on it.
func dashboardTeamAction(s *core.Server, action func(ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		m, ok := dashboardFormMember(s, ctx)
		if !ok {
			return
		}
		p, e := action(ctx, m)
		switch {
		case e != nil:
			p = teamPage(s, ctx, m)
			p.Error = e.Message
			writeTeamPage(s, ctx, m, core.HTTPStatus(e.Code), p)
		case p != nil:
			writeTeamPage(s, ctx, m, fasthttp.StatusOK, p)
		default:
			ctx.Response.Header.Set("Location", "/dashboard/team")
			ctx.SetStatusCode(fasthttp.StatusSeeOther)
		}
	}
}

// teamInvite: POST /dashboard/team/invitations, email and role: the page
// shows the one-time link once.
func teamInvite(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
	args := ctx.PostArgs()
	email := team.NormalizeEmail(string(args.Peek("email")))
	role := string(args.Peek("role"))
	if !plausibleEmail(email) {
		return nil, ledger.FieldInvalid("email", "is not an email address")
	}
	link := s.Config.App.InviteMember(m.caller(), email, role)
	if e := core.ReplyError(link.Reply); e != nil {
		return nil, e
	}
	p := teamPage(s, ctx, m)
	p.NewLink = s.Config.PublicBaseURL + "/dashboard/invitations/" + link.Token
	p.NewLinkEmail, p.NewLinkExpires = email, link.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
	return p, nil
}

func teamRevokeInvitation(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
	id, _ := ctx.UserValue("id").(string)
	return nil, core.ReplyError(s.Config.App.RevokeInvitation(m.caller(), id))
}

func teamSetRole(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
	id, _ := ctx.UserValue("id").(string)
	return nil, core.ReplyError(s.Config.App.SetMemberRole(m.caller(), id, string(ctx.PostArgs().Peek("role"))))
}

func teamRemove(s *core.Server, ctx *fasthttp.RequestCtx, m dashboardMember) (*dashauth.Page, *ledger.Error) {
	id, _ := ctx.UserValue("id").(string)
	return nil, core.ReplyError(s.Config.App.RemoveMember(m.caller(), id))
}
