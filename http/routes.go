package http

import (
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// endpoint is one route: its method, path, the scope it needs (0: any valid
// key) and its handler.
type endpoint struct {
	method, path string
	scope        ledger.Scopes
	h            func(*call)
}

// featureRoutes are the endpoints that feature files add from their init
// functions, so that each feature keeps its routes beside its handlers.
var featureRoutes []endpoint

func registerRoutes(es ...endpoint) { featureRoutes = append(featureRoutes, es...) }

// routes registers every endpoint with the scope it needs.
func (s *Server) routes() {
	r := s.router
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/openapi.json", s.openAPIDocument)

	for _, e := range append([]endpoint{
		{fasthttp.MethodGet, "/v1/organization", 0, (*call).getOrganization},
		{fasthttp.MethodPost, "/v1/organizations", ledger.ScopeOrganizationsAdmin, (*call).createOrganization},
		{fasthttp.MethodGet, "/v1/keys", ledger.ScopeKeysAdmin, (*call).listKeys},
		{fasthttp.MethodPost, "/v1/keys", ledger.ScopeKeysAdmin, (*call).createKey},
		{fasthttp.MethodDelete, "/v1/keys/{id}", ledger.ScopeKeysAdmin, (*call).revokeKey},

		{fasthttp.MethodPost, "/v1/payouts", ledger.ScopePayoutsWrite, (*call).createPayout},
		{fasthttp.MethodGet, "/v1/payouts", ledger.ScopePayoutsRead, (*call).listPayouts},
		{fasthttp.MethodGet, "/v1/payouts/by-reference/{externalReference}", ledger.ScopePayoutsRead, (*call).getPayoutByReference},
		{fasthttp.MethodGet, "/v1/payouts/{id}", ledger.ScopePayoutsRead, (*call).getPayout},

		{fasthttp.MethodPost, "/v1/collections", ledger.ScopeCollectionsWrite, (*call).createCollection},
		{fasthttp.MethodGet, "/v1/collections", ledger.ScopeCollectionsRead, (*call).listCollections},
		{fasthttp.MethodGet, "/v1/collections/by-reference/{externalReference}", ledger.ScopeCollectionsRead, (*call).getCollectionByReference},
		{fasthttp.MethodGet, "/v1/collections/{id}", ledger.ScopeCollectionsRead, (*call).getCollection},

		{fasthttp.MethodGet, "/v1/accounts", ledger.ScopeBalancesRead, (*call).listAccounts},
		{fasthttp.MethodGet, "/v1/accounts/{id}", ledger.ScopeBalancesRead, (*call).getAccount},
		{fasthttp.MethodGet, "/v1/accounts/{id}/ledger", ledger.ScopeBalancesRead, (*call).accountLedger},

		{fasthttp.MethodPost, "/v1/simulations/fund-balance", ledger.ScopeSimulationsWrite, (*call).fundBalance},
	}, featureRoutes...) {
		h := e.h
		s.route(e.method, e.path, e.scope, func(c *call) { h(c) })
	}
}
