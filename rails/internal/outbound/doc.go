// Package outbound is the HTTP plumbing the provider adapters share: one
// request sent with a record of whether any of it reached the wire (the
// line between "not sent, safe to retry" and "outcome unknown"), bounded
// response bodies, Retry-After parsing, the masking of account numbers
// for messages and a cached access token.
//
// Everything here is safe for concurrent use; only a TokenCache holds
// state.
//
// Never: it does not retry a request (whether a retry is safe is the
// adapter's call), and it never puts a request's headers or body into an
// error, for they carry credentials and phone numbers.
package outbound
