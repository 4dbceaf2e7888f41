package app_test

import (
	"strings"
	"testing"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/disputes"
	"payments/ledger/keycontrols"
)

// An organization comes with its first key, whose secret is returned once
// and authenticates; the ledger keeps only its hash.
func TestCreateOrganization(t *testing.T) {
	s := newStack(t, stackOptions{})
	r := s.app.CreateOrganization(app.Caller{}, app.NewOrganization{Name: "Zouk Ltd", Country: "GH", Timezone: "Africa/Accra", DefaultCurrency: "GHS"})
	mustApply(t, "create", r.Reply)
	if !strings.HasPrefix(r.Secret, "sk_test_") || r.Result.APIKey.Hash == r.Secret {
		t.Fatalf("secret %q, stored hash %q", r.Secret, r.Result.APIKey.Hash)
	}
	key, found, err := s.sys.KeyBySecret(t.Context(), []byte(r.Secret), nil)
	if err != nil || !found || key.OrgID != r.Result.Organization.ID || key.Scopes != ledger.ScopesMerchant {
		t.Fatalf("the first key: %+v %v %v", key, found, err)
	}
	if r.Result.Organization.ID == s.org {
		t.Fatal("two organizations share an id")
	}
}

func TestCreateKey(t *testing.T) {
	s := newStack(t, stackOptions{})
	reader := *s.owner.Key
	reader.Scopes = ledger.ScopePayoutsRead | ledger.ScopeKeysAdmin
	for _, c := range []struct {
		name   string
		caller app.Caller
		in     app.NewKey
		want   ledger.Code
		scopes ledger.Scopes
	}{
		{"the caller's scopes by default", s.owner, app.NewKey{Name: "ci"}, "", ledger.ScopesMerchant},
		{"fewer scopes", s.owner, app.NewKey{Scopes: ledger.ScopePayoutsRead, ScopesGiven: true}, "", ledger.ScopePayoutsRead},
		{"no scope at all", s.owner, app.NewKey{ScopesGiven: true}, "", 0},
		{"a scope the caller lacks", app.Caller{OrgID: s.org, Key: &reader},
			app.NewKey{Scopes: ledger.ScopePayoutsWrite, ScopesGiven: true}, ledger.CodeForbidden, 0},
		{"no key at all", app.Caller{OrgID: s.org}, app.NewKey{Scopes: ledger.ScopePayoutsRead, ScopesGiven: true}, ledger.CodeForbidden, 0},
	} {
		r := s.app.CreateKey(c.caller, c.in)
		wantCode(t, c.name, r.Reply, c.want)
		if c.want != "" {
			if r.Secret != "" {
				t.Fatalf("%s: a refused key has a secret", c.name)
			}
			continue
		}
		k := r.Result.APIKey
		if k.Scopes != c.scopes || k.OrgID != s.org || k.Hash != actors.HashKey(r.Secret) {
			t.Fatalf("%s: %+v", c.name, k)
		}
	}
}

// A key with an IP allowlist needs the cluster's signing key, with which
// followers vouch for a client's address: creating one makes it.
func TestKeyAllowlistMakesTheSigningKey(t *testing.T) {
	s := newStack(t, stackOptions{})
	if _, ok := disputes.FileSigningKey(s.sys.Reader()); ok {
		t.Fatal("a new cluster has a signing key")
	}
	list, e := keycontrols.ParseAllowlist("ipAllowlist", []string{"10.0.0.0/8"})
	if e != nil {
		t.Fatal(e)
	}
	r := s.app.CreateKey(s.owner, app.NewKey{Controls: keycontrols.Controls{Allowlist: list}})
	mustApply(t, "create with an allowlist", r.Reply)
	if r.Result.APIKey.Allowlist != list {
		t.Fatalf("allowlist %q", r.Result.APIKey.Allowlist)
	}
	if _, ok := disputes.FileSigningKey(s.sys.Reader()); !ok {
		t.Fatal("no signing key after a key with an allowlist")
	}
}

func TestRevokeKeyAndControls(t *testing.T) {
	s := newStack(t, stackOptions{})
	created := s.app.CreateKey(s.owner, app.NewKey{Name: "to revoke"})
	mustApply(t, "create", created.Reply)
	id := created.Result.APIKey.ID
	other := s.app.CreateOrganization(app.Caller{}, app.NewOrganization{Name: "Other"})
	mustApply(t, "other organization", other.Reply)
	stranger := app.Caller{OrgID: other.Result.Organization.ID, Key: other.Result.APIKey}

	daily := ledger.Minor(50_000)
	for _, c := range []struct {
		name string
		do   func() actors.Reply
		want ledger.Code
	}{
		{"a daily cap", func() actors.Reply {
			return s.app.SetKeyControls(s.owner, app.KeyControlsChange{KeyID: id, SetDaily: true, Controls: keycontrols.Controls{Caps: ledger.SpendCaps{Daily: &daily}}})
		}, ""},
		{"another organization's key", func() actors.Reply {
			return s.app.SetKeyControls(stranger, app.KeyControlsChange{KeyID: id, SetDaily: true})
		}, ledger.CodeNotFound},
		{"revoked by a stranger", func() actors.Reply { return s.app.RevokeKey(stranger, id) }, ledger.CodeNotFound},
		{"revoked", func() actors.Reply { return s.app.RevokeKey(s.owner, id) }, ""},
		{"an unknown key", func() actors.Reply { return s.app.RevokeKey(s.owner, "key_unknown") }, ledger.CodeNotFound},
	} {
		wantCode(t, c.name, c.do(), c.want)
	}
	k, _ := s.sys.Reader().APIKey(s.org, id)
	if !k.Revoked || k.Caps.Daily == nil || *k.Caps.Daily != daily {
		t.Fatalf("the key after: %+v", k)
	}
}
