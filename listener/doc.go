// Package listener builds the edge's public listener out of layers, each a
// net.Listener wrapping the one below:
//
//	TCP accept-retry -> PROXY protocol (when configured) -> connection
//	limits (per client address, idle timeout under pressure) -> TLS (when
//	configured)
//
// Accept errors that pass (out of file descriptors, out of buffers, an
// aborted handshake) are retried with backoff instead of ending the
// server, and the listener reports whether it is accepting, so readiness
// never claims a listener that cannot take connections. The PROXY
// protocol layer (github.com/pires/go-proxyproto) makes the TCP peer
// address the edge sees the client's; the limits layer counts connections
// per client address after that, so they apply to clients rather than to
// the load balancer. The TLS layer serves a certificate that can be
// swapped atomically while connections stay open (Certificate).
//
// It imports nothing of the project: its callers pass callbacks for
// metrics and a *slog.Logger for events.
package listener
