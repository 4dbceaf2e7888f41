package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The architecture's import rules, checked: who may import whom.
// sharedLeaves are packages that stand under a layer but use nothing of it
// (their own rule above: the standard library only), so any package may
// import them: raft/rounds shares one run of a function among its callers,
// for Raft's leader confirmations and the front end's read-index fetches.
var sharedLeaves = []string{"payments/raft/rounds"}

func TestForbiddenImports(t *testing.T) {
	rules := []struct {
		pkg            string
		forbidden      []string // import path prefixes
		forbiddenExact []string // import paths
		allowed        []string // for ledger: the only non-standard imports
	}{
		{pkg: "payments/ledger", allowed: []string{"github.com/cockroachdb/apd/v3", "payments/ledger/kv"}},
		// The ledger's byte-level machinery, beneath the kernel, imports
		// the standard library only.
		{pkg: "payments/ledger/kv", allowed: []string{}},
		// The leaf packages of sharedLeaves import the standard library only.
		{pkg: "payments/raft/rounds", allowed: []string{}},
		{pkg: "payments/wal", forbidden: []string{"payments/"}},
		{pkg: "payments/raft", forbidden: []string{"payments/http", "payments/rails", "payments/bench"}},
		{pkg: "payments/actors", forbidden: []string{"payments/http", "payments/rails", "payments/raft", "payments/wal", "payments/bench", "github.com/valyala/fasthttp", "github.com/asynkron/protoactor-go/remote", "github.com/asynkron/protoactor-go/cluster"}},
		{pkg: "payments/actors/app", forbidden: []string{"payments/http", "payments/raft", "payments/wal", "payments/bench", "github.com/valyala/fasthttp", "github.com/cockroachdb/pebble"}},
		{pkg: "payments/rails", forbidden: []string{"payments/http", "payments/raft", "payments/wal", "payments/bench"}},
		{pkg: "payments/http", forbidden: []string{"payments/raft", "payments/wal", "payments/bench", "github.com/cockroachdb/pebble"}},
		// The front end's core (pipeline, codec, errors, reads' and replies'
		// shapes) knows no feature: each feature package registers itself on
		// it, and package http imports them all.
		{pkg: "payments/http/core", forbidden: []string{"payments/http/admin", "payments/http/money", "payments/http/links", "payments/http/dashsite", "payments/http/requests"}, forbiddenExact: []string{"payments/http"}},
		// Features import core, not each other, but for admin's recipients
		// (checked as payouts' destinations are, in money) and the
		// dashboard's forms (the API's own, in admin).
		{pkg: "payments/http/money", forbidden: []string{"payments/http/admin", "payments/http/links", "payments/http/dashsite", "payments/http/requests"}, forbiddenExact: []string{"payments/http"}},
		{pkg: "payments/http/links", forbidden: []string{"payments/http/admin", "payments/http/money", "payments/http/dashsite", "payments/http/requests"}, forbiddenExact: []string{"payments/http"}},
		{pkg: "payments/http/requests", forbidden: []string{"payments/http/admin", "payments/http/money", "payments/http/links", "payments/http/dashsite"}, forbiddenExact: []string{"payments/http"}},
		{pkg: "payments/http/admin", forbidden: []string{"payments/http/links", "payments/http/dashsite", "payments/http/requests"}, forbiddenExact: []string{"payments/http"}},
		{pkg: "payments/http/dashsite", forbidden: []string{"payments/http/links", "payments/http/requests"}, forbiddenExact: []string{"payments/http"}},
		// Presentation (templates, assets) calls no handler and no actor.
		{pkg: "payments/http/checkout", forbidden: []string{"payments/http/core", "payments/actors"}},
		{pkg: "payments/http/dashboard", forbidden: []string{"payments/http/core", "payments/actors", "payments/ledger"}},
		// The simulator drives the service through actors/app and the
		// actors, never through the front end, so that it tests the code
		// that serves traffic.
		{pkg: "payments/bench/sim", forbidden: []string{"payments/http"}},
	}
	// Every package of the front end keeps the front end's rule: no Raft,
	// no WAL, no storage engine, no load generator.
	out, err := exec.Command("go", "list", "payments/http/...").Output()
	if err != nil {
		t.Fatalf("go list payments/http/...: %v", err)
	}
	subs := strings.Fields(string(out))
	if len(subs) < 8 {
		t.Fatalf("go list payments/http/... found only %v", subs)
	}
	for _, p := range subs {
		rules = append(rules, struct {
			pkg            string
			forbidden      []string
			forbiddenExact []string
			allowed        []string
		}{pkg: p, forbidden: []string{"payments/raft", "payments/wal", "payments/bench", "github.com/cockroachdb/pebble"}})
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
				if strings.HasPrefix(imp, "payments/") && !contains(r.allowed, imp) {
					t.Errorf("%s imports %s", r.pkg, imp)
				}
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(imp, f) && !contains(sharedLeaves, imp) {
					t.Errorf("%s must not import %s", r.pkg, imp)
				}
			}
			if contains(r.forbiddenExact, imp) {
				t.Errorf("%s must not import %s", r.pkg, imp)
			}
		}
	}
	// The ledger's feature packages (ledger/feature.go) are the ledger too:
	// the standard library, apd, the kernel and each other, nothing else.
	// ledgertest and the packages under it, their tests' harness and shared
	// fixtures, run them over a real state store.
	out, err = exec.Command("go", "list", "payments/ledger/...").Output()
	if err != nil {
		t.Fatalf("go list payments/ledger/...: %v", err)
	}
	raftImports, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "payments/raft").Output()
	if err != nil {
		t.Fatal(err)
	}
	features := 0
	for _, p := range strings.Fields(string(out)) {
		if p == "payments/ledger" || p == "payments/ledger/kv" || p == "payments/ledger/ledgertest" || strings.HasPrefix(p, "payments/ledger/ledgertest/") {
			continue
		}
		features++
		// A node applies every command its log may hold (raft/features.go).
		if !contains(strings.Fields(string(raftImports)), p) {
			t.Errorf("payments/raft does not link %s: a node could not apply its commands", p)
		}
		imps, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, p).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", p, err)
		}
		for _, imp := range strings.Fields(string(imps)) {
			std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
			// The kernel and its byte machinery; never another feature.
			ledger := imp == "payments/ledger" || imp == "payments/ledger/kv"
			if std && strings.HasPrefix(imp, "payments/") && !ledger || !std && imp != "github.com/cockroachdb/apd/v3" {
				t.Errorf("%s imports %s; a feature of the ledger may import only the standard library, apd, the ledger and ledger/kv", p, imp)
			}
		}
	}
	if features == 0 {
		t.Error("go list payments/ledger/... found no feature package")
	}
	// The service never imports the load generator.
	out, err = exec.Command("go", "list", "-deps", "payments/cmd/payments").Output()
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
