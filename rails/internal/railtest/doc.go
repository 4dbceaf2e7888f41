// Package railtest is what the provider adapters' tests (momo, mpesa)
// share: a settable clock for an adapter and its fake, an ingress that
// stands for our callback route, the rig that holds both for a test
// against a fake, a stub provider with canned answers and the check of an
// outcome against a table's want.
//
// Everything here is safe for concurrent use. Never: it is imported by
// tests only, and it knows no provider's API (what an ingress answers is
// the caller's).
package railtest
