// Package logscrub keeps secrets out of the logs: a slog.Handler that masks
// API keys (sk_test_…, sk_live_…), webhook signing secrets (whsec_…),
// bearer tokens and Authorization header values in every record's message
// and attributes before the next handler writes them.
//
// It is the last line of defence, not the first: code must still not log
// request bodies or headers. What cannot be recognised by its shape (a
// request body) is kept out by the callers: the HTTP server's fasthttp
// logger drops the raw request bytes fasthttp quotes in its parse errors.
//
// A Handler is safe for concurrent use if the handler it wraps is.
package logscrub
