package app_test

import (
	"bytes"
	"strings"
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/disputes"
)

// evidence is a file record of purpose dispute.evidence.
var evidence = app.NewFile{Purpose: "dispute.evidence", Filename: "receipt.pdf", ContentType: "application/pdf",
	Size: 1234, SHA256: strings.Repeat("ab", 32)}

// The signing key is made once: later calls, and a racing proposal, find
// the first one.
func TestFileSigningKey(t *testing.T) {
	s := newStack(t, stackOptions{})
	first, err := s.app.FileSigningKey()
	if err != nil || len(first) != 32 {
		t.Fatalf("key %x, %v", first, err)
	}
	again, err := s.app.FileSigningKey()
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("a second call made another key: %x %x %v", first, again, err)
	}
}

func TestCreateFile(t *testing.T) {
	s := newStack(t, stackOptions{})
	logo := evidence
	logo.ContentType = "text/html"
	for _, c := range []struct {
		name string
		in   app.NewFile
		want ledger.Code
	}{
		{"evidence", evidence, ""},
		{"a type the purpose refuses", logo, ledger.CodeBadRequest},
		{"no purpose", app.NewFile{Filename: "x", ContentType: "application/pdf", Size: 1, SHA256: evidence.SHA256}, ledger.CodeValidation},
	} {
		r := s.app.CreateFile(s.owner, c.in)
		wantCode(t, c.name, r, c.want)
		if c.want == "" && (!strings.HasPrefix(disputes.FileOf(r.Result).ID, "file_") || disputes.FileOf(r.Result).OrgID != s.org) {
			t.Fatalf("%s: %+v", c.name, disputes.FileOf(r.Result))
		}
	}
}
