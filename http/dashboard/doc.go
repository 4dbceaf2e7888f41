// Package dashboard renders the operator's dashboard under /dashboard: Go
// templates and a little plain JavaScript, embedded, with content-digest
// asset names and a strict Content-Security-Policy, as the hosted checkout
// does. It knows no business rule: package http/dashsite calls the
// application's operations, renders what it reads as the API renders it,
// and hands that here to show.
package dashboard
