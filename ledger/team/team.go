// Package team is the ledger's dashboard team: the people who sign in to
// the dashboard of an organization, with a role, a password (only its
// argon2id hash, drawn and checked by the front end: hashing needs a
// random salt, which Apply may not draw), the invitations that bring them
// in, and their sessions (only the SHA-256 of each session token). It is a
// feature of the ledger's kernel (ledger/feature.go): its commands are
// applied by ledger.State.Apply in log order like every other, so a member
// signs in through any node and a session holds on every node, and its
// records are kept in the state store under tags ledger.TagMember,
// ledger.TagInvitation and ledger.TagDashboardSession.
//
// An email address is a member of at most one organization in the
// deployment: sign-in asks for the email and the password only.
package team

import (
	"slices"
	"strings"

	"payments/ledger"
)

// The roles a member holds.
const (
	RoleOwner     = "owner"     // everything, the team and API keys included
	RoleDeveloper = "developer" // everything but the team and creating or revoking API keys
	RoleViewer    = "viewer"    // reads only
)

// ValidRole reports whether role is one of the roles.
func ValidRole(role string) bool {
	return role == RoleOwner || role == RoleDeveloper || role == RoleViewer
}

// Member is one person's membership of an organization.
type Member struct {
	ID           string
	OrgID        string
	Email        string // lowercased
	Role         string
	PasswordHash string // argon2id, in its PHC string form
	Removed      bool   // removed from the team: signs in no more
	// Failed sign-ins since the last success, and until when the member
	// may not sign in (leader's unix milliseconds): the lock-out.
	FailedSignIns int64
	LockedUntil   int64
	CreatedAt     int64
	UpdatedAt     int64
}

// Invitation is a one-time link that makes a member: an owner's invitation
// of an email address to a role, or the setup link a new deployment prints
// for its first owner (Setup: no email, role owner, usable only while the
// organization has no member).
type Invitation struct {
	ID         string
	OrgID      string
	Email      string // "" for a setup link: the first owner gives theirs
	Role       string
	Setup      bool
	TokenHash  string // SHA-256 of the link's token, 32 bytes
	InvitedBy  string // the inviting member; "" for a setup link
	CreatedAt  int64
	ExpiresAt  int64
	AcceptedAt int64 // 0 while pending
	MemberID   string
	Revoked    bool
	// Reset: a password reset link for the existing member Email (an
	// appended field, ledger/doc.go), not an invitation.
	Reset bool
}

// Pending reports whether the invitation can still be accepted at now.
func (i *Invitation) Pending(now int64) bool {
	return i.AcceptedAt == 0 && !i.Revoked && now < i.ExpiresAt
}

// Session is a signed-in member's dashboard session: the cookie carries
// the token, the state only its hash.
type Session struct {
	ID        string
	OrgID     string
	MemberID  string
	TokenHash string // SHA-256 of the session token, 32 bytes
	CreatedAt int64
	ExpiresAt int64
	Ended     bool // signed out, or closed by a later sign-in or the member's removal
	EndedAt   int64
}

// Live reports whether the session authenticates at now.
func (d *Session) Live(now int64) bool { return !d.Ended && now < d.ExpiresAt }

// Bounds and the lock-out's schedule.
const (
	MembersPerOrganizationMax     = 1000
	InvitationsPerOrganizationMax = 1000
	// SessionsPerMemberMax bounds a member's live sessions: a sign-in
	// past it ends the oldest.
	SessionsPerMemberMax = 10
	// SignInFailuresFree failed sign-ins in a row lock nothing; each one
	// after locks the member out for SignInLockBase, doubled per further
	// failure, up to SignInLockMax.
	SignInFailuresFree = 5
	SignInLockBase     = 30_000    // milliseconds
	SignInLockMax      = 3_600_000 // an hour
	emailLenMax        = 254
)

// Command kinds of the team (range 100–109, see ledger/extend.go).
const (
	KindCreateInvitation    ledger.Kind = 100
	KindAcceptInvitation    ledger.Kind = 101
	KindRevokeInvitation    ledger.Kind = 102
	KindStartSession        ledger.Kind = 103
	KindEndSession          ledger.Kind = 104
	KindRecordSignInFailure ledger.Kind = 105
	KindSetRole             ledger.Kind = 106
	KindRemoveMember        ledger.Kind = 107
	KindChangePassword      ledger.Kind = 108
	KindCreatePasswordReset ledger.Kind = 109
)

// CreateInvitation issues an invitation (Setup: the first owner's link).
type CreateInvitation struct {
	At        int64
	ID        string
	OrgID     string
	Email     string
	Role      string
	Setup     bool
	TokenHash string
	InvitedBy string
	ExpiresAt int64
}

// AcceptInvitation makes the invited member, with the password they chose
// (its hash). Email is the first owner's, for a setup link; an invitation
// carries its own.
type AcceptInvitation struct {
	At           int64
	TokenHash    string
	MemberID     string
	Email        string
	PasswordHash string
}

// RevokeInvitation withdraws a pending invitation.
type RevokeInvitation struct {
	At    int64
	OrgID string
	ID    string
}

// StartSession signs a member in: the front end checked the password. It
// clears the member's failed sign-ins.
type StartSession struct {
	At        int64
	ID        string
	MemberID  string
	TokenHash string
	ExpiresAt int64
}

// EndSession signs a session out.
type EndSession struct {
	At int64
	ID string
}

// RecordSignInFailure counts a wrong password against a member, and locks
// the member out past SignInFailuresFree.
type RecordSignInFailure struct {
	At       int64
	MemberID string
}

// SetRole changes a member's role; an organization keeps an owner.
type SetRole struct {
	At       int64
	OrgID    string
	MemberID string
	Role     string
}

// RemoveMember takes a member off the team and ends their sessions; an
// organization keeps an owner.
type RemoveMember struct {
	At       int64
	OrgID    string
	MemberID string
}

// ChangePassword sets a member's new password and ends every other
// session of theirs, so that whoever held one must sign in with it; the
// session KeepSessionID, the one the change was made from, goes on. It
// clears the member's failed sign-ins. The current password was checked
// by the node that proposed it: the ledger sees hashes only.
type ChangePassword struct {
	At            int64
	OrgID         string
	MemberID      string
	PasswordHash  string
	KeepSessionID string
}

// CreatePasswordReset issues a one-time link that sets the password of the
// member with Email: the operator's way back in for a member who lost
// theirs (an organization's only owner above all; others can be removed
// and invited again). Accepting it sets the password, clears the lock-out
// and ends the member's sessions; a newer link revokes the member's
// earlier pending ones.
type CreatePasswordReset struct {
	At        int64
	ID        string
	OrgID     string
	Email     string
	TokenHash string
	ExpiresAt int64
}

func (*CreateInvitation) Kind() ledger.Kind    { return KindCreateInvitation }
func (*AcceptInvitation) Kind() ledger.Kind    { return KindAcceptInvitation }
func (*RevokeInvitation) Kind() ledger.Kind    { return KindRevokeInvitation }
func (*StartSession) Kind() ledger.Kind        { return KindStartSession }
func (*EndSession) Kind() ledger.Kind          { return KindEndSession }
func (*RecordSignInFailure) Kind() ledger.Kind { return KindRecordSignInFailure }
func (*SetRole) Kind() ledger.Kind             { return KindSetRole }
func (*RemoveMember) Kind() ledger.Kind        { return KindRemoveMember }
func (*ChangePassword) Kind() ledger.Kind      { return KindChangePassword }
func (*CreatePasswordReset) Kind() ledger.Kind { return KindCreatePasswordReset }

// outcome is what a team command leaves in ledger.Result.Value: the
// records it made or changed (an accepted invitation both the member and
// the invitation; a sign-in the member and the session).
type outcome struct {
	member     *Member
	invitation *Invitation
	session    *Session
}

// outcomeOf is what a team command left in res: empty for a refusal or
// another feature's result.
func outcomeOf(res ledger.Result) outcome {
	if o, _ := res.Value.(*outcome); o != nil {
		return *o
	}
	return outcome{}
}

// MemberOf returns the member a command made or changed, or nil.
func MemberOf(res ledger.Result) *Member { return outcomeOf(res).member }

// InvitationOf returns the invitation a command made or changed, or nil.
func InvitationOf(res ledger.Result) *Invitation { return outcomeOf(res).invitation }

// SessionOf returns the session a command started or ended, or nil.
func SessionOf(res ledger.Result) *Session { return outcomeOf(res).session }

func refused(err *ledger.Error) ledger.Result { return ledger.Result{Err: err} }

func done(o outcome) ledger.Result { return ledger.Result{Value: &o} }

// Lookup index names.
const (
	indexEmail     byte = 'e' // a member's lowercased email
	indexTokenHash byte = 'h' // an invitation's or a session's token hash
)

// Members and invitations stay open for good (they grow with teams);
// a session leaves memory when it ends.
var (
	memberKind = ledger.NewRecordKind(ledger.RecordSpec[Member]{
		Tag: ledger.TagMember, Name: "member",
		ID:      func(m *Member) (string, string) { return m.ID, m.OrgID },
		Fields:  (*Member).fields,
		Lookups: []ledger.Lookup[Member]{{Name: indexEmail, Key: func(m *Member) string { return m.Email }}},
	})
	invitationKind = ledger.NewRecordKind(ledger.RecordSpec[Invitation]{
		Tag: ledger.TagInvitation, Name: "invitation",
		ID:      func(i *Invitation) (string, string) { return i.ID, i.OrgID },
		Fields:  (*Invitation).fields,
		Lookups: []ledger.Lookup[Invitation]{{Name: indexTokenHash, Key: func(i *Invitation) string { return i.TokenHash }}},
	})
	sessionKind = ledger.NewRecordKind(ledger.RecordSpec[Session]{
		Tag: ledger.TagDashboardSession, Name: "dashboard session",
		ID:      func(d *Session) (string, string) { return d.ID, d.OrgID },
		Fields:  (*Session).fields,
		Open:    func(d *Session) bool { return !d.Ended },
		Lookups: []ledger.Lookup[Session]{{Name: indexTokenHash, Key: func(d *Session) string { return d.TokenHash }}},
	})
)

// book is what the feature keeps in a State: the members, invitations and
// sessions.
type book struct {
	members     ledger.Store[Member]
	invitations ledger.Store[Invitation]
	sessions    ledger.Store[Session]
	// liveSessions lists each member's sessions not ended, oldest first.
	liveSessions map[string][]string
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{
		members:      ledger.AddStore(s, memberKind),
		invitations:  ledger.AddStore(s, invitationKind),
		sessions:     ledger.AddStore(s, sessionKind),
		liveSessions: make(map[string][]string),
	}
	b.sessions.OnLoad(func(d *Session) {
		b.liveSessions[d.MemberID] = append(b.liveSessions[d.MemberID], d.ID)
	})
	return b
})

// NormalizeEmail is an email address as members are found by.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// checkEmail validates an email address's shape: the front end checked
// it too; this is the rule the log keeps.
func checkEmail(email string) *ledger.Error {
	at := strings.LastIndexByte(email, '@')
	if at < 1 || at == len(email)-1 || len(email) > emailLenMax || email != NormalizeEmail(email) ||
		strings.ContainsAny(email, " \t\r\n<>\"") {
		return ledger.FieldInvalid("email", "is not an email address")
	}
	return nil
}

func checkTokenHash(h string) *ledger.Error {
	if len(h) != 32 {
		return ledger.Errorf(ledger.CodeValidation, "a token hash is 32 bytes")
	}
	return nil
}

func (c *CreateInvitation) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if err := s.CheckOrg(c.OrgID); err != nil {
		return refused(err)
	}
	if err := b.checkNewLink(c.ID, c.TokenHash); err != nil {
		return refused(err)
	}
	if !ValidRole(c.Role) {
		return refused(ledger.FieldInvalid("role", "must be owner, developer or viewer"))
	}
	if c.ExpiresAt <= c.At {
		return refused(ledger.Errorf(ledger.CodeValidation, "an invitation expires after it is made"))
	}
	if c.Setup {
		if c.Email != "" || c.Role != RoleOwner || c.InvitedBy != "" {
			return refused(ledger.Errorf(ledger.CodeValidation, "a setup link invites an owner, by nobody, to no address"))
		}
		if b.members.Count(c.OrgID) > 0 {
			return refused(ledger.Errorf(ledger.CodeConflict, "the organization has members: owners invite the others"))
		}
	} else {
		if err := checkEmail(c.Email); err != nil {
			return refused(err)
		}
		inviter, ok := b.members.Owned(c.OrgID, c.InvitedBy)
		if !ok || inviter.Removed || inviter.Role != RoleOwner {
			return refused(ledger.Errorf(ledger.CodeForbidden, "only an owner of the organization invites members"))
		}
		if m, ok := b.members.Find(indexEmail, c.Email); ok && !m.Removed {
			return refused(ledger.Errorf(ledger.CodeConflict, "%s is already a member of an organization", c.Email))
		}
	}
	if b.invitations.Count(c.OrgID) >= InvitationsPerOrganizationMax {
		return refused(ledger.Errorf(ledger.CodeValidation, "an organization has at most %d invitations", InvitationsPerOrganizationMax))
	}
	inv := Invitation{ID: c.ID, OrgID: c.OrgID, Email: c.Email, Role: c.Role, Setup: c.Setup,
		TokenHash: c.TokenHash, InvitedBy: c.InvitedBy, CreatedAt: c.At, ExpiresAt: c.ExpiresAt}
	b.invitations.Insert(inv)
	return done(outcome{invitation: &inv})
}

func (c *AcceptInvitation) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	inv, ok := b.invitations.Find(indexTokenHash, c.TokenHash)
	if !ok || !inv.Pending(c.At) {
		return refused(ledger.Errorf(ledger.CodeNotFound, "This invitation link is unknown, used or expired"))
	}
	if !strings.HasPrefix(c.PasswordHash, "$argon2id$") {
		return refused(ledger.Errorf(ledger.CodeValidation, "a password is kept as its argon2id hash"))
	}
	if inv.Reset {
		return b.acceptReset(inv, c)
	}
	email := inv.Email
	if inv.Setup {
		if b.members.Count(inv.OrgID) > 0 {
			return refused(ledger.Errorf(ledger.CodeConflict, "the organization has its first owner already: sign in"))
		}
		email = c.Email
	}
	if err := checkEmail(email); err != nil {
		return refused(err)
	}
	m, exists := b.members.Find(indexEmail, email)
	switch {
	case exists && !m.Removed:
		return refused(ledger.Errorf(ledger.CodeConflict, "%s is already a member of an organization", email))
	case exists && m.OrgID != inv.OrgID:
		return refused(ledger.Errorf(ledger.CodeConflict, "%s was a member of another organization", email))
	case exists: // a removed member invited back: the same member again
		m.Removed, m.Role, m.PasswordHash = false, inv.Role, c.PasswordHash
		m.FailedSignIns, m.LockedUntil, m.UpdatedAt = 0, 0, c.At
		b.members.Put(m)
	default:
		if err := ledger.CheckID(c.MemberID, "mem_"); err != nil {
			return refused(err)
		}
		if b.members.Taken(c.MemberID) {
			return refused(ledger.Errorf(ledger.CodeConflict, "member %s already exists", c.MemberID))
		}
		if b.members.Count(inv.OrgID) >= MembersPerOrganizationMax {
			return refused(ledger.Errorf(ledger.CodeValidation, "an organization has at most %d members", MembersPerOrganizationMax))
		}
		m = Member{ID: c.MemberID, OrgID: inv.OrgID, Email: email, Role: inv.Role,
			PasswordHash: c.PasswordHash, CreatedAt: c.At, UpdatedAt: c.At}
		b.members.Insert(m)
	}
	inv.AcceptedAt, inv.MemberID = c.At, m.ID
	b.invitations.Put(inv)
	return done(outcome{member: &m, invitation: &inv})
}

// acceptReset sets the password of a reset link's member, clears their
// lock-out and ends their sessions.
func (b *book) acceptReset(inv Invitation, c *AcceptInvitation) ledger.Result {
	m, ok := b.members.Find(indexEmail, inv.Email)
	if !ok || m.Removed || m.OrgID != inv.OrgID {
		return refused(ledger.Errorf(ledger.CodeNotFound, "This link's member is no longer on the team"))
	}
	m.PasswordHash, m.FailedSignIns, m.LockedUntil, m.UpdatedAt = c.PasswordHash, 0, 0, c.At
	b.members.Put(m)
	b.endSessions(m.ID, "", c.At)
	inv.AcceptedAt, inv.MemberID = c.At, m.ID
	b.invitations.Put(inv)
	return done(outcome{member: &m, invitation: &inv})
}

// checkNewLink checks the id and token hash of a new one-time link: well
// formed, and neither taken.
func (b *book) checkNewLink(id, tokenHash string) *ledger.Error {
	if err := ledger.CheckID(id, "inv_"); err != nil {
		return err
	}
	if b.invitations.Taken(id) {
		return ledger.Errorf(ledger.CodeConflict, "invitation %s already exists", id)
	}
	if err := checkTokenHash(tokenHash); err != nil {
		return err
	}
	if _, ok := b.invitations.Find(indexTokenHash, tokenHash); ok {
		return ledger.Errorf(ledger.CodeConflict, "an invitation with this token already exists")
	}
	return nil
}

func (c *CreatePasswordReset) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if err := b.checkNewLink(c.ID, c.TokenHash); err != nil {
		return refused(err)
	}
	if c.ExpiresAt <= c.At {
		return refused(ledger.Errorf(ledger.CodeValidation, "a reset link expires after it is made"))
	}
	m, ok := b.members.Find(indexEmail, NormalizeEmail(c.Email))
	if !ok || m.Removed || m.OrgID != c.OrgID {
		return refused(ledger.Errorf(ledger.CodeNotFound, "No member of this organization has this email address"))
	}
	if b.invitations.Count(c.OrgID) >= InvitationsPerOrganizationMax {
		return refused(ledger.Errorf(ledger.CodeValidation, "an organization has at most %d invitations", InvitationsPerOrganizationMax))
	}
	var earlier []Invitation
	b.invitations.Each(c.OrgID, func(i Invitation) {
		if i.Reset && i.Email == m.Email && i.Pending(c.At) {
			earlier = append(earlier, i)
		}
	})
	for _, i := range earlier {
		i.Revoked = true
		b.invitations.Put(i)
	}
	inv := Invitation{ID: c.ID, OrgID: c.OrgID, Email: m.Email, Role: m.Role, Reset: true,
		TokenHash: c.TokenHash, CreatedAt: c.At, ExpiresAt: c.ExpiresAt}
	b.invitations.Insert(inv)
	return done(outcome{invitation: &inv})
}

func (c *RevokeInvitation) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	inv, ok := b.invitations.Owned(c.OrgID, c.ID)
	if !ok {
		return refused(ledger.Errorf(ledger.CodeNotFound, "Invitation not found"))
	}
	if inv.AcceptedAt != 0 {
		return refused(ledger.Errorf(ledger.CodeConflict, "the invitation was accepted: remove the member instead"))
	}
	if !inv.Revoked {
		inv.Revoked = true
		b.invitations.Put(inv)
	}
	return done(outcome{invitation: &inv})
}

func (c *StartSession) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	if err := ledger.CheckID(c.ID, "dss_"); err != nil {
		return refused(err)
	}
	if err := checkTokenHash(c.TokenHash); err != nil {
		return refused(err)
	}
	if b.sessions.Taken(c.ID) {
		return refused(ledger.Errorf(ledger.CodeConflict, "session %s already exists", c.ID))
	}
	if _, ok := b.sessions.Find(indexTokenHash, c.TokenHash); ok {
		return refused(ledger.Errorf(ledger.CodeConflict, "a session with this token already exists"))
	}
	m, ok := b.members.Get(c.MemberID)
	if !ok || m.Removed {
		return refused(ledger.Errorf(ledger.CodeNotFound, "Member not found"))
	}
	if c.At < m.LockedUntil {
		return refused(ledger.Errorf(ledger.CodeRateLimited, "too many failed sign-ins: locked out for now"))
	}
	if c.ExpiresAt <= c.At {
		return refused(ledger.Errorf(ledger.CodeValidation, "a session expires after it starts"))
	}
	// End the member's expired sessions, then the oldest past the bound.
	live := b.liveSessions[m.ID]
	kept := live[:0]
	for _, id := range live {
		if d, ok := b.sessions.Get(id); ok && d.Live(c.At) {
			kept = append(kept, id)
		} else if ok {
			b.end(&d, c.At)
		}
	}
	for len(kept) >= SessionsPerMemberMax {
		if d, ok := b.sessions.Get(kept[0]); ok {
			b.end(&d, c.At)
		}
		kept = kept[1:]
	}
	d := Session{ID: c.ID, OrgID: m.OrgID, MemberID: m.ID, TokenHash: c.TokenHash,
		CreatedAt: c.At, ExpiresAt: c.ExpiresAt}
	b.sessions.Insert(d)
	b.liveSessions[m.ID] = append(slices.Clone(kept), d.ID)
	if m.FailedSignIns != 0 || m.LockedUntil != 0 {
		m.FailedSignIns, m.LockedUntil = 0, 0
		b.members.Put(m)
	}
	return done(outcome{member: &m, session: &d})
}

// end ends a session (the caller keeps liveSessions).
func (b *book) end(d *Session, at int64) {
	if d.Ended {
		return
	}
	d.Ended, d.EndedAt = true, at
	b.sessions.Put(*d)
}

func (c *EndSession) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	d, ok := b.sessions.Get(c.ID)
	if !ok {
		return refused(ledger.Errorf(ledger.CodeNotFound, "Session not found"))
	}
	b.end(&d, c.At)
	b.liveSessions[d.MemberID] = slices.DeleteFunc(b.liveSessions[d.MemberID], func(id string) bool { return id == d.ID })
	if len(b.liveSessions[d.MemberID]) == 0 {
		delete(b.liveSessions, d.MemberID)
	}
	return done(outcome{session: &d})
}

// SignInLock is how long a member is locked out after failures failed
// sign-ins in a row: nothing up to SignInFailuresFree, then SignInLockBase
// doubled per further failure, up to SignInLockMax.
func SignInLock(failures int64) int64 {
	if failures < SignInFailuresFree {
		return 0
	}
	lock := int64(SignInLockBase)
	for i := int64(SignInFailuresFree); i < failures && lock < SignInLockMax; i++ {
		lock *= 2
	}
	return min(lock, SignInLockMax)
}

func (c *RecordSignInFailure) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	m, ok := b.members.Get(c.MemberID)
	if !ok {
		return refused(ledger.Errorf(ledger.CodeNotFound, "Member not found"))
	}
	m.FailedSignIns++
	if lock := SignInLock(m.FailedSignIns); lock > 0 {
		m.LockedUntil = c.At + lock
	}
	b.members.Put(m)
	return done(outcome{member: &m})
}

// member returns the feature's book in s and org's member with id, or the
// not_found refusal: a removed member is as unknown as another
// organization's.
func member(s *ledger.State, org, id string) (*book, Member, *ledger.Error) {
	b := feature.Of(s)
	m, ok := b.members.Owned(org, id)
	if !ok || m.Removed {
		return b, m, ledger.Errorf(ledger.CodeNotFound, "Member not found")
	}
	return b, m, nil
}

// owners counts an organization's owners still on the team.
func (b *book) owners(org string) int {
	n := 0
	b.members.Each(org, func(m Member) {
		if !m.Removed && m.Role == RoleOwner {
			n++
		}
	})
	return n
}

func (c *SetRole) Apply(s *ledger.State) ledger.Result {
	if !ValidRole(c.Role) {
		return refused(ledger.FieldInvalid("role", "must be owner, developer or viewer"))
	}
	b, m, err := member(s, c.OrgID, c.MemberID)
	if err != nil {
		return refused(err)
	}
	if m.Role == RoleOwner && c.Role != RoleOwner && b.owners(c.OrgID) == 1 {
		return refused(ledger.Errorf(ledger.CodeConflict, "an organization keeps at least one owner"))
	}
	if m.Role != c.Role {
		m.Role, m.UpdatedAt = c.Role, c.At
		b.members.Put(m)
	}
	return done(outcome{member: &m})
}

func (c *RemoveMember) Apply(s *ledger.State) ledger.Result {
	b, m, err := member(s, c.OrgID, c.MemberID)
	if err != nil {
		return refused(err)
	}
	if m.Role == RoleOwner && b.owners(c.OrgID) == 1 {
		return refused(ledger.Errorf(ledger.CodeConflict, "an organization keeps at least one owner"))
	}
	m.Removed, m.UpdatedAt = true, c.At
	b.members.Put(m)
	b.endSessions(m.ID, "", c.At)
	return done(outcome{member: &m})
}

func (c *ChangePassword) Apply(s *ledger.State) ledger.Result {
	b, m, err := member(s, c.OrgID, c.MemberID)
	if err != nil {
		return refused(err)
	}
	if !strings.HasPrefix(c.PasswordHash, "$argon2id$") {
		return refused(ledger.Errorf(ledger.CodeValidation, "a password is stored as an argon2id hash"))
	}
	m.PasswordHash, m.FailedSignIns, m.LockedUntil, m.UpdatedAt = c.PasswordHash, 0, 0, c.At
	b.members.Put(m)
	b.endSessions(m.ID, c.KeepSessionID, c.At)
	return done(outcome{member: &m})
}

// endSessions ends a member's live sessions at at, but keep's ("": none).
func (b *book) endSessions(memberID, keep string, at int64) {
	var kept []string
	for _, id := range b.liveSessions[memberID] {
		d, ok := b.sessions.Get(id)
		switch {
		case !ok:
		case id == keep && d.Live(at):
			kept = append(kept, id)
		default:
			b.end(&d, at)
		}
	}
	if len(kept) == 0 {
		delete(b.liveSessions, memberID)
	} else {
		b.liveSessions[memberID] = kept
	}
}

// Reads, from the committed state.

// MemberByEmail finds a member by email address, in any organization.
func MemberByEmail(r *ledger.Reader, email string) (Member, bool) {
	return ledger.ReadFind(r, memberKind, indexEmail, NormalizeEmail(email))
}

// MemberByID returns a member by id, in any organization.
func MemberByID(r *ledger.Reader, id string) (Member, bool) {
	return ledger.ReadRecord(r, memberKind, id)
}

// Members lists an organization's members, removed ones included, oldest
// first.
func Members(r *ledger.Reader, orgID string) []Member {
	p := ledger.ReadList(r, memberKind, orgID, ledger.CursorStart, MembersPerOrganizationMax, nil)
	slices.Reverse(p.Items)
	return p.Items
}

// Invitations lists an organization's invitations, oldest first.
func Invitations(r *ledger.Reader, orgID string) []Invitation {
	p := ledger.ReadList(r, invitationKind, orgID, ledger.CursorStart, InvitationsPerOrganizationMax, nil)
	slices.Reverse(p.Items)
	return p.Items
}

// InvitationByToken finds an invitation by the SHA-256 of its token.
func InvitationByToken(r *ledger.Reader, hash [32]byte) (Invitation, bool) {
	return ledger.ReadFind(r, invitationKind, indexTokenHash, string(hash[:]))
}

// SessionByToken finds a session by the SHA-256 of its token.
func SessionByToken(r *ledger.Reader, hash [32]byte) (Session, bool) {
	return ledger.ReadFind(r, sessionKind, indexTokenHash, string(hash[:]))
}

// The codecs: each Fields method names the fields once, in their frozen
// order, and both writes and reads them.

func (c *CreateInvitation) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Email, &c.Role)
	f.Bool(&c.Setup)
	f.Str(&c.TokenHash, &c.InvitedBy)
	f.Varint(&c.ExpiresAt)
}

func (c *AcceptInvitation) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.TokenHash, &c.MemberID, &c.Email, &c.PasswordHash)
}

func (c *RevokeInvitation) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.ID)
}

func (c *StartSession) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.MemberID, &c.TokenHash)
	f.Varint(&c.ExpiresAt)
}

func (c *EndSession) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
}

func (c *RecordSignInFailure) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.MemberID)
}

func (c *SetRole) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.MemberID, &c.Role)
}

func (c *RemoveMember) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.MemberID)
}

func (c *ChangePassword) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.MemberID, &c.PasswordHash, &c.KeepSessionID)
}

func (c *CreatePasswordReset) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Email, &c.TokenHash)
	f.Varint(&c.ExpiresAt)
}

func (c *CreateInvitation) Encode(e *ledger.Encoder)    { c.Fields(e.Codec()) }
func (c *AcceptInvitation) Encode(e *ledger.Encoder)    { c.Fields(e.Codec()) }
func (c *RevokeInvitation) Encode(e *ledger.Encoder)    { c.Fields(e.Codec()) }
func (c *StartSession) Encode(e *ledger.Encoder)        { c.Fields(e.Codec()) }
func (c *EndSession) Encode(e *ledger.Encoder)          { c.Fields(e.Codec()) }
func (c *RecordSignInFailure) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }
func (c *SetRole) Encode(e *ledger.Encoder)             { c.Fields(e.Codec()) }
func (c *RemoveMember) Encode(e *ledger.Encoder)        { c.Fields(e.Codec()) }
func (c *ChangePassword) Encode(e *ledger.Encoder)      { c.Fields(e.Codec()) }
func (c *CreatePasswordReset) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (m *Member) fields(f *ledger.Codec) {
	f.Str(&m.ID, &m.OrgID, &m.Email, &m.Role, &m.PasswordHash)
	f.Bool(&m.Removed)
	f.Varint(&m.FailedSignIns, &m.LockedUntil, &m.CreatedAt, &m.UpdatedAt)
}

// fields: Reset is appended (ledger/doc.go): an invitation or setup link
// without it is format 1's.
func (i *Invitation) fields(f *ledger.Codec) {
	f.Str(&i.ID, &i.OrgID, &i.Email, &i.Role)
	f.Bool(&i.Setup)
	f.Str(&i.TokenHash, &i.InvitedBy)
	f.Varint(&i.CreatedAt, &i.ExpiresAt, &i.AcceptedAt)
	f.Str(&i.MemberID)
	f.Bool(&i.Revoked)
	f.AppendedFlag(&i.Reset)
}

func (d *Session) fields(f *ledger.Codec) {
	f.Str(&d.ID, &d.OrgID, &d.MemberID, &d.TokenHash)
	f.Varint(&d.CreatedAt, &d.ExpiresAt)
	f.Bool(&d.Ended)
	f.Varint(&d.EndedAt)
}

func init() {
	ledger.RegisterFieldsCommands(
		ledger.Fresh[CreateInvitation], ledger.Fresh[AcceptInvitation],
		ledger.Fresh[RevokeInvitation], ledger.Fresh[StartSession],
		ledger.Fresh[EndSession], ledger.Fresh[RecordSignInFailure],
		ledger.Fresh[SetRole], ledger.Fresh[RemoveMember], ledger.Fresh[ChangePassword],
		ledger.Fresh[CreatePasswordReset])
}
