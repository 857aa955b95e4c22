package listener

import (
	"crypto/tls"
	"net"
)

// Options configure New: one field per layer.
type Options struct {
	Retry RetryOptions
	// Proxy, when not nil, turns the PROXY protocol layer on.
	Proxy  *ProxyOptions
	Limits LimitOptions
	// TLS, when not nil, turns TLS on (see ServerConfig).
	TLS *tls.Config
}

// Stack is the public listener with its layers, bottom to top: accept
// retry, PROXY protocol, limits, TLS.
type Stack struct {
	net.Listener // the top layer: what the server serves
	Retry        *RetryListener
	Limits       *LimitListener
}

// New builds the stack over a bound TCP listener.
func New(tcp net.Listener, o Options) (*Stack, error) {
	if o.TLS != nil {
		o.Limits.ParkAfter = 0 // see LimitOptions.ParkAfter
	}
	s := &Stack{Retry: Retry(tcp, o.Retry)}
	var ln net.Listener = s.Retry
	if o.Proxy != nil {
		p, err := Proxy(ln, *o.Proxy)
		if err != nil {
			return nil, err
		}
		ln = p
	}
	s.Limits = Limit(ln, o.Limits)
	ln = s.Limits
	if o.TLS != nil {
		ln = TLS(ln, o.TLS, o.Limits.OnReject)
	}
	s.Listener = ln
	return s, nil
}
