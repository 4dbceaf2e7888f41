package actors

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"payments/ledger"
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
	if !ok || len(st.Members(org.ID)) > 0 {
		return "", nil
	}
	b := make([]byte, 32)
	rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	hash := sha256.Sum256([]byte(token))
	now := s.Now()
	r := s.Propose(ctx, &ledger.CreateInvitation{
		At: now.UnixMilli(), ID: NewID("inv_"), OrgID: org.ID, Role: ledger.RoleOwner, Setup: true,
		TokenHash: string(hash[:]), ExpiresAt: now.Add(SetupLinkLifetime).UnixMilli(),
	})
	if r.Err != nil {
		return "", r.Err
	}
	if r.Result.Err != nil {
		if errors.Is(r.Result.Err, ledger.ErrConflict) {
			return "", nil // an owner signed up meanwhile
		}
		return "", r.Result.Err
	}
	return token, nil
}
