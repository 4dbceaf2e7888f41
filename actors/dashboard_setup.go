package actors

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"payments/ledger"
	"payments/ledger/team"
)

// SetupLinkLifetime is how long a first-owner setup link stays usable.
const SetupLinkLifetime = 24 * time.Hour

// EnsureDashboardSetup gives the first organization a one-time setup link
// for its first dashboard owner while it has no member: the leader calls it
// on every election, so each start of a deployment nobody has set up yet
// prints a fresh link (the ledger keeps only each link's hash, so an
// earlier one cannot be shown again; it stays usable until it expires or
// an owner exists). It returns the link's token, "" when the organization
// has members.
func (s *System) EnsureDashboardSetup(ctx context.Context) (string, error) {
	st := s.Reader()
	org, ok := st.FirstOrganization()
	if !ok || len(team.Members(st, org.ID)) > 0 {
		return "", nil
	}
	token, _, err := s.IssueDashboardSetup(ctx, org.ID)
	if errors.Is(err, ledger.ErrConflict) {
		return "", nil // an owner signed up meanwhile
	}
	return token, err
}

// IssueDashboardSetup commits a one-time setup link for the first owner
// of an organization that has no member, and returns its token and when
// it expires. An organization with members answers ledger.ErrConflict
// (its owners invite the others).
func (s *System) IssueDashboardSetup(ctx context.Context, orgID string) (string, time.Time, error) {
	b := make([]byte, 32)
	rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	hash := sha256.Sum256([]byte(token))
	now := s.Now()
	expires := now.Add(SetupLinkLifetime)
	r := s.Propose(ctx, &team.CreateInvitation{
		At: now.UnixMilli(), ID: NewID("inv_"), OrgID: orgID, Role: team.RoleOwner, Setup: true,
		TokenHash: string(hash[:]), ExpiresAt: expires.UnixMilli(),
	})
	if r.Err != nil {
		return "", time.Time{}, r.Err
	}
	if r.Result.Err != nil {
		return "", time.Time{}, r.Result.Err
	}
	return token, expires, nil
}
