// Package http is the REST front end (imported as api where it meets
// net/http): fasthttp and a router, the JSON codec, authentication by bearer
// key, per-key rate limits, scopes, the error envelope and the one table from
// error codes to HTTP statuses, pagination with opaque cursors, the
// service-version header, request ids, and forwarding from followers to the
// leader.
//
// # The pipeline
//
// Every /v1 request: a fresh request id (x-request-id, echoed as requestId in
// errors), the version check and echo, forwarding to the leader if this node
// is a follower, authentication (the key's prefix must match the stack), the
// rate limit, the scope, then the handler. Handlers copy what they need out
// of the fasthttp context before anything outlives the request, and writes
// wait for their commit (actors.Config.CommitTimeout) before answering: a 2xx
// is durable.
//
// Around the router, recordRequests gives every request its id (naming
// this node) and, once it is answered, hands a copy of what the request log
// keeps to the recorder's bounded queue: requests made with a key and failed
// authentications, redacted on the recorder's goroutine (requestlog.go,
// package redact, requests.go).
//
// Two kinds of route skip that pipeline, and are served by whichever node
// is asked: signed file downloads (GET /v1/files/{id}/content, authorized
// by the URL's signature, not a key) and the internal blob routes between
// nodes (authorized by a peer token); see files.go and filepeers.go.
//
// The hosted checkout (/checkout/… pages, /v1/checkout/… endpoints) has no
// key either: a payment link's id is its authority, requests are limited
// per client address, writes from another site are refused, and followers
// relay to the leader. Its presentation is package http/checkout; its reads
// of ledger state are all in checkout_reads.go; its writes (opening a
// session, the sandbox's simulated deposits) are the application API's
// operations, the ones the payment-link endpoints call. See
// checkout_public.go.
//
// The dashboard (/dashboard/…) is for signed-in team members: a session
// cookie, not a key (dashboard_auth.go). Its forms call the application's
// operations as the member, with the scopes of the member's role, after
// the checks the API's route makes of the same body; its pages render
// what they read as the API renders it (dashboard_pages.go). The team's
// own routes (sign-in, setup, invitation and reset links, the Team page, a
// member's password) call the team's operations, which check passwords
// and draw session and link tokens (dashboard_auth.go, dashboard_team.go,
// dashboard_account.go): the API has no handlers for them. Their
// presentation is package http/dashboard.
//
// # Never
//
// Handlers touch the ledger only through the actors and the read views they
// offer, and never decide a business rule the ledger owns.
package http
