// Package dashsite serves the dashboard (/dashboard/…) to signed-in team
// members: a session cookie, not a key (dashboard_auth.go). Its forms call
// the application's operations as the member, with the scopes of the
// member's role, after the checks the API's route makes of the same body
// (package admin's); its pages render what they read as the API renders
// it (dashboard_pages.go). The team's own routes (sign-in, setup,
// invitation and reset links, the Team page, a member's password) call the
// team's operations, which check passwords and draw session and link
// tokens (dashboard_auth.go, dashboard_team.go, dashboard_account.go): the
// API has no handlers for them. Its presentation is package
// http/dashboard.
//
// Never: it builds no ledger command and draws no token itself
// (http/layering_test.go); it imports no feature package but admin
// (cmd/payments/imports_test.go).
package dashsite
