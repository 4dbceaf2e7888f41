// Package core is the REST front end's server and the plumbing its
// features share: fasthttp and a router, the JSON codec, authentication by
// bearer key, per-key rate limits, scopes, the error envelope and the one
// table from error codes to HTTP statuses, pagination with opaque cursors,
// the service-version header, request ids, forwarding from followers to
// the leader, the request log's recorder, and the blob routes between
// nodes. Package http assembles it with the feature packages.
//
// # The pipeline
//
// Every /v1 request: a fresh request id (x-request-id, echoed as requestId
// in errors), the version check and echo, forwarding to the leader if this
// node is a follower, authentication (the key's prefix must match the
// stack), the IP allowlist, the rate limit, the scope, then the handler: a
// function of *Call, registered by its feature with RegisterRoutes.
// Handlers copy what they need out of the fasthttp context before
// anything outlives the request, and writes wait for their commit
// (actors.Config.CommitTimeout) before answering: a 2xx is durable.
//
// Around the router, recordRequests gives every request its id (naming
// this node) and, once it is answered, hands a copy of what the request log
// keeps to the recorder's bounded queue: requests made with a key and failed
// authentications, redacted on the recorder's goroutine (requestlog.go,
// package redact) and stored in package http/requestrecord's layout. The
// log's API is package http/requests.
//
// Routes that skip the pipeline are registered on the router, by core
// (health, the read index, the blob routes between nodes in filepeers.go,
// provider callbacks in providers.go) or by a feature with
// RegisterRouteSet (signed file downloads, the hosted checkout, the
// dashboard), and are served by whichever node is asked unless they relay
// themselves. web.go has what the pages share: HTML answers, assets, the
// limit per client address, the cross-site check.
//
// # The shapes of a handler
//
// A feature registers a resource's usual endpoints with Resource. A
// handler reads the request (Param, Decode), checks its shape
// (Problems, answered by Refused; Input does both for a body checked by one
// function, ParamInput for the resource a path parameter names,
// SimulationInput for the sandbox's simulations, BulkItems for a bulk
// request's list), calls an operation of the application API (Config.App)
// as c.Caller(), and answers: Create and
// Created for a create (201, or 200 with idempotent-replayed for a replay),
// Update and Reply for a change to the resource a path parameter names,
// ReplyError where a
// handler needs the error alone (resource.go, reply.go). Reads are Get (one
// record by a path parameter, 404 in the contract's shape) and List (a
// cursor page of the Reader, filtered, rendered); ByID, ByReference and
// Lister are the same as the Handlers of a Resource.
//
// # Never
//
// Core imports no feature package (cmd/payments/imports_test.go), and no
// handler builds a ledger command, draws an identifier or a secret, or
// prices (http/layering_test.go).
package core
