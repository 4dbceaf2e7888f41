package dashboard

import (
	"embed"

	"payments/http/webassets"
)

// The page's static files, embedded in the binary and served under names
// that carry a digest of their bytes (package webassets).
//
//go:embed assets
var assetFiles embed.FS

// Assets are the page's static files.
var Assets = webassets.New(assetFiles, "assets")

// assetPath is where the page finds a file of assets/: base is the page's
// prefix.
func assetPath(base, file string) string { return Assets.Path(base, file) }
