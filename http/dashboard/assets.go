package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"path"
	"strings"
)

// The page's static files, embedded in the binary. Each is served under a
// name carrying a digest of its bytes (dashboard.3f2a9c1d.css), so that a
// browser may cache it for a year: a changed file gets a new name.
//
//go:embed assets
var assetFiles embed.FS

// Asset is a static file of the page.
type Asset struct {
	Body        []byte
	ContentType string
}

var (
	assetsByName   = map[string]Asset{}  // served name → file
	assetNames     = map[string]string{} // file name → served name
	assetCacheLife = "public, max-age=31536000, immutable"
)

func init() {
	entries, err := fs.ReadDir(assetFiles, "assets")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		body, err := assetFiles.ReadFile("assets/" + e.Name())
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
		assetsByName[served] = Asset{Body: body, ContentType: ct}
		assetNames[e.Name()] = served
	}
}

// LookupAsset returns the file served under name.
func LookupAsset(name string) (Asset, bool) {
	a, ok := assetsByName[name]
	return a, ok
}

// AssetCacheControl is the Cache-Control of every asset: a year, immutable.
func AssetCacheControl() string { return assetCacheLife }

// assetPath is where the page finds a file of assets/: base is the page's
// prefix ("/dashboard").
func assetPath(base, file string) string {
	served, ok := assetNames[file]
	if !ok {
		panic("dashboard: no asset " + file)
	}
	return base + "/assets/" + served
}
