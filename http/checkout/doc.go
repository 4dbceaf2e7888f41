// Package checkout is the hosted checkout's presentation: the view of one
// payment link that its page shows and its public endpoints send as JSON,
// the Go templates that render that view as HTML, the static assets (CSS,
// JavaScript) embedded in the binary, the merchant branding's sanitising,
// and the QR codes of deposit addresses.
//
// One View feeds both the HTML and the JSON, and the page's script fills
// the same elements the template fills (data-bind attributes name the JSON
// fields), so the page looks the same before and after its script runs,
// and shows the amount and the payment instructions with JavaScript off.
//
// Package http/links owns the routes and the reads of ledger state, and calls
// the application API (package actors/app) for the writes; this package
// only turns records into views and views into bytes. It
// never reads ledger state and never decides a business rule: whether a
// link takes a session, how much it owes and when a session ends are the
// ledger's, and the page shows what the ledger decided.
//
// Everything here is safe for concurrent use: templates and assets are
// parsed once, at package initialisation.
package checkout
