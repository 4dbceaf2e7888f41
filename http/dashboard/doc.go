// Package dashboard renders the operator's dashboard under /dashboard: Go
// templates and a little plain JavaScript, embedded, with content-digest
// asset names and a strict Content-Security-Policy, as the hosted checkout
// does. It knows no business rule: package http calls the API's own
// handlers in-process and hands their JSON answers here to show.
package dashboard
