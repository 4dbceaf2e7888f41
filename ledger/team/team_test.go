package team

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

func tokenHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return string(h[:])
}

func tokenDigest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

const fakeArgon = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"

// teamOrg is an organization with its first owner, who came in through
// the setup link.
func teamOrg(t *testing.T, s *ledgertest.State, org string) Member {
	t.Helper()
	s.Org(org)
	setup := "setup " + org
	if r := s.Apply(&CreateInvitation{At: 2, ID: "inv_setup_" + org[4:], OrgID: org, Role: RoleOwner, Setup: true,
		TokenHash: tokenHash(setup), ExpiresAt: 1000}); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := s.Apply(&AcceptInvitation{At: 3, TokenHash: tokenHash(setup), MemberID: "mem_owner_" + org[4:],
		Email: "owner@" + org[4:] + ".example", PasswordHash: fakeArgon})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return *MemberOf(r)
}

// startSessions starts n dashboard sessions of m, dss_<i> at 10+i under the
// token tok<i>, expiring at 10,000.
func startSessions(t *testing.T, s *ledgertest.State, m Member, n int) {
	t.Helper()
	for i := range n {
		if r := s.Apply(&StartSession{At: int64(10 + i), ID: fmt.Sprintf("dss_%d", i), MemberID: m.ID, TokenHash: tokenHash(fmt.Sprint("tok", i)), ExpiresAt: 10_000}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}

func TestTeamRules(t *testing.T) {
	s := ledgertest.New(t)
	owner := teamOrg(t, s, "org_a")
	teamOrg(t, s, "org_b")

	cases := []struct {
		name string
		cmd  ledger.Command
		want ledger.Code // "" for success
	}{
		{"a second setup link once an owner exists", &CreateInvitation{At: 4, ID: "inv_x1", OrgID: "org_a", Role: RoleOwner, Setup: true, TokenHash: tokenHash("x1"), ExpiresAt: 100}, ledger.CodeConflict},
		{"the used setup link again", &AcceptInvitation{At: 4, TokenHash: tokenHash("setup org_a"), MemberID: "mem_x", Email: "x@a.example", PasswordHash: fakeArgon}, ledger.CodeNotFound},
		{"an invitation by a non-member", &CreateInvitation{At: 4, ID: "inv_x2", OrgID: "org_a", Email: "d@a.example", Role: RoleDeveloper, TokenHash: tokenHash("x2"), InvitedBy: "mem_owner_b", ExpiresAt: 100}, ledger.CodeForbidden},
		{"an invitation with an unknown role", &CreateInvitation{At: 4, ID: "inv_x3", OrgID: "org_a", Email: "d@a.example", Role: "admin", TokenHash: tokenHash("x3"), InvitedBy: owner.ID, ExpiresAt: 100}, ledger.CodeValidation},
		{"an invitation of a member's address", &CreateInvitation{At: 4, ID: "inv_x4", OrgID: "org_a", Email: "owner@b.example", Role: RoleViewer, TokenHash: tokenHash("x4"), InvitedBy: owner.ID, ExpiresAt: 100}, ledger.CodeConflict},
		{"an invitation of a malformed address", &CreateInvitation{At: 4, ID: "inv_x5", OrgID: "org_a", Email: "Not An Email", Role: RoleViewer, TokenHash: tokenHash("x5"), InvitedBy: owner.ID, ExpiresAt: 100}, ledger.CodeValidation},
		{"the viewer's invitation", &CreateInvitation{At: 4, ID: "inv_v", OrgID: "org_a", Email: "v@a.example", Role: RoleViewer, TokenHash: tokenHash("v"), InvitedBy: owner.ID, ExpiresAt: 100}, ""},
		{"accepting with a plaintext password", &AcceptInvitation{At: 5, TokenHash: tokenHash("v"), MemberID: "mem_v", PasswordHash: "hunter2hunter2"}, ledger.CodeValidation},
		{"accepting", &AcceptInvitation{At: 5, TokenHash: tokenHash("v"), MemberID: "mem_v", PasswordHash: fakeArgon}, ""},
		{"accepting twice", &AcceptInvitation{At: 6, TokenHash: tokenHash("v"), MemberID: "mem_v2", PasswordHash: fakeArgon}, ledger.CodeNotFound},
		{"an expired invitation", &CreateInvitation{At: 7, ID: "inv_e", OrgID: "org_a", Email: "e@a.example", Role: RoleViewer, TokenHash: tokenHash("e"), InvitedBy: owner.ID, ExpiresAt: 8}, ""},
		{"accepting it late", &AcceptInvitation{At: 8, TokenHash: tokenHash("e"), MemberID: "mem_e", PasswordHash: fakeArgon}, ledger.CodeNotFound},
		{"demoting the only owner", &SetRole{At: 9, OrgID: "org_a", MemberID: owner.ID, Role: RoleViewer}, ledger.CodeConflict},
		{"removing the only owner", &RemoveMember{At: 9, OrgID: "org_a", MemberID: owner.ID}, ledger.CodeConflict},
		{"another organization's member", &SetRole{At: 9, OrgID: "org_b", MemberID: "mem_v", Role: RoleOwner}, ledger.CodeNotFound},
		{"promoting the viewer", &SetRole{At: 9, OrgID: "org_a", MemberID: "mem_v", Role: RoleDeveloper}, ""},
		{"a session for an unknown member", &StartSession{At: 10, ID: "dss_x", MemberID: "mem_nobody", TokenHash: tokenHash("sx"), ExpiresAt: 100}, ledger.CodeNotFound},
		{"a session with a short hash", &StartSession{At: 10, ID: "dss_y", MemberID: owner.ID, TokenHash: "short", ExpiresAt: 100}, ledger.CodeValidation},
		{"a session", &StartSession{At: 10, ID: "dss_1", MemberID: owner.ID, TokenHash: tokenHash("s1"), ExpiresAt: 100}, ""},
		{"a session with the same token", &StartSession{At: 10, ID: "dss_2", MemberID: owner.ID, TokenHash: tokenHash("s1"), ExpiresAt: 100}, ledger.CodeConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.Dump()
			r := s.Apply(c.cmd)
			switch {
			case c.want == "" && r.Err != nil:
				t.Fatalf("refused: %v", r.Err)
			case c.want != "" && (r.Err == nil || r.Err.Code != c.want):
				t.Fatalf("got %v, want %s", r.Err, c.want)
			case c.want != "" && !bytes.Equal(before, s.Dump()):
				t.Fatal("a refused command changed the state")
			}
		})
	}
	if m, ok := MemberByEmail(s.Reader, "V@A.example"); !ok || m.ID != "mem_v" || m.Role != RoleDeveloper || m.OrgID != "org_a" {
		t.Fatalf("member by email = %+v, %v", m, ok)
	}
	if got := len(Members(s.Reader, "org_a")); got != 2 {
		t.Fatalf("org_a has %d members, want 2", got)
	}
	if got := len(Members(s.Reader, "org_b")); got != 1 {
		t.Fatalf("org_b has %d members, want 1", got)
	}
}

func TestSignInLockOutBacksOff(t *testing.T) {
	s := ledgertest.New(t)
	owner := teamOrg(t, s, "org_a")
	var last Member
	for i := int64(1); i <= SignInFailuresFree+2; i++ {
		r := s.Apply(&RecordSignInFailure{At: 100 * i, MemberID: owner.ID})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		last = *MemberOf(r)
		want := int64(0)
		if i >= SignInFailuresFree {
			want = 100*i + SignInLock(i)
		}
		if last.LockedUntil != want && i >= SignInFailuresFree {
			t.Fatalf("after %d failures locked until %d, want %d", i, last.LockedUntil, want)
		}
		if i < SignInFailuresFree && last.LockedUntil != 0 {
			t.Fatalf("after %d failures locked until %d, want no lock", i, last.LockedUntil)
		}
	}
	if SignInLock(SignInFailuresFree+1) != 2*SignInLock(SignInFailuresFree) || SignInLock(100) != SignInLockMax {
		t.Fatal("the lock does not double up to its bound")
	}
	// Locked: no session, even with the right password.
	r := s.Apply(&StartSession{At: last.LockedUntil - 1, ID: "dss_1", MemberID: owner.ID, TokenHash: tokenHash("s1"), ExpiresAt: last.LockedUntil + 1000})
	if r.Err == nil || r.Err.Code != ledger.CodeRateLimited {
		t.Fatalf("a locked member signed in: %v", r.Err)
	}
	// Once the lock passes, a sign-in clears the count.
	r = s.Apply(&StartSession{At: last.LockedUntil, ID: "dss_1", MemberID: owner.ID, TokenHash: tokenHash("s1"), ExpiresAt: last.LockedUntil + 1000})
	if r.Err != nil || MemberOf(r).FailedSignIns != 0 || MemberOf(r).LockedUntil != 0 {
		t.Fatalf("sign-in after the lock: %v %+v", r.Err, MemberOf(r))
	}
}

func TestDashboardSessionsSurviveReloadAndEnd(t *testing.T) {
	s := ledgertest.New(t)
	owner := teamOrg(t, s, "org_a")
	startSessions(t, s, owner, SessionsPerMemberMax+2)
	// The two oldest ended to keep the bound.
	for i, wantLive := range map[int]bool{0: false, 1: false, 2: true, SessionsPerMemberMax + 1: true} {
		d, ok := SessionByToken(s.Reader, tokenDigest(fmt.Sprintf("tok%d", i)))
		if !ok || d.Live(100) != wantLive {
			t.Fatalf("session %d: %+v, found %v, want live %v", i, d, ok, wantLive)
		}
	}
	re := s.Restored()
	// The restored state knows the live sessions: ending the member ends them.
	if r := re.Apply(&CreateInvitation{At: 50, ID: "inv_o2", OrgID: "org_a", Email: "o2@a.example", Role: RoleOwner, TokenHash: tokenHash("o2"), InvitedBy: owner.ID, ExpiresAt: 1000}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := re.Apply(&AcceptInvitation{At: 51, TokenHash: tokenHash("o2"), MemberID: "mem_o2", PasswordHash: fakeArgon}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := re.Apply(&RemoveMember{At: 52, OrgID: "org_a", MemberID: owner.ID}); r.Err != nil {
		t.Fatal(r.Err)
	}
	for i := range SessionsPerMemberMax + 2 {
		if d, _ := SessionByToken(re.Reader, tokenDigest(fmt.Sprintf("tok%d", i))); d.Live(100) {
			t.Fatalf("session %d outlived its member's removal", i)
		}
	}
	if m, _ := MemberByID(re.Reader, owner.ID); !m.Removed {
		t.Fatal("member not removed")
	}
	// Nothing in the snapshot is a token.
	if bytes.Contains(s.Dump(), []byte("tok1")) {
		t.Fatal("a session token is in the snapshot")
	}
}

// A new password ends the member's other sessions, keeps the one it was
// set from, and clears the failed sign-ins; it is refused for another
// organization's member, a removed member, or a password not hashed.
func TestChangePassword(t *testing.T) {
	s := ledgertest.New(t)
	owner := teamOrg(t, s, "org_a")
	teamOrg(t, s, "org_b")
	startSessions(t, s, owner, 3)
	s.Apply(&RecordSignInFailure{At: 20, MemberID: owner.ID})
	newHash := "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3aGFzaA"
	for _, c := range []struct {
		name string
		cmd  *ChangePassword
		want ledger.Code
	}{
		{"another organization's member", &ChangePassword{At: 30, OrgID: "org_b", MemberID: owner.ID, PasswordHash: newHash}, ledger.CodeNotFound},
		{"a plaintext password", &ChangePassword{At: 30, OrgID: "org_a", MemberID: owner.ID, PasswordHash: "correct horse battery"}, ledger.CodeValidation},
	} {
		before := s.Dump()
		if r := s.Apply(c.cmd); r.Err == nil || r.Err.Code != c.want {
			t.Fatalf("%s: %v, want %s", c.name, r.Err, c.want)
		}
		if !bytes.Equal(before, s.Dump()) {
			t.Fatalf("%s: a refused change changed the state", c.name)
		}
	}
	r := s.Apply(&ChangePassword{At: 30, OrgID: "org_a", MemberID: owner.ID, PasswordHash: newHash, KeepSessionID: "dss_1"})
	if r.Err != nil || MemberOf(r).PasswordHash != newHash || MemberOf(r).FailedSignIns != 0 || MemberOf(r).UpdatedAt != 30 {
		t.Fatalf("the change: %v %+v", r.Err, MemberOf(r))
	}
	for i, wantLive := range []bool{false, true, false} {
		if d, _ := SessionByToken(s.Reader, tokenDigest(fmt.Sprint("tok", i))); d.Live(31) != wantLive {
			t.Fatalf("session %d after the change: %+v, want live %v", i, d, wantLive)
		}
	}
	// The kept session is still the member's: removing the member ends it.
	s.Apply(&CreateInvitation{At: 40, ID: "inv_o2", OrgID: "org_a", Email: "o2@a.example", Role: RoleOwner, TokenHash: tokenHash("o2"), InvitedBy: owner.ID, ExpiresAt: 1000})
	s.Apply(&AcceptInvitation{At: 41, TokenHash: tokenHash("o2"), MemberID: "mem_o2", PasswordHash: fakeArgon})
	if r := s.Apply(&RemoveMember{At: 42, OrgID: "org_a", MemberID: owner.ID}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if d, _ := SessionByToken(s.Reader, tokenDigest("tok1")); d.Live(43) {
		t.Fatal("the kept session outlived its member's removal")
	}
	if r := s.Apply(&ChangePassword{At: 44, OrgID: "org_a", MemberID: owner.ID, PasswordHash: newHash}); r.Err == nil || r.Err.Code != ledger.CodeNotFound {
		t.Fatalf("a removed member's password changed: %v", r.Err)
	}
}

// A password reset link, the operator's way back in for a member who lost
// their password: only for a member of the organization; a newer link
// revokes the older; accepting it sets the password, clears the lock-out
// and ends the member's sessions, once. The link is kept across a
// snapshot, and an invitation without the flag is stored as before.
func TestPasswordResetLink(t *testing.T) {
	s := ledgertest.New(t)
	owner := teamOrg(t, s, "org_a")
	teamOrg(t, s, "org_b")
	startSessions(t, s, owner, 2)
	for i := range SignInFailuresFree {
		s.Apply(&RecordSignInFailure{At: int64(20 + i), MemberID: owner.ID})
	}
	reset := func(id, org, email, token string) *CreatePasswordReset {
		return &CreatePasswordReset{At: 30, ID: id, OrgID: org, Email: email, TokenHash: tokenHash(token), ExpiresAt: 1000}
	}
	for _, c := range []struct {
		name string
		cmd  *CreatePasswordReset
		want ledger.Code
	}{
		{"an unknown address", reset("inv_r0", "org_a", "nobody@a.example", "r0"), ledger.CodeNotFound},
		{"another organization's member", reset("inv_r0", "org_b", owner.Email, "r0"), ledger.CodeNotFound},
		{"a short token hash", &CreatePasswordReset{At: 30, ID: "inv_r0", OrgID: "org_a", Email: owner.Email, TokenHash: "short", ExpiresAt: 1000}, ledger.CodeValidation},
		{"expired when made", &CreatePasswordReset{At: 30, ID: "inv_r0", OrgID: "org_a", Email: owner.Email, TokenHash: tokenHash("r0"), ExpiresAt: 30}, ledger.CodeValidation},
	} {
		before := s.Dump()
		if r := s.Apply(c.cmd); r.Err == nil || r.Err.Code != c.want {
			t.Fatalf("%s: %v, want %s", c.name, r.Err, c.want)
		}
		if !bytes.Equal(before, s.Dump()) {
			t.Fatalf("%s: a refused link changed the state", c.name)
		}
	}
	r := s.Apply(reset("inv_r1", "org_a", "OWNER@a.example", "r1"))
	if r.Err != nil || !InvitationOf(r).Reset || InvitationOf(r).Email != owner.Email || InvitationOf(r).Role != RoleOwner {
		t.Fatalf("the first link: %v %+v", r.Err, InvitationOf(r))
	}
	if r := s.Apply(reset("inv_r2", "org_a", owner.Email, "r2")); r.Err != nil {
		t.Fatal(r.Err)
	}
	if inv, _ := InvitationByToken(s.Reader, tokenDigest("r1")); !inv.Revoked {
		t.Fatalf("the older link after a newer one: %+v", inv)
	}
	newHash := "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3aGFzaA"
	if r := s.Apply(&AcceptInvitation{At: 40, TokenHash: tokenHash("r1"), MemberID: "mem_x", PasswordHash: newHash}); r.Err == nil || r.Err.Code != ledger.CodeNotFound {
		t.Fatalf("the revoked link accepted: %v", r.Err)
	}

	re := s.Restored()
	if inv, ok := InvitationByToken(re.Reader, tokenDigest("r2")); !ok || !inv.Reset || !inv.Pending(40) {
		t.Fatalf("the link after a restore: %+v %v", inv, ok)
	}
	r = re.Apply(&AcceptInvitation{At: 40, TokenHash: tokenHash("r2"), MemberID: "mem_x", PasswordHash: newHash})
	if r.Err != nil || MemberOf(r).ID != owner.ID || MemberOf(r).PasswordHash != newHash || MemberOf(r).FailedSignIns != 0 || MemberOf(r).LockedUntil != 0 || MemberOf(r).Role != RoleOwner {
		t.Fatalf("accepting the link: %v %+v", r.Err, MemberOf(r))
	}
	for i := range 2 {
		if d, _ := SessionByToken(re.Reader, tokenDigest(fmt.Sprint("tok", i))); d.Live(41) {
			t.Fatalf("session %d outlived the reset", i)
		}
	}
	if got := len(Members(re.Reader, "org_a")); got != 1 {
		t.Fatalf("%d members after the reset, want the one", got)
	}
	if r := re.Apply(&AcceptInvitation{At: 41, TokenHash: tokenHash("r2"), MemberID: "mem_x", PasswordHash: newHash}); r.Err == nil || r.Err.Code != ledger.CodeNotFound {
		t.Fatalf("the link accepted twice: %v", r.Err)
	}

	// The flag is read back from the state store for the links that have
	// it only (its bytes: ledger's TestAppendedFlag and the encodings
	// golden file).
	for _, inv := range Invitations(re.Reader, "org_a") {
		if inv.Reset != (inv.ID == "inv_r1" || inv.ID == "inv_r2") {
			t.Fatalf("invitation %s read back with Reset %v", inv.ID, inv.Reset)
		}
	}
}

func TestTeamCommandsRoundTrip(t *testing.T) {
	cmds := []ledger.Command{
		&CreateInvitation{At: 1, ID: "inv_a", OrgID: "org_a", Email: "a@b.example", Role: RoleViewer, Setup: true, TokenHash: tokenHash("a"), InvitedBy: "mem_a", ExpiresAt: 9},
		&AcceptInvitation{At: 2, TokenHash: tokenHash("a"), MemberID: "mem_b", Email: "a@b.example", PasswordHash: fakeArgon},
		&RevokeInvitation{At: 3, OrgID: "org_a", ID: "inv_a"},
		&StartSession{At: 4, ID: "dss_a", MemberID: "mem_b", TokenHash: tokenHash("s"), ExpiresAt: 10},
		&EndSession{At: 5, ID: "dss_a"},
		&RecordSignInFailure{At: 6, MemberID: "mem_b"},
		&SetRole{At: 7, OrgID: "org_a", MemberID: "mem_b", Role: RoleOwner},
		&RemoveMember{At: 8, OrgID: "org_a", MemberID: "mem_b"},
		&ChangePassword{At: 9, OrgID: "org_a", MemberID: "mem_b", PasswordHash: fakeArgon, KeepSessionID: "dss_a"},
		&CreatePasswordReset{At: 10, ID: "inv_r", OrgID: "org_a", Email: "a@b.example", TokenHash: tokenHash("r"), ExpiresAt: 11},
	}
	ledgertest.RoundTrip(t, cmds...)
}
