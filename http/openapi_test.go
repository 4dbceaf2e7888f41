package http

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"payments/ledger"
)

// The OpenAPI document and the router describe the same API: every route is
// in the document with its method, and every documented operation is a
// route. Each documented operation names the scope the route checks.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Scope string `json:"x-scope"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	s := New(Config{})
	routes := map[string]bool{}
	for method, paths := range s.Router().List() {
		for _, p := range paths {
			routes[strings.ToLower(method)+" "+p] = true
		}
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, method+" "+path)
			if !routes[method+" "+path] {
				t.Errorf("documented but not served: %s %s", method, path)
			}
		}
	}
	for r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("served but not documented: %s", r)
		}
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			want, ok := s.Scope(strings.ToUpper(method), path)
			if !ok {
				continue
			}
			if got := op.Scope; got != ledger.ScopeName(want) {
				t.Errorf("%s %s: documented scope %q, the route checks %q", method, path, got, ledger.ScopeName(want))
			}
		}
	}
}
