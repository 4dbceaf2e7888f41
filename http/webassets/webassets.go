// Package webassets serves the static files of the binary's own pages (the
// hosted checkout, the dashboard): embedded, each under a name carrying a
// digest of its bytes (page.3f2a9c1d.css), so that a browser may cache it
// for a year: a changed file gets a new name.
package webassets

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"path"
	"strings"
)

// CacheControl is the Cache-Control of every asset: a year, immutable.
const CacheControl = "public, max-age=31536000, immutable"

// Asset is a static file of a page.
type Asset struct {
	Body        []byte
	ContentType string
}

// Set is the files of one directory of an embedded file system.
type Set struct {
	byServed map[string]Asset  // served name → file
	served   map[string]string // file name → served name
}

// New reads every file of dir in files. It panics on an error: the files
// are embedded, so one is a build's mistake.
func New(files fs.FS, dir string) *Set {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		panic(err)
	}
	s := &Set{byServed: map[string]Asset{}, served: map[string]string{}}
	for _, e := range entries {
		body, err := fs.ReadFile(files, dir+"/"+e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(e.Name())
		served := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:4]) + ext
		ct := mime.TypeByExtension(ext)
		if ext == ".js" {
			ct = "text/javascript; charset=utf-8"
		}
		s.byServed[served] = Asset{Body: body, ContentType: ct}
		s.served[e.Name()] = served
	}
	return s
}

// Lookup returns the file served under name.
func (s *Set) Lookup(name string) (Asset, bool) {
	a, ok := s.byServed[name]
	return a, ok
}

// Path is where a page finds file: base is the page's prefix
// ("/checkout"). It panics for a file the set does not hold, which a
// template's test catches.
func (s *Set) Path(base, file string) string {
	served, ok := s.served[file]
	if !ok {
		panic("webassets: no asset " + file)
	}
	return base + "/assets/" + served
}

//go:embed head.html
var headFiles embed.FS

// Head adds to t the template "document-head", which every page of the
// binary's own sites opens with: the document up to its title, the page
// kept out of search engines and its address out of Referer headers.
func Head(t *template.Template) *template.Template {
	return template.Must(t.ParseFS(headFiles, "head.html"))
}
