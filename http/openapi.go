package http

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// openAPI is the service's own description of its API, served at
// /openapi.json. A test holds it to the router: every route is described,
// and every described path is a route.
//
//go:embed openapi.json
var openAPI []byte

func (s *Server) openAPIDocument(ctx *fasthttp.RequestCtx) {
	s.begin(ctx)
	ctx.SetContentType("application/json")
	ctx.SetBody(openAPI)
}
