package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/team"
)

// The dashboard's team: members, their invitations and one-time links,
// their sessions and passwords. The ledger keeps the rules (an
// organization keeps an owner; only owners invite; failed sign-ins lock a
// member out) and only the SHA-256 of every token and the argon2id hash of
// every password; the tokens are drawn here, returned once, and carried by
// the member's browser (a cookie, a link).

// Lifetimes of sessions and links.
const (
	// DashboardSessionLifetime is how long a session lasts from sign-in,
	// whatever its use: then the member signs in again.
	DashboardSessionLifetime = 12 * time.Hour
	// invitationLifetime is how long an owner's invitation link works.
	invitationLifetime = 7 * 24 * time.Hour
	// passwordResetLinkLifetime is how long a password reset link works.
	passwordResetLinkLifetime = 24 * time.Hour
)

// TokenLen is the length of the tokens NewToken draws: a cookie or a link
// of another length names nothing.
const TokenLen = 43

// NewToken draws a secret token: 32 random bytes, base64url without
// padding (TokenLen characters), for a session cookie, a one-time link, or
// the token the front end derives its forms' CSRF tokens from.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenHash is what the ledger keeps of a token, and finds it by.
func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return string(h[:])
}

// Link is a one-time link just issued: the commit's reply, the link's
// token (which exists only here) and when it stops working.
type Link struct {
	actors.Reply
	Token     string
	ExpiresAt time.Time
}

// InviteMember invites email to the caller's organization in role, by a
// link that works for a week; the caller is an owner.
func (a *App) InviteMember(c Caller, email, role string) Link {
	if e := a.owner(c); e != nil {
		return Link{Reply: refused(e)}
	}
	token := NewToken()
	now := a.sys.Now()
	expires := now.Add(invitationLifetime)
	r := a.propose(&team.CreateInvitation{
		At: now.UnixMilli(), ID: actors.NewID("inv_"), OrgID: c.OrgID, Email: email, Role: role,
		TokenHash: tokenHash(token), InvitedBy: c.Member, ExpiresAt: expires.UnixMilli(),
	})
	return Link{r, token, expires}
}

// RevokeInvitation withdraws a pending invitation of the caller's
// organization.
func (a *App) RevokeInvitation(c Caller, id string) actors.Reply {
	if e := a.owner(c); e != nil {
		return refused(e)
	}
	return a.propose(&team.RevokeInvitation{At: a.sys.Now().UnixMilli(), OrgID: c.OrgID, ID: id})
}

// SetMemberRole changes the role of a member of the caller's organization.
func (a *App) SetMemberRole(c Caller, memberID, role string) actors.Reply {
	if e := a.owner(c); e != nil {
		return refused(e)
	}
	return a.propose(&team.SetRole{At: a.sys.Now().UnixMilli(), OrgID: c.OrgID, MemberID: memberID, Role: role})
}

// RemoveMember takes a member off the caller's team and ends their
// sessions. A member does not remove themself (conflict): another owner
// does, so that an organization is never left by its last owner's slip.
func (a *App) RemoveMember(c Caller, memberID string) actors.Reply {
	if e := a.owner(c); e != nil {
		return refused(e)
	}
	if memberID == c.Member {
		return refused(&ledger.Error{Code: ledger.CodeConflict, Message: "You cannot remove yourself: another owner can."})
	}
	return a.propose(&team.RemoveMember{At: a.sys.Now().UnixMilli(), OrgID: c.OrgID, MemberID: memberID})
}

// CreatePasswordReset issues, for the operator, a one-time link that sets
// a new password for the member of organization orgID with email, and ends
// their sessions; a newer link revokes the member's older ones.
func (a *App) CreatePasswordReset(_ Caller, orgID, email string) Link {
	if _, ok := a.sys.Reader().Organization(orgID); !ok {
		return Link{Reply: refused(errOrganizationNotFound)}
	}
	token := NewToken()
	now := a.sys.Now()
	expires := now.Add(passwordResetLinkLifetime)
	r := a.propose(&team.CreatePasswordReset{At: now.UnixMilli(), ID: actors.NewID("inv_"), OrgID: orgID,
		Email: email, TokenHash: tokenHash(token), ExpiresAt: expires.UnixMilli()})
	return Link{r, token, expires}
}

// DashboardSetupLink issues, for the operator, a one-time link for the
// first owner of organization orgID, which has no member yet (conflict
// otherwise).
func (a *App) DashboardSetupLink(_ Caller, orgID string) Link {
	if _, ok := a.sys.Reader().Organization(orgID); !ok {
		return Link{Reply: refused(errOrganizationNotFound)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CommitTimeout)
	defer cancel()
	token, expires, err := a.sys.IssueDashboardSetup(ctx, orgID)
	if err != nil {
		return Link{Reply: replyOf(err)}
	}
	return Link{Token: token, ExpiresAt: expires}
}

// owner refuses a caller who is not an owner of its organization: only
// owners manage the team.
func (a *App) owner(c Caller) *ledger.Error {
	m, ok := team.MemberByID(a.sys.Reader(), c.Member)
	if !ok || m.Removed || m.OrgID != c.OrgID || m.Role != team.RoleOwner {
		return &ledger.Error{Code: ledger.CodeForbidden, Message: "Only an owner manages the team."}
	}
	return nil
}

var errOrganizationNotFound = &ledger.Error{Code: ledger.CodeNotFound, Message: "Organization not found"}

// PendingInvitation returns the invitation (an owner's, a setup link or a
// password reset) whose link carries token, if it can still be accepted.
func (a *App) PendingInvitation(token string) (team.Invitation, bool) {
	if len(token) != TokenLen {
		return team.Invitation{}, false
	}
	inv, found := team.InvitationByToken(a.sys.Reader(), sha256.Sum256([]byte(token)))
	return inv, found && inv.Pending(a.sys.Now().UnixMilli())
}

// Session is a member's dashboard session just started: its token (for
// the cookie; it exists only here), id and end.
type Session struct {
	ID        string
	Token     string
	ExpiresAt time.Time
	Member    team.Member
}

// Acceptance accepts a one-time link: the member it makes (or, for a
// reset link, updates) and their password.
type Acceptance struct {
	Token string
	// Email is the first owner's address, for a setup link; an
	// invitation's and a reset's are the invitation's own.
	Email    string
	Password string
}

// AcceptInvitation accepts a pending link with a password that meets the
// rules (validation_error saying which it breaks), and signs the member in.
func (a *App) AcceptInvitation(in Acceptance) (Session, error) {
	inv, ok := a.PendingInvitation(in.Token)
	if !ok {
		return Session{}, &ledger.Error{Code: ledger.CodeNotFound, Message: "The link is unknown, was used already, or expired."}
	}
	email := inv.Email
	if inv.Setup {
		email = in.Email
	}
	if why := checkPassword(in.Password, email); why != "" {
		return Session{}, &ledger.Error{Code: ledger.CodeValidation, Message: "The password " + why + "."}
	}
	now := a.sys.Now()
	r := a.propose(&team.AcceptInvitation{
		At: now.UnixMilli(), TokenHash: tokenHash(in.Token), MemberID: actors.NewID("mem_"),
		Email: email, PasswordHash: hashPassword(in.Password),
	})
	if err := replyErr(r); err != nil {
		return Session{}, err
	}
	return a.startSession(*team.MemberOf(r.Result), now)
}

// SignIn checks a member's email and password and starts their session.
// It refuses an unknown address as it refuses a wrong password
// (unauthorized, after as long), a locked member (rate_limited, with when
// to try again) and counts a wrong password against the member (the
// ledger locks them out past a few in a row). The member the email names
// comes back with a refusal too, for the request log.
func (a *App) SignIn(email, password string) (Session, error) {
	m, found := team.MemberByEmail(a.sys.Reader(), email)
	if !found || m.Removed || email == "" {
		verifyDecoy(password)
		return Session{}, errWrongSignIn
	}
	now := a.sys.Now()
	if wait := m.LockedUntil - now.UnixMilli(); wait > 0 {
		return Session{Member: m}, locked("Too many failed sign-ins: this account is locked for ", wait)
	}
	if !a.checkCurrentPassword(&m, password, now) {
		return Session{Member: m}, errWrongSignIn
	}
	s, err := a.startSession(m, now)
	s.Member = m
	return s, err
}

var errWrongSignIn = &ledger.Error{Code: ledger.CodeUnauthorized, Message: "Wrong email or password."}

// locked is the refusal of a locked member, for wait more milliseconds.
func locked(what string, wait int64) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeRateLimited, Message: what + lockWords(wait) + ". Try again then.",
		RetryAfterSeconds: int((wait + 999) / 1000)}
}

// lockWords says a lock's remaining time in words.
func lockWords(ms int64) string {
	secs := (ms + 999) / 1000
	if secs < 90 {
		return strconv.FormatInt(secs, 10) + " seconds"
	}
	return strconv.FormatInt((secs+59)/60, 10) + " minutes"
}

// checkCurrentPassword reports whether password is m's; a wrong one counts
// as a failed sign-in.
func (a *App) checkCurrentPassword(m *team.Member, password string, now time.Time) bool {
	ok, err := VerifyPassword(m.PasswordHash, password)
	if err != nil {
		a.cfg.Logger.Error("a member's password hash is unreadable", "member", m.ID, "err", err)
	}
	if !ok {
		if err := replyErr(a.propose(&team.RecordSignInFailure{At: now.UnixMilli(), MemberID: m.ID})); err != nil {
			a.cfg.Logger.Warn("recording a failed sign-in", "member", m.ID, "err", err)
		}
	}
	return ok
}

func (a *App) startSession(m team.Member, now time.Time) (Session, error) {
	token := NewToken()
	expires := now.Add(DashboardSessionLifetime)
	r := a.propose(&team.StartSession{
		At: now.UnixMilli(), ID: actors.NewID("dss_"), MemberID: m.ID,
		TokenHash: tokenHash(token), ExpiresAt: expires.UnixMilli(),
	})
	if err := replyErr(r); err != nil {
		return Session{}, err
	}
	return Session{ID: team.SessionOf(r.Result).ID, Token: token, ExpiresAt: expires, Member: m}, nil
}

// DashboardSession returns the live session a cookie's token names and its
// member, still on the team. Both come from one pinned view: a password
// change or a removal updates the member and ends its sessions at once.
func (a *App) DashboardSession(token string) (team.Session, team.Member, bool) {
	if len(token) != TokenLen {
		return team.Session{}, team.Member{}, false
	}
	st, release := a.sys.Reader().Pinned()
	defer release()
	sess, found := team.SessionByToken(st, sha256.Sum256([]byte(token)))
	if !found || !sess.Live(a.sys.Now().UnixMilli()) {
		return team.Session{}, team.Member{}, false
	}
	m, found := team.MemberByID(st, sess.MemberID)
	if !found || m.Removed || m.OrgID != sess.OrgID {
		return team.Session{}, team.Member{}, false
	}
	return sess, m, true
}

// EndDashboardSession ends a session everywhere: signed out, or idle for
// too long. The error is a *ledger.Error or one of the actors' errors.
func (a *App) EndDashboardSession(id string) error {
	return replyErr(a.propose(&team.EndSession{At: a.sys.Now().UnixMilli(), ID: id}))
}

// PasswordChange is a signed-in member's change of their own password.
type PasswordChange struct {
	Current, New, Confirm string
	// KeepSessionID is the session the change is made from, which goes
	// on; the member's others end.
	KeepSessionID string
}

// ChangePassword changes the calling member's password. A wrong current
// one is refused (forbidden) and counts as a failed sign-in, so a stolen
// session cannot guess it past the lock-out; a locked member changes
// nothing (rate_limited); a new password that breaks the rules is refused
// (validation_error).
func (a *App) ChangePassword(c Caller, in PasswordChange) error {
	m, ok := team.MemberByID(a.sys.Reader(), c.Member)
	if !ok || m.Removed {
		return &ledger.Error{Code: ledger.CodeNotFound, Message: "Member not found"}
	}
	now := a.sys.Now()
	if wait := m.LockedUntil - now.UnixMilli(); wait > 0 {
		return locked("Too many wrong passwords: your account is locked for ", wait)
	}
	if !a.checkCurrentPassword(&m, in.Current, now) {
		return &ledger.Error{Code: ledger.CodeForbidden, Message: "The current password is wrong; nothing was changed."}
	}
	problem := ""
	switch {
	case in.New != in.Confirm:
		problem = "The two new passwords differ."
	case in.New == in.Current:
		problem = "The new password is the current one."
	default:
		if why := checkPassword(in.New, m.Email); why != "" {
			problem = "The new password " + why + "."
		}
	}
	if problem != "" {
		return &ledger.Error{Code: ledger.CodeValidation, Message: problem}
	}
	return replyErr(a.propose(&team.ChangePassword{At: now.UnixMilli(), OrgID: m.OrgID, MemberID: m.ID,
		PasswordHash: hashPassword(in.New), KeepSessionID: in.KeepSessionID}))
}

// replyErr is a reply's error: the write path's, or the ledger's refusal;
// nil when the command applied.
func replyErr(r actors.Reply) error {
	switch {
	case r.Err != nil:
		return r.Err
	case r.Result.Err != nil:
		return r.Result.Err
	}
	return nil
}
