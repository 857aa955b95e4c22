package ops

import "time"

// ListenerStats is a snapshot of the public listener, read at scrape
// time.
type ListenerStats struct {
	// Accepting is false while accepting fails (out of file descriptors,
	// say) and until the next connection is accepted.
	Accepting bool
	// Open counts the open public connections; Parked those of them
	// parked without a goroutine (server.park_idle_after).
	Open, Parked int64
	// Concurrency is the connection cap in force; FDLimit the process's
	// file-descriptor limit found at start (0: none).
	Concurrency int
	FDLimit     uint64
}

// EmbeddedRedisStats is a snapshot of the embedded in-process Redis.
type EmbeddedRedisStats struct {
	// Keys and Bytes (keys, values and a per-key overhead) are measured
	// every sweep.
	Keys, Bytes, MaxBytes int64
}

// SetListenerSource registers the edge_listener_* gauges, read from f at
// each scrape. Call it once.
func (m *Metrics) SetListenerSource(f func() ListenerStats) {
	m.listenerOnce.Do(func() {
		m.set.NewGauge(`edge_listener_accepting{listener="public"}`, func() float64 {
			if f().Accepting {
				return 1
			}
			return 0
		})
		m.set.NewGauge(`edge_listener_open_connections{listener="public"}`, func() float64 { return float64(f().Open) })
		m.set.NewGauge(`edge_listener_parked_connections{listener="public"}`, func() float64 { return float64(f().Parked) })
		m.set.NewGauge(`edge_listener_concurrency{listener="public"}`, func() float64 { return float64(f().Concurrency) })
		m.set.NewGauge(`edge_process_fd_limit`, func() float64 { return float64(f().FDLimit) })
	})
}

// SetEmbeddedRedisSource registers the edge_embedded_redis_* metrics,
// read from f at each scrape. Call it once, only when the embedded Redis
// runs.
func (m *Metrics) SetEmbeddedRedisSource(f func() EmbeddedRedisStats) {
	m.embeddedOnce.Do(func() {
		m.set.NewGauge(`edge_embedded_redis_keys`, func() float64 { return float64(f().Keys) })
		m.set.NewGauge(`edge_embedded_redis_bytes`, func() float64 { return float64(f().Bytes) })
		m.set.NewGauge(`edge_embedded_redis_max_bytes`, func() float64 { return float64(f().MaxBytes) })
	})
}

// EmbeddedRedisEvicted counts keys the embedded Redis evicted for room.
func (m *Metrics) EmbeddedRedisEvicted(n int) {
	m.set.GetOrCreateCounter(`edge_embedded_redis_evicted_keys_total`).Add(n)
}

// AcceptError counts a temporary accept error of a listener ("public",
// "admin") by kind (EMFILE, ENFILE, ENOBUFS, ENOMEM, ECONNABORTED, other).
func (m *Metrics) AcceptError(listener, kind string) {
	m.set.GetOrCreateCounter(`edge_listener_accept_errors_total{listener="` + listener + `",error="` + kind + `"}`).Inc()
}

// Reasons of ConnRejected.
const (
	RejectPerIP       = "per_ip"      // over server.max_conns_per_ip (429)
	RejectConcurrency = "concurrency" // beyond server.concurrency (503)
)

// ConnRejected counts a public connection refused by a listener limit
// (RejectPerIP, RejectConcurrency).
func (m *Metrics) ConnRejected(reason string) {
	m.set.GetOrCreateCounter(`edge_listener_rejected_connections_total{reason="` + reason + `"}`).Inc()
}

// DeclareConnRejections exports the rejection counters at 0 before any
// rejection, so that a dashboard or an alert on them finds the series.
func (m *Metrics) DeclareConnRejections() {
	for _, r := range []string{RejectPerIP, RejectConcurrency} {
		m.set.GetOrCreateCounter(`edge_listener_rejected_connections_total{reason="` + r + `"}`)
	}
}

// CertLoaded records the expiry of the TLS certificate in force.
func (m *Metrics) CertLoaded(notAfter time.Time) {
	m.set.GetOrCreateGauge(`edge_tls_certificate_not_after_seconds`, nil).Set(float64(notAfter.Unix()))
}

// CertReload counts a TLS certificate reload attempt by result.
func (m *Metrics) CertReload(err error) {
	r := "ok"
	if err != nil {
		r = "error"
	}
	m.set.GetOrCreateCounter(`edge_tls_certificate_reloads_total{result="` + r + `"}`).Inc()
}
