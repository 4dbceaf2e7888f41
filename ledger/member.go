package ledger

import (
	"errors"
	"slices"
	"strings"
)

// Team members: the people who sign in to the dashboard of an
// organization, with a role, a password (only its argon2id hash, drawn and
// checked by the front end: hashing needs a random salt, which Apply may
// not draw), the invitations that bring them in, and their sessions (only
// the SHA-256 of each session token). Replicated like keys, so a member
// signs in through any node and a session holds on every node.
//
// An email address is a member of at most one organization in the
// deployment: sign-in asks for the email and the password only.

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
	// appended field, doc.go), not an invitation.
	Reset bool
}

// Pending reports whether the invitation can still be accepted at now.
func (i *Invitation) Pending(now int64) bool {
	return i.AcceptedAt == 0 && !i.Revoked && now < i.ExpiresAt
}

// DashboardSession is a signed-in member's session: the cookie carries the
// token, the state only its hash.
type DashboardSession struct {
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
func (d *DashboardSession) Live(now int64) bool { return !d.Ended && now < d.ExpiresAt }

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

// Command kinds 100–109: team members, invitations, dashboard sessions.
const (
	KindCreateInvitation      Kind = 100
	KindAcceptInvitation      Kind = 101
	KindRevokeInvitation      Kind = 102
	KindStartDashboardSession Kind = 103
	KindEndDashboardSession   Kind = 104
	KindRecordSignInFailure   Kind = 105
	KindSetMemberRole         Kind = 106
	KindRemoveMember          Kind = 107
	KindChangeMemberPassword  Kind = 108
	KindCreatePasswordReset   Kind = 109
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

// StartDashboardSession signs a member in: the front end checked the
// password. It clears the member's failed sign-ins.
type StartDashboardSession struct {
	At        int64
	ID        string
	MemberID  string
	TokenHash string
	ExpiresAt int64
}

// EndDashboardSession signs a session out.
type EndDashboardSession struct {
	At int64
	ID string
}

// RecordSignInFailure counts a wrong password against a member, and locks
// the member out past SignInFailuresFree.
type RecordSignInFailure struct {
	At       int64
	MemberID string
}

// SetMemberRole changes a member's role; an organization keeps an owner.
type SetMemberRole struct {
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

// ChangeMemberPassword sets a member's new password and ends every other
// session of theirs, so that whoever held one must sign in with it; the
// session KeepSessionID, the one the change was made from, goes on. It
// clears the member's failed sign-ins. The current password was checked
// by the node that proposed it: the ledger sees hashes only.
type ChangeMemberPassword struct {
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

func (*CreateInvitation) Kind() Kind      { return KindCreateInvitation }
func (*AcceptInvitation) Kind() Kind      { return KindAcceptInvitation }
func (*RevokeInvitation) Kind() Kind      { return KindRevokeInvitation }
func (*StartDashboardSession) Kind() Kind { return KindStartDashboardSession }
func (*EndDashboardSession) Kind() Kind   { return KindEndDashboardSession }
func (*RecordSignInFailure) Kind() Kind   { return KindRecordSignInFailure }
func (*SetMemberRole) Kind() Kind         { return KindSetMemberRole }
func (*RemoveMember) Kind() Kind          { return KindRemoveMember }
func (*ChangeMemberPassword) Kind() Kind  { return KindChangeMemberPassword }
func (*CreatePasswordReset) Kind() Kind   { return KindCreatePasswordReset }

func (c *CreateInvitation) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Email)
	f.Str(&c.Role)
	f.Bool(&c.Setup)
	f.Str(&c.TokenHash)
	f.Str(&c.InvitedBy)
	f.Varint(&c.ExpiresAt)
}

func (c *CreateInvitation) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *AcceptInvitation) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.TokenHash)
	f.Str(&c.MemberID)
	f.Str(&c.Email)
	f.Str(&c.PasswordHash)
}

func (c *AcceptInvitation) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *RevokeInvitation) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.ID)
}

func (c *RevokeInvitation) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *StartDashboardSession) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.MemberID)
	f.Str(&c.TokenHash)
	f.Varint(&c.ExpiresAt)
}

func (c *StartDashboardSession) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *EndDashboardSession) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
}

func (c *EndDashboardSession) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *RecordSignInFailure) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.MemberID)
}

func (c *RecordSignInFailure) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *SetMemberRole) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.MemberID)
	f.Str(&c.Role)
}

func (c *SetMemberRole) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *RemoveMember) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.MemberID)
}

func (c *RemoveMember) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *CreatePasswordReset) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Email)
	f.Str(&c.TokenHash)
	f.Varint(&c.ExpiresAt)
}

func (c *CreatePasswordReset) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *ChangeMemberPassword) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.MemberID)
	f.Str(&c.PasswordHash)
	f.Str(&c.KeepSessionID)
}

func (c *ChangeMemberPassword) Encode(e *Encoder) { c.fields(e.Codec()) }

func init() {
	registerFields[CreateInvitation](KindCreateInvitation)
	registerFields[AcceptInvitation](KindAcceptInvitation)
	registerFields[RevokeInvitation](KindRevokeInvitation)
	registerFields[StartDashboardSession](KindStartDashboardSession)
	registerFields[EndDashboardSession](KindEndDashboardSession)
	registerFields[RecordSignInFailure](KindRecordSignInFailure)
	registerFields[SetMemberRole](KindSetMemberRole)
	registerFields[RemoveMember](KindRemoveMember)
	registerFields[CreatePasswordReset](KindCreatePasswordReset)
	registerFields[ChangeMemberPassword](KindChangeMemberPassword)
}

// Lookup index names.
const (
	indexEmail     byte = 'e' // a member's lowercased email
	indexTokenHash byte = 'h' // an invitation's or a session's token hash
)

// Members and invitations stay open for good (they grow with teams);
// a session leaves memory when it ends.
var memberKind = &kind[Member]{
	tag: tagMember, name: "member",
	id:  func(m *Member) (string, string) { return m.ID, m.OrgID },
	enc: encodeMember, dec: decodeMember,
	lookups: []lookup[Member]{{name: indexEmail, key: func(m *Member) string { return m.Email }}},
}

var invitationKind = &kind[Invitation]{
	tag: tagInvitation, name: "invitation",
	id:  func(i *Invitation) (string, string) { return i.ID, i.OrgID },
	enc: encodeInvitation, dec: decodeInvitation,
	lookups: []lookup[Invitation]{{name: indexTokenHash, key: func(i *Invitation) string { return i.TokenHash }}},
}

var dashboardSessionKind = &kind[DashboardSession]{
	tag: tagDashboardSession, name: "dashboard session",
	id:  func(d *DashboardSession) (string, string) { return d.ID, d.OrgID },
	enc: encodeDashboardSession, dec: decodeDashboardSession,
	open: func(d *DashboardSession) bool { return !d.Ended },
	lookups: []lookup[DashboardSession]{
		{name: indexTokenHash, key: func(d *DashboardSession) string { return d.TokenHash }},
	},
}

func encodeMember(e *Encoder, m *Member) {
	e.str(m.ID)
	e.str(m.OrgID)
	e.str(m.Email)
	e.str(m.Role)
	e.str(m.PasswordHash)
	e.bool(m.Removed)
	e.varint(m.FailedSignIns)
	e.varint(m.LockedUntil)
	e.varint(m.CreatedAt)
	e.varint(m.UpdatedAt)
}

func decodeMember(d *Decoder) Member {
	return Member{ID: d.str(), OrgID: d.str(), Email: d.str(), Role: d.str(), PasswordHash: d.str(),
		Removed: d.bool(), FailedSignIns: d.varint(), LockedUntil: d.varint(), CreatedAt: d.varint(), UpdatedAt: d.varint()}
}

func encodeInvitation(e *Encoder, i *Invitation) {
	e.str(i.ID)
	e.str(i.OrgID)
	e.str(i.Email)
	e.str(i.Role)
	e.bool(i.Setup)
	e.str(i.TokenHash)
	e.str(i.InvitedBy)
	e.varint(i.CreatedAt)
	e.varint(i.ExpiresAt)
	e.varint(i.AcceptedAt)
	e.str(i.MemberID)
	e.bool(i.Revoked)
	if i.Reset { // appended (doc.go): an invitation is format 1's
		e.bool(true)
	}
}

func decodeInvitation(d *Decoder) Invitation {
	i := Invitation{ID: d.str(), OrgID: d.str(), Email: d.str(), Role: d.str(), Setup: d.bool(),
		TokenHash: d.str(), InvitedBy: d.str(), CreatedAt: d.varint(), ExpiresAt: d.varint(),
		AcceptedAt: d.varint(), MemberID: d.str(), Revoked: d.bool()}
	if d.more() {
		if i.Reset = d.bool(); !i.Reset && d.err == nil {
			d.fail(errors.New("ledger: an appended reset flag that is false")) // would not re-encode as read
		}
	}
	return i
}

func encodeDashboardSession(e *Encoder, s *DashboardSession) {
	e.str(s.ID)
	e.str(s.OrgID)
	e.str(s.MemberID)
	e.str(s.TokenHash)
	e.varint(s.CreatedAt)
	e.varint(s.ExpiresAt)
	e.bool(s.Ended)
	e.varint(s.EndedAt)
}

func decodeDashboardSession(d *Decoder) DashboardSession {
	return DashboardSession{ID: d.str(), OrgID: d.str(), MemberID: d.str(), TokenHash: d.str(),
		CreatedAt: d.varint(), ExpiresAt: d.varint(), Ended: d.bool(), EndedAt: d.varint()}
}

// teamState is the members, invitations and sessions in a State.
type teamState struct {
	members     *store[Member]
	invitations *store[Invitation]
	sessions    *store[DashboardSession]
	// liveSessions lists each member's sessions not ended, oldest first.
	liveSessions map[string][]string
}

func (s *State) initTeam() {
	t := &teamState{
		members:      addStore(s, memberKind),
		invitations:  addStore(s, invitationKind),
		sessions:     addStore(s, dashboardSessionKind),
		liveSessions: make(map[string][]string),
	}
	t.sessions.index = func(d *DashboardSession) {
		t.liveSessions[d.MemberID] = append(t.liveSessions[d.MemberID], d.ID)
	}
	s.team = t
}

// NormalizeEmail is an email address as members are found by.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// checkEmail validates an email address's shape: the front end checked
// it too; this is the rule the log keeps.
func checkEmail(email string) *Error {
	at := strings.LastIndexByte(email, '@')
	if at < 1 || at == len(email)-1 || len(email) > emailLenMax || email != NormalizeEmail(email) ||
		strings.ContainsAny(email, " \t\r\n<>\"") {
		return FieldInvalid("email", "is not an email address")
	}
	return nil
}

func checkTokenHash(h string) *Error {
	if len(h) != 32 {
		return Errorf(CodeValidation, "a token hash is 32 bytes")
	}
	return nil
}

func (c *CreateInvitation) Apply(s *State) Result {
	t := s.team
	if err := s.CheckOrg(c.OrgID); err != nil {
		return Result{Err: err}
	}
	if err := t.checkNewLink(c.ID, c.TokenHash); err != nil {
		return Result{Err: err}
	}
	if !ValidRole(c.Role) {
		return Result{Err: FieldInvalid("role", "must be owner, developer or viewer")}
	}
	if c.ExpiresAt <= c.At {
		return Result{Err: Errorf(CodeValidation, "an invitation expires after it is made")}
	}
	if c.Setup {
		if c.Email != "" || c.Role != RoleOwner || c.InvitedBy != "" {
			return Result{Err: Errorf(CodeValidation, "a setup link invites an owner, by nobody, to no address")}
		}
		if t.members.count(c.OrgID) > 0 {
			return Result{Err: Errorf(CodeConflict, "the organization has members: owners invite the others")}
		}
	} else {
		if err := checkEmail(c.Email); err != nil {
			return Result{Err: err}
		}
		inviter, ok := t.members.owned(c.OrgID, c.InvitedBy)
		if !ok || inviter.Removed || inviter.Role != RoleOwner {
			return Result{Err: Errorf(CodeForbidden, "only an owner of the organization invites members")}
		}
		if m, ok := t.members.find(indexEmail, c.Email); ok && !m.Removed {
			return Result{Err: Errorf(CodeConflict, "%s is already a member of an organization", c.Email)}
		}
	}
	if t.invitations.count(c.OrgID) >= InvitationsPerOrganizationMax {
		return Result{Err: Errorf(CodeValidation, "an organization has at most %d invitations", InvitationsPerOrganizationMax)}
	}
	inv := Invitation{ID: c.ID, OrgID: c.OrgID, Email: c.Email, Role: c.Role, Setup: c.Setup,
		TokenHash: c.TokenHash, InvitedBy: c.InvitedBy, CreatedAt: c.At, ExpiresAt: c.ExpiresAt}
	t.invitations.insert(inv)
	return Result{Invitation: &inv}
}

func (c *AcceptInvitation) Apply(s *State) Result {
	t := s.team
	inv, ok := t.invitations.find(indexTokenHash, c.TokenHash)
	if !ok || !inv.Pending(c.At) {
		return Result{Err: Errorf(CodeNotFound, "This invitation link is unknown, used or expired")}
	}
	if !strings.HasPrefix(c.PasswordHash, "$argon2id$") {
		return Result{Err: Errorf(CodeValidation, "a password is kept as its argon2id hash")}
	}
	if inv.Reset {
		return t.acceptReset(inv, c)
	}
	email := inv.Email
	if inv.Setup {
		if t.members.count(inv.OrgID) > 0 {
			return Result{Err: Errorf(CodeConflict, "the organization has its first owner already: sign in")}
		}
		email = c.Email
	}
	if err := checkEmail(email); err != nil {
		return Result{Err: err}
	}
	m, exists := t.members.find(indexEmail, email)
	switch {
	case exists && !m.Removed:
		return Result{Err: Errorf(CodeConflict, "%s is already a member of an organization", email)}
	case exists && m.OrgID != inv.OrgID:
		return Result{Err: Errorf(CodeConflict, "%s was a member of another organization", email)}
	case exists: // a removed member invited back: the same member again
		m.Removed, m.Role, m.PasswordHash = false, inv.Role, c.PasswordHash
		m.FailedSignIns, m.LockedUntil, m.UpdatedAt = 0, 0, c.At
		t.members.put(m)
	default:
		if err := CheckID(c.MemberID, "mem_"); err != nil {
			return Result{Err: err}
		}
		if t.members.taken(c.MemberID) {
			return Result{Err: Errorf(CodeConflict, "member %s already exists", c.MemberID)}
		}
		if t.members.count(inv.OrgID) >= MembersPerOrganizationMax {
			return Result{Err: Errorf(CodeValidation, "an organization has at most %d members", MembersPerOrganizationMax)}
		}
		m = Member{ID: c.MemberID, OrgID: inv.OrgID, Email: email, Role: inv.Role,
			PasswordHash: c.PasswordHash, CreatedAt: c.At, UpdatedAt: c.At}
		t.members.insert(m)
	}
	inv.AcceptedAt, inv.MemberID = c.At, m.ID
	t.invitations.put(inv)
	return Result{Member: &m, Invitation: &inv}
}

// acceptReset sets the password of a reset link's member, clears their
// lock-out and ends their sessions.
func (t *teamState) acceptReset(inv Invitation, c *AcceptInvitation) Result {
	m, ok := t.members.find(indexEmail, inv.Email)
	if !ok || m.Removed || m.OrgID != inv.OrgID {
		return Result{Err: Errorf(CodeNotFound, "This link's member is no longer on the team")}
	}
	m.PasswordHash, m.FailedSignIns, m.LockedUntil, m.UpdatedAt = c.PasswordHash, 0, 0, c.At
	t.members.put(m)
	t.endSessions(m.ID, "", c.At)
	inv.AcceptedAt, inv.MemberID = c.At, m.ID
	t.invitations.put(inv)
	return Result{Member: &m, Invitation: &inv}
}

// checkNewLink checks the id and token hash of a new one-time link: well
// formed, and neither taken.
func (t *teamState) checkNewLink(id, tokenHash string) *Error {
	if err := CheckID(id, "inv_"); err != nil {
		return err
	}
	if t.invitations.taken(id) {
		return Errorf(CodeConflict, "invitation %s already exists", id)
	}
	if err := checkTokenHash(tokenHash); err != nil {
		return err
	}
	if _, ok := t.invitations.find(indexTokenHash, tokenHash); ok {
		return Errorf(CodeConflict, "an invitation with this token already exists")
	}
	return nil
}

func (c *CreatePasswordReset) Apply(s *State) Result {
	t := s.team
	if err := t.checkNewLink(c.ID, c.TokenHash); err != nil {
		return Result{Err: err}
	}
	if c.ExpiresAt <= c.At {
		return Result{Err: Errorf(CodeValidation, "a reset link expires after it is made")}
	}
	m, ok := t.members.find(indexEmail, NormalizeEmail(c.Email))
	if !ok || m.Removed || m.OrgID != c.OrgID {
		return Result{Err: Errorf(CodeNotFound, "No member of this organization has this email address")}
	}
	if t.invitations.count(c.OrgID) >= InvitationsPerOrganizationMax {
		return Result{Err: Errorf(CodeValidation, "an organization has at most %d invitations", InvitationsPerOrganizationMax)}
	}
	var earlier []Invitation
	t.invitations.each(c.OrgID, func(i Invitation) {
		if i.Reset && i.Email == m.Email && i.Pending(c.At) {
			earlier = append(earlier, i)
		}
	})
	for _, i := range earlier {
		i.Revoked = true
		t.invitations.put(i)
	}
	inv := Invitation{ID: c.ID, OrgID: c.OrgID, Email: m.Email, Role: m.Role, Reset: true,
		TokenHash: c.TokenHash, CreatedAt: c.At, ExpiresAt: c.ExpiresAt}
	t.invitations.insert(inv)
	return Result{Invitation: &inv}
}

func (c *RevokeInvitation) Apply(s *State) Result {
	inv, ok := s.team.invitations.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Invitation not found")}
	}
	if inv.AcceptedAt != 0 {
		return Result{Err: Errorf(CodeConflict, "the invitation was accepted: remove the member instead")}
	}
	if !inv.Revoked {
		inv.Revoked = true
		s.team.invitations.put(inv)
	}
	return Result{Invitation: &inv}
}

func (c *StartDashboardSession) Apply(s *State) Result {
	t := s.team
	if err := CheckID(c.ID, "dss_"); err != nil {
		return Result{Err: err}
	}
	if err := checkTokenHash(c.TokenHash); err != nil {
		return Result{Err: err}
	}
	if t.sessions.taken(c.ID) {
		return Result{Err: Errorf(CodeConflict, "session %s already exists", c.ID)}
	}
	if _, ok := t.sessions.find(indexTokenHash, c.TokenHash); ok {
		return Result{Err: Errorf(CodeConflict, "a session with this token already exists")}
	}
	m, ok := t.members.get(c.MemberID)
	if !ok || m.Removed {
		return Result{Err: Errorf(CodeNotFound, "Member not found")}
	}
	if c.At < m.LockedUntil {
		return Result{Err: Errorf(CodeRateLimited, "too many failed sign-ins: locked out for now")}
	}
	if c.ExpiresAt <= c.At {
		return Result{Err: Errorf(CodeValidation, "a session expires after it starts")}
	}
	// End the member's expired sessions, then the oldest past the bound.
	live := t.liveSessions[m.ID]
	kept := live[:0]
	for _, id := range live {
		if d, ok := t.sessions.get(id); ok && d.Live(c.At) {
			kept = append(kept, id)
		} else if ok {
			t.end(&d, c.At)
		}
	}
	for len(kept) >= SessionsPerMemberMax {
		if d, ok := t.sessions.get(kept[0]); ok {
			t.end(&d, c.At)
		}
		kept = kept[1:]
	}
	d := DashboardSession{ID: c.ID, OrgID: m.OrgID, MemberID: m.ID, TokenHash: c.TokenHash,
		CreatedAt: c.At, ExpiresAt: c.ExpiresAt}
	t.sessions.insert(d)
	t.liveSessions[m.ID] = append(slices.Clone(kept), d.ID)
	if m.FailedSignIns != 0 || m.LockedUntil != 0 {
		m.FailedSignIns, m.LockedUntil = 0, 0
		t.members.put(m)
	}
	return Result{Member: &m, DashboardSession: &d}
}

// end ends a session (the caller keeps liveSessions).
func (t *teamState) end(d *DashboardSession, at int64) {
	if d.Ended {
		return
	}
	d.Ended, d.EndedAt = true, at
	t.sessions.put(*d)
}

func (c *EndDashboardSession) Apply(s *State) Result {
	t := s.team
	d, ok := t.sessions.get(c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Session not found")}
	}
	t.end(&d, c.At)
	t.liveSessions[d.MemberID] = slices.DeleteFunc(t.liveSessions[d.MemberID], func(id string) bool { return id == d.ID })
	if len(t.liveSessions[d.MemberID]) == 0 {
		delete(t.liveSessions, d.MemberID)
	}
	return Result{DashboardSession: &d}
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

func (c *RecordSignInFailure) Apply(s *State) Result {
	m, ok := s.team.members.get(c.MemberID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Member not found")}
	}
	m.FailedSignIns++
	if lock := SignInLock(m.FailedSignIns); lock > 0 {
		m.LockedUntil = c.At + lock
	}
	s.team.members.put(m)
	return Result{Member: &m}
}

// owners counts an organization's owners still on the team.
func (t *teamState) owners(org string) int {
	n := 0
	t.members.each(org, func(m Member) {
		if !m.Removed && m.Role == RoleOwner {
			n++
		}
	})
	return n
}

func (c *SetMemberRole) Apply(s *State) Result {
	t := s.team
	if !ValidRole(c.Role) {
		return Result{Err: FieldInvalid("role", "must be owner, developer or viewer")}
	}
	m, ok := t.members.owned(c.OrgID, c.MemberID)
	if !ok || m.Removed {
		return Result{Err: Errorf(CodeNotFound, "Member not found")}
	}
	if m.Role == RoleOwner && c.Role != RoleOwner && t.owners(c.OrgID) == 1 {
		return Result{Err: Errorf(CodeConflict, "an organization keeps at least one owner")}
	}
	if m.Role != c.Role {
		m.Role, m.UpdatedAt = c.Role, c.At
		t.members.put(m)
	}
	return Result{Member: &m}
}

func (c *RemoveMember) Apply(s *State) Result {
	t := s.team
	m, ok := t.members.owned(c.OrgID, c.MemberID)
	if !ok || m.Removed {
		return Result{Err: Errorf(CodeNotFound, "Member not found")}
	}
	if m.Role == RoleOwner && t.owners(c.OrgID) == 1 {
		return Result{Err: Errorf(CodeConflict, "an organization keeps at least one owner")}
	}
	m.Removed, m.UpdatedAt = true, c.At
	t.members.put(m)
	t.endSessions(m.ID, "", c.At)
	return Result{Member: &m}
}

func (c *ChangeMemberPassword) Apply(s *State) Result {
	t := s.team
	m, ok := t.members.owned(c.OrgID, c.MemberID)
	if !ok || m.Removed {
		return Result{Err: Errorf(CodeNotFound, "Member not found")}
	}
	if !strings.HasPrefix(c.PasswordHash, "$argon2id$") {
		return Result{Err: Errorf(CodeValidation, "a password is stored as an argon2id hash")}
	}
	m.PasswordHash, m.FailedSignIns, m.LockedUntil, m.UpdatedAt = c.PasswordHash, 0, 0, c.At
	t.members.put(m)
	t.endSessions(m.ID, c.KeepSessionID, c.At)
	return Result{Member: &m}
}

// endSessions ends a member's live sessions at at, but keep's ("": none).
func (t *teamState) endSessions(memberID, keep string, at int64) {
	var kept []string
	for _, id := range t.liveSessions[memberID] {
		d, ok := t.sessions.get(id)
		switch {
		case !ok:
		case id == keep && d.Live(at):
			kept = append(kept, id)
		default:
			t.end(&d, at)
		}
	}
	if len(kept) == 0 {
		delete(t.liveSessions, memberID)
	} else {
		t.liveSessions[memberID] = kept
	}
}

// Reads.

// MemberByEmail finds a member by email address, in any organization.
func (r *Reader) MemberByEmail(email string) (Member, bool) {
	return readFind(r, memberKind, indexEmail, NormalizeEmail(email))
}

// Member returns a member by id.
func (r *Reader) Member(id string) (Member, bool) { return readRecord(r, memberKind, id) }

// Members lists an organization's members, removed ones included, oldest
// first.
func (r *Reader) Members(orgID string) []Member {
	p := readPage(r, memberKind, memberKind.listPrefix(orgID), CursorStart, MembersPerOrganizationMax, nil)
	slices.Reverse(p.Items)
	return p.Items
}

// Invitations lists an organization's invitations, oldest first.
func (r *Reader) Invitations(orgID string) []Invitation {
	p := readPage(r, invitationKind, invitationKind.listPrefix(orgID), CursorStart, InvitationsPerOrganizationMax, nil)
	slices.Reverse(p.Items)
	return p.Items
}

// InvitationByToken finds an invitation by the SHA-256 of its token.
func (r *Reader) InvitationByToken(hash [32]byte) (Invitation, bool) {
	return readFind(r, invitationKind, indexTokenHash, string(hash[:]))
}

// DashboardSessionByToken finds a session by the SHA-256 of its token.
func (r *Reader) DashboardSessionByToken(hash [32]byte) (DashboardSession, bool) {
	return readFind(r, dashboardSessionKind, indexTokenHash, string(hash[:]))
}
