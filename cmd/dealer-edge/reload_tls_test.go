package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckConfigHidesURLCredentials: a Redis address or the
// upstream base URL written as a URL with credentials (the REDIS_URL
// habit, basic authentication to a gateway) and one character wrong is
// refused, and the refusal prints the whole value, password included, on
// --check-config, at start (the journal) and in a reload's log line,
// 422 detail and status page. The tracing endpoint has the same case and
// prints "the value" instead (tracing.Config.Validate: "unparsed: it may
// hold credentials"); the README: "No secret is ever logged or printed,
// --check-config included".
func TestCheckConfigHidesURLCredentials(t *testing.T) {
	const secret = "hunter2-s3cr3t-pass"
	dir := t.TempDir()
	for _, c := range []struct{ name, body string }{
		{"redis.addrs URL", `{"redis": {"addrs": ["redis://:` + secret + `@10.0.0.1:6379/0"]}, "upstream": {"base_url": "http://127.0.0.1:9"}}`},
		{"upstream.base_url bad port", `{"upstream": {"base_url": "http://svc:` + secret + `@internal-gw:90x90"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
			writeConfig(t, cfg, c.body)
			var out, errb bytes.Buffer
			code := run([]string{"--check-config", cfg}, &out, &errb, nil)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, out.String()+errb.String())
			}
			if msg := out.String() + errb.String(); strings.Contains(msg, secret) {
				t.Errorf("--check-config printed the password: %s", strings.TrimSpace(msg))
			}
		})
	}
}

// TestWatchKeepsTheCertificateInForce: tls.cert_file/key_file are
// read at start (restart-only); their contents are re-read on every
// reload and "when either file changes" (configs/README.md, tls). After a
// reload of a file that names other TLS paths (logged as needing a
// restart), the watch follows the new paths (app.watchedFiles takes
// a.loaded's), while the certificate in force is still read from the old
// ones: a renewal written to the files in force (cert-manager renewing
// the Secret still mounted) is no longer noticed, and the edge serves the
// old certificate until it expires.
func TestWatchKeepsTheCertificateInForce(t *testing.T) {
	ca := testpki.NewCA(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	certA, keyA := testpki.WritePair(t, dirA, 1, cp, kp)
	cp, kp = ca.Leaf(t, 2, time.Now().Add(time.Hour))
	certB, keyB := testpki.WritePair(t, dirB, 1, cp, kp)
	cfg := filepath.Join(t.TempDir(), "edge.json")
	const body = `{"watch_interval": "50ms", "tls": {"cert_file": %q, "key_file": %q}}`
	writeConfig(t, cfg, fmt.Sprintf(body, certA, keyA))
	e := startEdge(t, "--demo", "--config", cfg)
	serial := func() int64 { return servedSerial(t, e.app.addr, ca.Pool) }
	if s := serial(); s != 1 {
		t.Fatalf("serial %d at start, want 1", s)
	}
	// The config now names other TLS files: restart-only, logged.
	writeConfig(t, cfg, fmt.Sprintf(body, certB, keyB))
	waitFor(t, "the reload", func() bool { return strings.Contains(e.stderr.String(), "take effect only at restart") })
	if s := serial(); s != 1 {
		t.Fatalf("serial %d after the reload, want 1 (the paths in force are the start's)", s)
	}
	// The certificate in force is renewed where it is read from.
	cp, kp = ca.Leaf(t, 3, time.Now().Add(time.Hour))
	testpki.WritePair(t, dirA, 2, cp, kp)
	deadline := time.Now().Add(2 * time.Second) // 40 watch ticks
	for serial() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate in force (serial 3) is not served 2 s after its files changed (watch_interval 50ms); still serial %d", serial())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCheckConfigProxyFromZone: server.proxy_protocol_from is
// validated with net/netip, which takes an address with an IPv6 zone
// ("fe80::1%eth0", a link-local balancer); the listener hands the list to
// go-proxyproto, which parses with net.ParseIP and refuses it. So
// --check-config says valid, and the start with the same file fails
// (exit 1): what the check exists to prevent.
func TestCheckConfigProxyFromZone(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"server": {"proxy_protocol": true, "proxy_protocol_from": ["fe80::1%eth0"]}}`)
	var out, errb bytes.Buffer
	check := run([]string{"--check-config", cfg, "--demo"}, &out, &errb, nil)
	checkMsg := strings.TrimSpace(out.String() + errb.String())
	out.Reset()
	errb.Reset()
	h := &hooks{signals: make(chan os.Signal, 1), getenv: func(string) string { return "" }}
	h.signals <- os.Interrupt // stop at once if it does start
	start := run([]string{"--config", cfg, "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "off"}, &out, &errb, h)
	if (check == 0) != (start == 0) {
		t.Errorf("--check-config exit %d (%q), start exit %d (%q)", check, checkMsg, start, lastLine(errb.String()))
	}
}

// TestCertificateRenewedWhileConfigRejected: the TLS files' paths
// are fixed at start and their contents are re-read on every reload and
// when they change (configs/README.md, tls). But reload returns on a
// rejected config before it re-reads them, so while the config file is
// rejected (a bad ConfigMap pushed, a *_file Secret not there yet), a
// renewed certificate is neither installed by the watch nor by SIGHUP:
// the edge keeps serving the old one, up to its expiry. The two have
// nothing to do with each other: the paths in force are the start's.
func TestCertificateRenewedWhileConfigRejected(t *testing.T) {
	ca := testpki.NewCA(t)
	dir := t.TempDir()
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	certFile, keyFile := testpki.WritePair(t, dir, 1, cp, kp)
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(`{"watch_interval": "50ms", "tls": {"cert_file": %q, "key_file": %q}}`, certFile, keyFile))
	e := startEdge(t, "--demo", "--config", cfg)
	serial := func() int64 { return servedSerial(t, e.app.addr, ca.Pool) }
	if s := serial(); s != 1 {
		t.Fatalf("serial %d at start, want 1", s)
	}
	// A config the edge rejects (a typo), then the certificate renewed.
	writeConfig(t, cfg, fmt.Sprintf(`{"watch_interval": "50ms", "tls": {"cert_file": %q, "key_file": %q}, "cache": {"ttl": "1s"}}`, certFile, keyFile))
	waitFor(t, "the rejected reload", func() bool { return strings.Contains(e.stderr.String(), "config reload rejected") })
	cp, kp = ca.Leaf(t, 2, time.Now().Add(time.Hour))
	testpki.WritePair(t, dir, 2, cp, kp)
	e.signals <- syscall.SIGHUP // and an explicit reload, too
	deadline := time.Now().Add(2 * time.Second)
	for serial() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate (serial 2) is not served 2 s after its files changed and a SIGHUP, while the config file is rejected; still serial %d", serial())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// servedSerial is the serial number of the certificate the edge at addr
// serves in a new handshake.
func servedSerial(t *testing.T, addr string, roots *x509.CertPool) int64 {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}
