package http

import (
	"net/netip"
	"net/url"

	"payments/http/core"
	"payments/http/requests" // the request log's API
	"payments/ledger"

	// The features: each registers its routes and event renderers on core.
	_ "payments/http/admin"    // keys, webhooks and events, recipients, disputes, files, simulations
	_ "payments/http/dashsite" // the dashboard's sign-in, team and pages
	_ "payments/http/links"    // payment links, pages, checkout sessions and the hosted checkout
	_ "payments/http/money"    // payouts, collections, conversions, orders, deposits, accounts
)

// The service's REST front end, as cmd/payments and the tests build it: the
// pipeline and shared plumbing of package core, with every feature package
// this package imports registered on it.

type (
	// Config configures a Server (core.Config).
	Config = core.Config
	// Cluster is what the front end needs to know of the Raft node.
	Cluster = core.Cluster
	// App is the application API the handlers call.
	App = core.App
	// RequestStore is where a node keeps its request log.
	RequestStore = core.RequestStore
	// NameResolver resolves account holder names.
	NameResolver = core.NameResolver
)

// Server is the REST front end: core's server, with what its operators
// call of the feature packages.
type Server struct {
	*core.Server
}

// New builds a Server that serves every feature.
func New(cfg Config) *Server { return &Server{core.New(cfg)} }

// UnattributedRequests returns a page of this node's request records of no
// organization (package requests).
func (s *Server) UnattributedRequests(q url.Values) ([]byte, error) {
	return requests.UnattributedRequests(s.Server, q)
}

// Defaults and limits callers configure against.
const (
	SandboxSpreadBasisPoints    = core.SandboxSpreadBasisPoints
	DashboardIdleTimeoutDefault = core.DashboardIdleTimeoutDefault
	BlobOrphanAge               = core.BlobOrphanAge
)

// ErrRequestLogOff is the error of a request log lookup on a node without
// one.
var ErrRequestLogOff = requests.ErrRequestLogOff

// EventPayload is an event as webhooks deliver it.
func EventPayload(ev ledger.Event) ([]byte, error) { return core.EventPayload(ev) }

// ParseTrustedProxies parses --trusted-proxies: addresses and prefixes,
// comma-separated.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) { return core.ParseTrustedProxies(s) }
