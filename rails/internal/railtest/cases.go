package railtest

import (
	"errors"
	"strings"
	"testing"

	"payments/rails/provider"
)

// QueryCase is a provider's answer to a request (a status query, a
// submission) and what the adapter must make of it: an error of WantKind
// or, when that is nil, an outcome in Want whose message holds WantMsg.
type QueryCase struct {
	Name     string
	Status   int
	Body     string
	Want     provider.State
	WantMsg  string
	WantKind error
}

// Check fails t unless out and err are what c wants; it reports whether
// there is an outcome for the caller's further checks.
func (c QueryCase) Check(t testing.TB, out provider.Outcome, err error) bool {
	t.Helper()
	if c.WantKind != nil {
		if !errors.Is(err, c.WantKind) {
			t.Fatalf("err %v, want %v", err, c.WantKind)
		}
		return false
	}
	if err != nil || out.State != c.Want || !strings.Contains(out.Message, c.WantMsg) {
		t.Fatalf("%+v %v; want %v with %q", out, err, c.Want, c.WantMsg)
	}
	return true
}

// FactoryCase is a providers file and what building its registry must
// give: an error that contains WantErr or, with WantErr empty, a registry.
type FactoryCase struct{ Name, Config, WantErr string }

// RunFactoryCases builds each case's registry in a subtest, its instances
// of kind built by factory and their secrets read with getenv, and has
// check look at each registry that builds.
func RunFactoryCases(t *testing.T, cases []FactoryCase, kind string, factory provider.Factory, getenv func(string) string, check func(t *testing.T, r *provider.Registry)) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if r := build(t, c.Config, kind, factory, getenv, c.WantErr); r != nil {
				check(t, r)
			}
		})
	}
}

// build builds the registry of config, a providers file whose instances of
// kind factory builds, reading their secrets with getenv. With wantErr
// set, building must fail with an error that contains it, and build
// returns nil.
func build(t testing.TB, config, kind string, factory provider.Factory, getenv func(string) string, wantErr string) *provider.Registry {
	t.Helper()
	cfg, err := provider.ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	r, err := provider.Build(cfg, map[string]provider.Factory{kind: factory}, getenv)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err %v, want %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}
