package app

import (
	"errors"
	"strings"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/keycontrols"
)

// Organizations and their API keys. A key's secret is drawn here, on the
// leader, returned once, and kept by the ledger only as its hash.

// NewOrganization is an organization to create, with its first key.
type NewOrganization struct {
	Name            string
	Country         string // ISO 3166-1 alpha-2, or ""
	Timezone        string // IANA name, or "": the days spend caps count in
	DefaultCurrency string
}

// KeyCreated is what creating a key (alone or with its organization)
// answers: the commit's reply, and the key's secret, which exists only
// here.
type KeyCreated struct {
	actors.Reply
	Secret string
}

// firstKeyName names an organization's first key.
const firstKeyName = "Default key"

// CreateOrganization creates an organization and its first key, which
// holds every merchant scope.
func (a *App) CreateOrganization(_ Caller, in NewOrganization) KeyCreated {
	now := a.sys.Now().UnixMilli()
	secret := actors.NewKeySecret(a.cfg.Live)
	orgID := actors.NewID("org_")
	r := a.propose(&ledger.CreateOrganization{
		At: now, ID: orgID, Name: in.Name, Country: in.Country, Timezone: in.Timezone, DefaultCurrency: in.DefaultCurrency,
		Key: ledger.CreateAPIKey{
			At: now, ID: actors.NewID("key_"), OrgID: orgID, Name: firstKeyName,
			Hash: actors.HashKey(secret), Hint: actors.KeyHint(secret), Scopes: ledger.ScopesMerchant,
		},
	})
	return KeyCreated{r, secret}
}

// NewKey is a key to create in the caller's organization.
type NewKey struct {
	Name string
	// Scopes it grants when ScopesGiven; otherwise the caller's own
	// merchant scopes.
	Scopes      ledger.Scopes
	ScopesGiven bool
	Controls    keycontrols.Controls
}

// CreateKey creates a key. It grants no scope the caller's key lacks
// (forbidden), and a key with an IP allowlist needs the cluster's signing
// key, with which followers vouch for the client's address: it is made
// first if there is none.
func (a *App) CreateKey(c Caller, in NewKey) KeyCreated {
	held := callerScopes(c)
	scopes := held & ledger.ScopesMerchant
	if in.ScopesGiven {
		scopes = in.Scopes
	}
	if !held.Has(scopes) {
		missing := scopes &^ held
		return KeyCreated{Reply: refused(&ledger.Error{Code: ledger.CodeForbidden,
			Message: "A key cannot grant scopes it does not hold: " + strings.Join(missing.Names(), ", ")})}
	}
	if in.Controls.Allowlist != "" {
		if _, err := a.FileSigningKey(); err != nil {
			return KeyCreated{Reply: replyOf(err)}
		}
	}
	secret := actors.NewKeySecret(a.cfg.Live)
	key := ledger.CreateAPIKey{
		At: a.sys.Now().UnixMilli(), ID: actors.NewID("key_"), OrgID: c.OrgID, Name: in.Name,
		Hash: actors.HashKey(secret), Hint: actors.KeyHint(secret), Scopes: scopes,
	}
	var cmd ledger.Command = &key
	if in.Controls != (keycontrols.Controls{}) {
		cmd = &keycontrols.CreateKey{Key: key, Controls: in.Controls}
	}
	return KeyCreated{a.propose(cmd), secret}
}

// RevokeKey revokes one of the caller's organization's keys, for good.
func (a *App) RevokeKey(c Caller, id string) actors.Reply {
	return a.propose(&ledger.RevokeAPIKey{At: a.sys.Now().UnixMilli(), ID: id, OrgID: c.OrgID})
}

// KeyControlsChange changes a key's controls: those whose Set flag is true
// take Controls' value (a nil cap is no cap; an empty allowlist permits
// every address), the others stay.
type KeyControlsChange struct {
	KeyID                                                 string
	SetPerTransaction, SetDaily, SetMonthly, SetAllowlist bool
	Controls                                              keycontrols.Controls
}

// SetKeyControls changes a key's spend caps and IP allowlist; an allowlist
// needs the signing key, as in CreateKey.
func (a *App) SetKeyControls(c Caller, in KeyControlsChange) actors.Reply {
	if in.SetAllowlist && in.Controls.Allowlist != "" {
		if _, err := a.FileSigningKey(); err != nil {
			return replyOf(err)
		}
	}
	return a.propose(&keycontrols.Set{
		At: a.sys.Now().UnixMilli(), OrgID: c.OrgID, KeyID: in.KeyID,
		SetPerTransaction: in.SetPerTransaction, SetDaily: in.SetDaily, SetMonthly: in.SetMonthly, SetAllowlist: in.SetAllowlist,
		Controls: in.Controls,
	})
}

// callerScopes are the scopes the caller acts with: its key's.
func callerScopes(c Caller) ledger.Scopes {
	if c.Key == nil {
		return 0
	}
	return c.Key.Scopes
}

// refused is the reply of an operation that refused before proposing.
func refused(e *ledger.Error) actors.Reply {
	return actors.Reply{Result: ledger.Result{Err: e}}
}

// replyOf is the reply for err: a refusal (*ledger.Error) or a failure of
// the write path (the actors' errors).
func replyOf(err error) actors.Reply {
	var e *ledger.Error
	if errors.As(err, &e) {
		return refused(e)
	}
	return actors.Reply{Err: err}
}
