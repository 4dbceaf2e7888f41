package app_test

import (
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/team"
)

const goodPassword = "violet tractor sings"

// owner sets up s's organization's first owner through its setup link and
// returns the owner's session.
func (s *stack) firstOwner(t *testing.T, email string) app.Session {
	t.Helper()
	link := s.app.DashboardSetupLink(app.Caller{}, s.org)
	mustApply(t, "setup link", link.Reply)
	sess, err := s.app.AcceptInvitation(app.Acceptance{Token: link.Token, Email: email, Password: goodPassword})
	if err != nil {
		t.Fatalf("accept the setup link: %v", err)
	}
	return sess
}

// A setup link makes the first owner and signs them in; the link works
// once; an organization with members gets no other setup link.
func TestSetupLinkAndSessions(t *testing.T) {
	s := newStack(t, stackOptions{})
	if l := s.app.DashboardSetupLink(app.Caller{}, "org_unknown"); l.Result.Err == nil || l.Result.Err.Code != ledger.CodeNotFound {
		t.Fatalf("a setup link of an unknown organization: %+v", l.Result.Err)
	}
	link := s.app.DashboardSetupLink(app.Caller{}, s.org)
	mustApply(t, "setup link", link.Reply)
	if len(link.Token) != app.TokenLen {
		t.Fatalf("token %q", link.Token)
	}
	if inv, ok := s.app.PendingInvitation(link.Token); !ok || !inv.Setup {
		t.Fatalf("the pending link: %+v %v", inv, ok)
	}
	_, err := s.app.AcceptInvitation(app.Acceptance{Token: link.Token, Email: "owner@zouk.example", Password: "password123"})
	if codeOf(err) != ledger.CodeValidation {
		t.Fatalf("a common password: %v", err)
	}
	sess, err := s.app.AcceptInvitation(app.Acceptance{Token: link.Token, Email: "owner@zouk.example", Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Member.Role != team.RoleOwner || sess.Member.OrgID != s.org || len(sess.Token) != app.TokenLen {
		t.Fatalf("the session: %+v", sess)
	}
	if _, ok := s.app.PendingInvitation(link.Token); ok {
		t.Fatal("the link works twice")
	}
	got, m, ok := s.app.DashboardSession(sess.Token)
	if !ok || got.ID != sess.ID || m.Email != "owner@zouk.example" {
		t.Fatalf("the session by its token: %+v %+v %v", got, m, ok)
	}
	if l := s.app.DashboardSetupLink(app.Caller{}, s.org); l.Result.Err == nil || l.Result.Err.Code != ledger.CodeConflict {
		t.Fatalf("a second setup link: %+v", l.Result.Err)
	}
	if err := s.app.EndDashboardSession(sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.app.DashboardSession(sess.Token); ok {
		t.Fatal("an ended session still authenticates")
	}
	if _, _, ok := s.app.DashboardSession("short"); ok {
		t.Fatal("a malformed token authenticates")
	}
}

// Sign-in refuses an unknown address as a wrong password, counts wrong
// passwords, and locks the member out past the free ones.
func TestSignIn(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.firstOwner(t, "owner@zouk.example")
	for _, c := range []struct {
		name, email, password string
		want                  ledger.Code
		member                bool // the refusal names the member
	}{
		{"an unknown address", "nobody@zouk.example", goodPassword, ledger.CodeUnauthorized, false},
		{"no address", "", goodPassword, ledger.CodeUnauthorized, false},
		{"the right password", "owner@zouk.example", goodPassword, "", true},
		{"a wrong password", "owner@zouk.example", "wrong password", ledger.CodeUnauthorized, true},
	} {
		sess, err := s.app.SignIn(c.email, c.password)
		if codeOf(err) != c.want || (sess.Member.ID != "") != c.member {
			t.Fatalf("%s: %v, member %q", c.name, err, sess.Member.ID)
		}
		if c.want == "" && sess.Token == "" {
			t.Fatalf("%s: no session token", c.name)
		}
	}
	for i := 1; i < team.SignInFailuresFree; i++ {
		if _, err := s.app.SignIn("owner@zouk.example", "wrong password"); codeOf(err) != ledger.CodeUnauthorized {
			t.Fatalf("wrong password %d: %v", i+1, err)
		}
	}
	_, err := s.app.SignIn("owner@zouk.example", goodPassword)
	if e := ledger.AsError(err); err == nil || e.Code != ledger.CodeRateLimited || e.RetryAfterSeconds <= 0 {
		t.Fatalf("locked out: %v", err)
	}
}

// Owners, and only owners, invite, change roles and remove members;
// nobody removes themself.
func TestTeam(t *testing.T) {
	s := newStack(t, stackOptions{})
	owner := s.firstOwner(t, "owner@zouk.example")
	me := app.Caller{OrgID: s.org, Member: owner.Member.ID}
	link := s.app.InviteMember(me, "dev@zouk.example", team.RoleDeveloper)
	mustApply(t, "invite", link.Reply)
	if team.InvitationOf(link.Result).InvitedBy != owner.Member.ID {
		t.Fatalf("invitation %+v", team.InvitationOf(link.Result))
	}
	dev, err := s.app.AcceptInvitation(app.Acceptance{Token: link.Token, Email: "ignored@zouk.example", Password: "dev tractor sings"})
	if err != nil || dev.Member.Email != "dev@zouk.example" || dev.Member.Role != team.RoleDeveloper {
		t.Fatalf("the invited member: %+v %v", dev.Member, err)
	}
	revoked := s.app.InviteMember(me, "later@zouk.example", team.RoleViewer)
	mustApply(t, "second invitation", revoked.Reply)
	for _, c := range []struct {
		name string
		r    func() ledger.Code
		want ledger.Code
	}{
		{"a developer invites", func() ledger.Code {
			return replyCode(t, s.app.InviteMember(app.Caller{OrgID: s.org, Member: dev.Member.ID}, "x@zouk.example", team.RoleOwner).Reply)
		}, ledger.CodeForbidden},
		{"a developer makes themself owner", func() ledger.Code {
			return replyCode(t, s.app.SetMemberRole(app.Caller{OrgID: s.org, Member: dev.Member.ID}, dev.Member.ID, team.RoleOwner))
		}, ledger.CodeForbidden},
		{"an owner of another organization", func() ledger.Code {
			return replyCode(t, s.app.RemoveMember(app.Caller{OrgID: "org_other", Member: owner.Member.ID}, dev.Member.ID))
		}, ledger.CodeForbidden},
		{"revoke an invitation", func() ledger.Code {
			return replyCode(t, s.app.RevokeInvitation(me, team.InvitationOf(revoked.Result).ID))
		}, ""},
		{"make the developer a viewer", func() ledger.Code {
			return replyCode(t, s.app.SetMemberRole(me, dev.Member.ID, team.RoleViewer))
		}, ""},
		{"the only owner a viewer", func() ledger.Code {
			return replyCode(t, s.app.SetMemberRole(me, owner.Member.ID, team.RoleViewer))
		}, ledger.CodeConflict},
		{"remove oneself", func() ledger.Code { return replyCode(t, s.app.RemoveMember(me, owner.Member.ID)) }, ledger.CodeConflict},
		{"remove the viewer", func() ledger.Code { return replyCode(t, s.app.RemoveMember(me, dev.Member.ID)) }, ""},
	} {
		if got := c.r(); got != c.want {
			t.Fatalf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if _, _, ok := s.app.DashboardSession(dev.Token); ok {
		t.Fatal("a removed member's session still authenticates")
	}
	if _, ok := s.app.PendingInvitation(revoked.Token); ok {
		t.Fatal("a revoked invitation still works")
	}
}

// A member changes their password with the current one; a wrong one
// counts as a failed sign-in; the session it is made from goes on.
func TestChangePassword(t *testing.T) {
	s := newStack(t, stackOptions{})
	owner := s.firstOwner(t, "owner@zouk.example")
	other, err := s.app.SignIn("owner@zouk.example", goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	me := app.Caller{OrgID: s.org, Member: owner.Member.ID}
	const next = "indigo bicycle hums"
	for _, c := range []struct {
		name string
		in   app.PasswordChange
		want ledger.Code
	}{
		{"a wrong current password", app.PasswordChange{Current: "wrong", New: next, Confirm: next}, ledger.CodeForbidden},
		{"confirmation differs", app.PasswordChange{Current: goodPassword, New: next, Confirm: next + "x"}, ledger.CodeValidation},
		{"the same again", app.PasswordChange{Current: goodPassword, New: goodPassword, Confirm: goodPassword}, ledger.CodeValidation},
		{"too short", app.PasswordChange{Current: goodPassword, New: "short", Confirm: "short"}, ledger.CodeValidation},
		{"changed", app.PasswordChange{Current: goodPassword, New: next, Confirm: next, KeepSessionID: owner.ID}, ""},
	} {
		if got := codeOf(s.app.ChangePassword(me, c.in)); got != c.want {
			t.Fatalf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if _, _, ok := s.app.DashboardSession(owner.Token); !ok {
		t.Fatal("the session the change was made from ended")
	}
	if _, _, ok := s.app.DashboardSession(other.Token); ok {
		t.Fatal("another session outlived the change")
	}
	if _, err := s.app.SignIn("owner@zouk.example", next); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	if err := s.app.ChangePassword(app.Caller{OrgID: s.org, Member: "mem_unknown"}, app.PasswordChange{}); codeOf(err) != ledger.CodeNotFound {
		t.Fatalf("an unknown member: %v", err)
	}
}

// A password reset link of the operator's sets a member's password.
func TestPasswordReset(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.firstOwner(t, "owner@zouk.example")
	if l := s.app.CreatePasswordReset(app.Caller{}, "org_unknown", "owner@zouk.example"); l.Result.Err == nil || l.Result.Err.Code != ledger.CodeNotFound {
		t.Fatalf("an unknown organization: %v", l.Result.Err)
	}
	link := s.app.CreatePasswordReset(app.Caller{}, s.org, "owner@zouk.example")
	mustApply(t, "reset link", link.Reply)
	if _, err := s.app.AcceptInvitation(app.Acceptance{Token: link.Token, Password: "indigo bicycle hums"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.app.SignIn("owner@zouk.example", "indigo bicycle hums"); err != nil {
		t.Fatalf("the reset password: %v", err)
	}
}
