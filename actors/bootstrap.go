package actors

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"payments/ledger"
	"payments/ledger/publicids"
)

// Bootstrap is what an empty cluster is seeded with.
type Bootstrap struct {
	Live bool
	// Secret is a known key to seed (for scripts and tests); empty draws a
	// random one.
	Secret string
	// The first organization's profile.
	OrgName         string
	Country         string
	Timezone        string
	DefaultCurrency string
}

// EnsureBootstrap gives an empty cluster its first organization and a key
// with every scope, and makes sure a seeded key exists. It is idempotent:
// the leader calls it on every election. It returns the secret of a key it
// drew at random, for the operator to see once; "" otherwise.
func (s *System) EnsureBootstrap(ctx context.Context, b Bootstrap) (string, error) {
	prefix := KeyPrefix(b.Live)
	if b.Secret != "" && (!strings.HasPrefix(b.Secret, prefix) || len(b.Secret) < len(prefix)+16) {
		return "", fmt.Errorf("bootstrap key must start with %s and have at least 16 characters after it", prefix)
	}
	if err := s.ensureIDKey(ctx); err != nil {
		return "", err
	}
	var seeded bool
	st := s.Reader()
	first, hasOrg := st.FirstOrganization()
	if b.Secret != "" {
		_, seeded = st.APIKeyByHash(KeyDigest([]byte(b.Secret)))
	}
	if hasOrg && (b.Secret == "" || seeded) {
		return "", nil
	}
	secret, drawn := b.Secret, false
	if secret == "" {
		secret, drawn = NewKeySecret(b.Live), true
	}
	now := s.Now().UnixMilli()
	key := ledger.CreateAPIKey{
		At: now, ID: NewID("key_"), Name: "Bootstrap key",
		Hash: HashKey(secret), Hint: KeyHint(secret), Scopes: ledger.ScopesAll,
	}
	var cmd ledger.Command
	if hasOrg {
		key.OrgID = first.ID
		cmd = &key
	} else {
		id := NewID("org_")
		key.OrgID = id
		cmd = &ledger.CreateOrganization{
			At: now, ID: id, Name: b.OrgName, Country: b.Country, Timezone: b.Timezone,
			DefaultCurrency: b.DefaultCurrency, Key: key,
		}
	}
	r := s.Propose(ctx, cmd)
	if r.Err != nil {
		return "", r.Err
	}
	if r.Result.Err != nil {
		if errors.Is(r.Result.Err, ledger.ErrConflict) {
			return "", nil // another election's bootstrap won the race
		}
		return "", r.Result.Err
	}
	if drawn {
		return secret, nil
	}
	return "", nil
}

// ensureIDKey commits the deployment's key for public entry and event ids
// (publicids.SetKey) if the cluster has none: on its first start, or on the
// first start of a build that has them. Two leaders racing agree on the
// first committed.
func (s *System) ensureIDKey(ctx context.Context) error {
	if _, ok := publicids.Key(s.Reader()); ok {
		return nil
	}
	key := make([]byte, publicids.KeyLen)
	rand.Read(key)
	r := s.Propose(ctx, &publicids.SetKey{At: s.Now().UnixMilli(), Key: string(key)})
	if r.Err != nil {
		return r.Err
	}
	if r.Result.Err != nil {
		return r.Result.Err
	}
	return nil
}
