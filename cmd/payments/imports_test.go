package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The architecture's import rules, checked: who may import whom.
func TestForbiddenImports(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string // import path prefixes
		allowed   []string // for ledger: the only non-standard imports
	}{
		{pkg: "payments/ledger", allowed: []string{"github.com/cockroachdb/apd/v3"}},
		{pkg: "payments/wal", forbidden: []string{"payments/"}},
		{pkg: "payments/raft", forbidden: []string{"payments/http", "payments/rails", "payments/bench"}},
		{pkg: "payments/actors", forbidden: []string{"payments/http", "payments/rails", "payments/raft", "payments/wal", "payments/bench", "github.com/valyala/fasthttp", "github.com/asynkron/protoactor-go/remote", "github.com/asynkron/protoactor-go/cluster"}},
		{pkg: "payments/actors/app", forbidden: []string{"payments/http", "payments/raft", "payments/wal", "payments/bench", "github.com/valyala/fasthttp", "github.com/cockroachdb/pebble"}},
		{pkg: "payments/rails", forbidden: []string{"payments/http", "payments/raft", "payments/wal", "payments/bench"}},
		{pkg: "payments/http", forbidden: []string{"payments/raft", "payments/wal", "payments/bench", "github.com/cockroachdb/pebble"}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			if r.allowed != nil {
				std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
				if !std && !contains(r.allowed, imp) {
					t.Errorf("%s imports %s; it may import only the standard library and apd", r.pkg, imp)
				}
				if strings.HasPrefix(imp, "payments/") {
					t.Errorf("%s imports %s", r.pkg, imp)
				}
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(imp, f) {
					t.Errorf("%s must not import %s", r.pkg, imp)
				}
			}
		}
	}
	// The service never imports the load generator.
	out, err := exec.Command("go", "list", "-deps", "payments/cmd/payments").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "payments/bench") {
			t.Errorf("the service binary depends on %s", dep)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
