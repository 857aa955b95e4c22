// Package ops is the operations side of dealer-edge: the Prometheus
// metrics of the edge (Metrics), its structured, sampled and rate-limited
// logs (Logs), and the private admin listener's handler (Admin) with
// /metrics, /healthz, /readyz, cache purge and config reload.
//
// The package imports nothing of the project: cmd/dealer-edge adapts the
// hooks of aggregator, upstream, cache and cache/ratelimit to the plain
// functions and structs declared here, so their exact APIs can change
// without touching this package, and this package can be tested alone.
//
// Cardinality is bounded by construction: route, status, cache result,
// service and outcome labels take values from fixed sets (anything else
// is folded into "other"); no dealer id, key or request id is ever a
// label.
package ops
