// Package requests is the request log's API: GET /v1/requests and
// /v1/requests/{id}, an organization's requests merged across the nodes
// that served them (each node keeps its own log; a peer's lookup is an
// internal route with a peer token), and the admin API's page of records
// no organization owns (UnattributedRequests). Package http/core records
// the requests; this package only reads the records.
//
// Never: it imports no other feature package (cmd/payments/imports_test.go).
package requests
