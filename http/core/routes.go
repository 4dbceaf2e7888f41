package core

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// endpoint is one route: its method, path, the scope it needs (0: any valid
// key) and its handler.
type Endpoint struct {
	Method, Path string
	Scope        ledger.Scopes
	H            func(*Call)
	Sim          *SimulationDoc // set on sandbox simulation endpoints
}

// simulationDoc describes an explicit simulation endpoint for the
// simulation index (GET /v1/simulations), which is built from the route
// table so that it lists exactly the simulations that are served.
type SimulationDoc struct {
	Operation   string
	Description string
	Outcomes    []string // explicit outcome values the endpoint accepts
}

// featureRoutes are the endpoints that feature files add from their init
// functions, so that each feature keeps its routes beside its handlers.
var featureRoutes []Endpoint

func RegisterRoutes(es ...Endpoint) { featureRoutes = append(featureRoutes, es...) }

// routeSets add routes that are not API endpoints (pages, documents), from
// the init functions of the packages that serve them.
var routeSets []func(*Server)

// RegisterRouteSet adds routes to every Server built after it: add
// registers them on the server's router. Call it from an init function.
func RegisterRouteSet(add func(*Server)) { routeSets = append(routeSets, add) }

// Router is the server's router, for RegisterRouteSet's functions.
func (s *Server) Router() *router.Router { return s.router }

// routes registers every endpoint with the scope it needs.
func (s *Server) routes() {
	r := s.router
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	for _, add := range routeSets {
		add(s)
	}
	// A follower's question to the leader (readindex.go): no API key, no forwarding.
	r.GET(readIndexPath, s.serveReadIndex)
	s.fileRoutes() // internal blob routes: no API key, no forwarding

	// Provider instances' callbacks: no API key (providers.go).
	s.providerRoutes()

	for _, e := range featureRoutes {
		h := e.H
		s.route(e.Method, e.Path, e.Scope, func(c *Call) { h(c) })
		s.Endpoints = append(s.Endpoints, e) // for the simulation index
	}
}

// Scope is the scope an API route needs (0: any valid key), and whether
// the route is one.
func (s *Server) Scope(method, path string) (ledger.Scopes, bool) {
	scope, ok := s.scopes[method+" "+path]
	return scope, ok
}

// Handlers are a resource's usual endpoints (Resource); a nil one is not
// served.
type Handlers struct {
	Create      func(*Call) // POST {path}
	List        func(*Call) // GET {path}
	ByReference func(*Call) // GET {path}/by-reference/{externalReference}
	Get         func(*Call) // GET {path}/{id}
	Update      func(*Call) // PATCH {path}/{id}
	Replace     func(*Call) // PUT {path}/{id}
	Delete      func(*Call) // DELETE {path}/{id}
}

// Resource is the endpoints of the resource at path: reads need read,
// changes write.
func Resource(path string, read, write ledger.Scopes, h Handlers) []Endpoint {
	var out []Endpoint
	for _, e := range []Endpoint{
		{Method: fasthttp.MethodPost, Path: path, Scope: write, H: h.Create},
		{Method: fasthttp.MethodGet, Path: path, Scope: read, H: h.List},
		{Method: fasthttp.MethodGet, Path: path + "/by-reference/{externalReference}", Scope: read, H: h.ByReference},
		{Method: fasthttp.MethodGet, Path: path + "/{id}", Scope: read, H: h.Get},
		{Method: fasthttp.MethodPatch, Path: path + "/{id}", Scope: write, H: h.Update},
		{Method: fasthttp.MethodPut, Path: path + "/{id}", Scope: write, H: h.Replace},
		{Method: fasthttp.MethodDelete, Path: path + "/{id}", Scope: write, H: h.Delete},
	} {
		if e.H != nil {
			out = append(out, e)
		}
	}
	return out
}
