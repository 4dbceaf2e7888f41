package http

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The front end (this package and its sub-packages) translates; the
// application decides (package actors/app).
// No handler builds a ledger command, draws an identifier or a secret,
// computes a fee or prices a conversion: those are operations' work. This
// test reads the source of this package and of every package under it
// (tests and testdata aside), resolving each file's import names, for
// calls and composite literals that do, and fails on any not in
// stillInHTTP, the list of what the move into actors/app has yet to take,
// which only shrinks: an entry that no longer occurs fails too, so that
// the list stays true.
func TestHandlersDecideNothing(t *testing.T) {
	commands := ledgerCommandTypes(t)
	forbiddenCalls := map[string]bool{
		"actors.NewID": true, "actors.NewKeySecret": true, "actors.NewWebhookSecret": true,
		"rails.ConvertFrom": true, "rails.ConvertTo": true,
	}
	// Methods whose call prices, on whatever value: a payment method's fee
	// schedules (rails.Method.Fees).
	forbiddenMethods := map[string]bool{"Fees": true}
	found := map[string]bool{}
	var files []string        // this package's and every sub-package's
	dirs := map[string]bool{} // the directories they are in
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
			dirs[filepath.Dir(path)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every package of the front end is read: the feature packages, core,
	// and the presentation packages beside them.
	for _, d := range []string{".", "core", "money", "links", "admin", "dashsite", "requests", "checkout", "dashboard"} {
		if !dirs[d] {
			t.Errorf("no Go source read in http/%s: the walk missed a package", d)
		}
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The names this file imports the packages under, aliases too:
		// the ledger's commands, and the calls that decide.
		local := map[string]string{} // local name → import path's last element
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			base := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local[imp.Name.Name] = base
			} else {
				local[base] = base
			}
		}
		pkgOf := func(x *ast.Ident) string {
			if p, ok := local[x.Name]; ok {
				return p
			}
			return ""
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && commands[pkgOf(x)+"."+sel.Sel.Name] {
						found[name+": "+pkgOf(x)+"."+sel.Sel.Name+"{}"] = true
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && forbiddenCalls[pkgOf(x)+"."+sel.Sel.Name] {
						found[name+": "+pkgOf(x)+"."+sel.Sel.Name+"()"] = true
					}
					if forbiddenMethods[sel.Sel.Name] {
						found[name+": ."+sel.Sel.Name+"()"] = true
					}
				}
			}
			return true
		})
	}
	var got []string
	for k := range found {
		got = append(got, k)
	}
	sort.Strings(got)
	for _, g := range got {
		if !slices.Contains(stillInHTTP, g) {
			t.Errorf("%s: the front end decides; call an operation of actors/app instead", g)
		}
	}
	for _, w := range stillInHTTP {
		if !found[w] {
			t.Errorf("%s is listed in stillInHTTP but no longer occurs: remove it from the list", w)
		}
	}
}

// ledgerCommandTypes are the command types of package ledger and of its
// feature packages (ledger/*/): the types with a Kind method, by package
// and name ("ledger.CreatePayout", "recipients.Create").
func ledgerCommandTypes(t *testing.T) map[string]bool {
	t.Helper()
	kernel, err := filepath.Glob("../ledger/*.go")
	if err != nil {
		t.Fatal(err)
	}
	features, err := filepath.Glob("../ledger/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^func \([a-z]* ?\*([A-Z][A-Za-z0-9]*)\) Kind\(\) (?:ledger\.)?Kind`)
	out := map[string]bool{}
	for _, f := range append(kernel, features...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Base(filepath.Dir(f))
		for _, m := range re.FindAllSubmatch(b, -1) {
			out[pkg+"."+string(m[1])] = true
		}
	}
	if len(out) < 50 || !out["recipients.Create"] {
		t.Fatalf("found only %d ledger command types (recipients.Create: %v): the pattern no longer matches", len(out), out["recipients.Create"])
	}
	return out
}

// stillInHTTP is what the front end still decides, to be moved into
// actors/app. It only shrinks.
var stillInHTTP = []string{}
