package core

import (
	"github.com/fasthttp/router"

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
