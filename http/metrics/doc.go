// Package metrics is the node's Prometheus exposition: the registry, the
// HTTP front end's request metrics, and the /metrics handler that a
// separate listener (--metrics-addr) serves. It sits beside the Grafana
// dashboard (dashboard.json) and the alert rules (alerts.yml) that read
// what it serves.
//
// Only this package and the wiring in cmd/payments import the Prometheus
// client. The packages that do the work (ledger, wal, raft, actors) keep
// plain counters, atomics and callbacks that collectors registered here read
// at scrape time, so the ledger stays pure and the hot paths pay one atomic
// add or one histogram observation, never a label lookup by map.
//
// Labels are bounded: a route template (the router's pattern, never the
// raw path), a method, a status code, a stable error code, an outcome.
// Never an id, a reference, a key or an organization.
//
// Everything here is safe for concurrent use.
package metrics
