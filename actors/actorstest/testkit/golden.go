package testkit

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

// Update is the -update flag of the tests that hold what the code makes to
// a committed file (the HTTP contract's golden scripts, the compiled
// contracts' bytecode): with it they write the file anew, for a review of
// the diff, instead of comparing.
var Update = flag.Bool("update", false, "rewrite the committed files that tests compare with, from what the code makes now")

// Golden reports whether the committed file at path holds got; with
// -update it writes got there first. It fails t if the file cannot be read
// or written.
func Golden(t testing.TB, path string, got []byte) bool {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(got, want)
}
