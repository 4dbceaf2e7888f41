package testkit

import (
	"strings"
	"testing"
)

// WantErr holds err to want, a table case's expected error: none for "",
// else one whose message contains want. It fails t otherwise, and reports
// whether the case wanted an error (the case usually ends there).
func WantErr(t testing.TB, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error %v, want one saying %q", err, want)
	}
	return want != ""
}
