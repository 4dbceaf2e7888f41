package webassets

import (
	"strings"
	"testing"
	"testing/fstest"
)

// A file is served under its name with a digest of its bytes, with the
// content type of its extension; its plain name is not served.
func TestServedNames(t *testing.T) {
	s := New(fstest.MapFS{
		"assets/page.css": {Data: []byte("body{}")},
		"assets/page.js":  {Data: []byte("x()")},
	}, "assets")
	p := s.Path("/x", "page.css")
	name := strings.TrimPrefix(p, "/x/assets/")
	if !strings.HasPrefix(name, "page.") || !strings.HasSuffix(name, ".css") || len(name) != len("page.")+8+len(".css") {
		t.Fatalf("served as %q", p)
	}
	if a, ok := s.Lookup(name); !ok || string(a.Body) != "body{}" || !strings.HasPrefix(a.ContentType, "text/css") {
		t.Fatalf("Lookup(%q) = %+v %v", name, a, ok)
	}
	if a, ok := s.Lookup(strings.TrimPrefix(s.Path("/x", "page.js"), "/x/assets/")); !ok || a.ContentType != "text/javascript; charset=utf-8" {
		t.Fatalf("script: %+v %v", a, ok)
	}
	if _, ok := s.Lookup("page.css"); ok {
		t.Fatal("the plain name is served")
	}
	other := New(fstest.MapFS{"assets/page.css": {Data: []byte("body{color:red}")}}, "assets")
	if other.Path("/x", "page.css") == p {
		t.Fatal("changed bytes keep the name")
	}
}
