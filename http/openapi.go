package http

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"

	"github.com/valyala/fasthttp"

	"payments/http/core"
)

// openAPI is the service's own description of its API, served at
// /openapi.json. A test holds it to the router: every route is described,
// and every described path is a route.
//
// The document is openapi.json plus one fragment per feature in openapi/,
// each with its own "paths" and "components.schemas", merged at start-up so
// that a feature's description sits beside its handlers' file names.
var openAPI = mergeOpenAPI()

//go:embed openapi.json
var openAPIBase []byte

//go:embed openapi
var openAPIFragments embed.FS

func mergeOpenAPI() []byte {
	var doc map[string]any
	if err := json.Unmarshal(openAPIBase, &doc); err != nil {
		panic(fmt.Sprintf("http: openapi.json: %v", err))
	}
	paths := doc["paths"].(map[string]any)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	names, err := fs.Glob(openAPIFragments, "openapi/*.json")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	for _, name := range names {
		b, _ := openAPIFragments.ReadFile(name)
		var frag struct {
			Paths      map[string]map[string]any `json:"paths"`
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &frag); err != nil {
			panic(fmt.Sprintf("http: %s: %v", name, err))
		}
		for p, ops := range frag.Paths {
			merged, _ := paths[p].(map[string]any)
			if merged == nil {
				merged = map[string]any{}
				paths[p] = merged
			}
			for m, op := range ops {
				if _, dup := merged[m]; dup {
					panic(fmt.Sprintf("http: %s: %s %s described twice", name, m, p))
				}
				merged[m] = op
			}
		}
		for k, v := range frag.Components.Schemas {
			if _, dup := schemas[k]; dup {
				panic(fmt.Sprintf("http: %s: schema %s described twice", name, k))
			}
			schemas[k] = v
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
}

func init() {
	core.RegisterRouteSet(func(s *core.Server) {
		s.Router().GET("/openapi.json", func(ctx *fasthttp.RequestCtx) {
			s.Begin(ctx)
			ctx.SetContentType("application/json")
			ctx.SetBody(openAPI)
		})
	})
}
