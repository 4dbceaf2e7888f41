package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The package doc's "Never" section, checked on the source of the kernel
// and of every feature package (ledger/*/, but ledgertest, the tests'
// harness): Apply is deterministic only if the ledger reads no clock, draws
// no random numbers, starts no goroutines and does no I/O of its own. (Its
// imports are checked by cmd/payments' TestForbiddenImports.)
func TestLedgerIsPure(t *testing.T) {
	forbiddenImports := map[string]string{
		"math/rand": "draws random numbers", "math/rand/v2": "draws random numbers",
		"crypto/rand": "draws random numbers", "os": "does I/O", "net": "does I/O",
		"io/fs": "does I/O", "os/exec": "does I/O", "syscall": "does I/O",
	}
	clockReads := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true,
		"After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	features := 0
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
			continue
		}
		if e.Name() == "testdata" || e.Name() == "ledgertest" {
			continue
		}
		sub, err := os.ReadDir(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		features++
		for _, f := range sub {
			names = append(names, filepath.Join(e.Name(), f.Name()))
		}
	}
	if features == 0 {
		t.Fatal("read no feature package")
	}
	fset := token.NewFileSet()
	files := 0
	for _, name := range names {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files++
		timeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbiddenImports[path]; bad {
				t.Errorf("%s imports %s: the ledger %s", fset.Position(imp.Pos()), path, why)
			}
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: the ledger starts a goroutine", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && clockReads[n.Sel.Name] {
					t.Errorf("%s: the ledger reads the clock (time.%s); times come in commands", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
	if files < 20 {
		t.Fatalf("read only %d files: not the ledger's directory", files)
	}
}
