package listener

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

func tlsClient(ca *testpki.CA, keepAlive bool, serials *sync.Map) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: !keepAlive,
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool, VerifyConnection: func(cs tls.ConnectionState) error {
			if serials != nil {
				serials.Store(cs.PeerCertificates[0].SerialNumber.Int64(), true)
			}
			if cs.NegotiatedProtocol != "" && cs.NegotiatedProtocol != "http/1.1" {
				return fmt.Errorf("ALPN %q", cs.NegotiatedProtocol)
			}
			return nil
		}},
		ForceAttemptHTTP2: true, // offers h2: the server must still pick http/1.1
	}}
}

func TestTLSSettings(t *testing.T) {
	ca := testpki.NewCA(t)
	dir := t.TempDir()
	cp, kp := ca.Leaf(t, 10, time.Now().Add(time.Hour))
	cf, kf := testpki.WritePair(t, dir, 1, cp, kp)
	cert, err := LoadCertificate(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serve(t, Options{TLS: ServerConfig(cert)})
	for _, tc := range []struct {
		name    string
		cfg     *tls.Config
		wantErr bool
		wantVer uint16
	}{
		{"tls1.3", &tls.Config{}, false, tls.VersionTLS13},
		{"tls1.2", &tls.Config{MaxVersion: tls.VersionTLS12}, false, tls.VersionTLS12},
		{"tls1.1 refused", &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, true, 0},
		{"tls1.2 CBC only refused", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}, true, 0},
		{"h2 and http/1.1 offered: http/1.1", &tls.Config{NextProtos: []string{"h2", "http/1.1"}}, false, tls.VersionTLS13},
		{"h2 only offered: refused", &tls.Config{NextProtos: []string{"h2"}}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg.Clone()
			cfg.RootCAs = ca.Pool
			c, err := tls.Dial("tcp", addr, cfg)
			if tc.wantErr {
				if err == nil {
					c.Close()
					t.Fatal("handshake succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			cs := c.ConnectionState()
			if cs.Version != tc.wantVer {
				t.Fatalf("version %x, want %x", cs.Version, tc.wantVer)
			}
			if len(cfg.NextProtos) > 0 && cs.NegotiatedProtocol != "http/1.1" {
				t.Fatalf("ALPN %q", cs.NegotiatedProtocol)
			}
		})
	}
}

func TestCertificateReloadErrorsKeepTheOldPair(t *testing.T) {
	ca := testpki.NewCA(t)
	dir := t.TempDir()
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	cf, kf := testpki.WritePair(t, dir, 1, cp, kp)
	cert, err := LoadCertificate(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey := ca.Leaf(t, 2, time.Now().Add(time.Hour))
	expired, expiredKey := ca.Leaf(t, 3, time.Now().Add(-time.Minute))
	for _, tc := range []struct {
		name      string
		cert, key []byte
	}{
		{"key of another certificate", cp, otherKey},
		{"expired", expired, expiredKey},
		{"not PEM", []byte("hello"), kp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testpki.WritePair(t, dir, 2, tc.cert, tc.key)
			if changed, err := cert.Reload(); err == nil || changed {
				t.Fatalf("Reload: %v %v, want an error", changed, err)
			}
			if got := cert.cur.Load().Leaf.SerialNumber.Int64(); got != 1 {
				t.Fatalf("serial %d in force, want 1", got)
			}
		})
	}
	if _, err := LoadCertificate(filepath.Join(dir, "missing"), kf); err == nil {
		t.Fatal("missing file accepted")
	}
}

// TestCertificateRotationUnderLoad rotates the certificate five times,
// Kubernetes-style (a ..data symlink swap), reloading after each, while
// clients send requests over new and kept-alive connections: no request
// fails, and new handshakes present the new certificate.
func TestCertificateRotationUnderLoad(t *testing.T) {
	ca := testpki.NewCA(t)
	dir := t.TempDir()
	cp, kp := ca.Leaf(t, 100, time.Now().Add(time.Hour))
	cf, kf := testpki.WritePair(t, dir, 0, cp, kp)
	cert, err := LoadCertificate(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	var reloads atomic.Int64
	addr, _ := serve(t, Options{TLS: ServerConfig(cert)})
	url := "https://" + addr + "/"

	var serials sync.Map
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := tlsClient(ca, i%2 == 0, &serials)
			for {
				select {
				case <-done:
					return
				default:
				}
				resp, err := c.Get(url)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	for gen := 1; gen <= 5; gen++ {
		time.Sleep(150 * time.Millisecond)
		cp, kp := ca.Leaf(t, int64(100+gen), time.Now().Add(time.Hour))
		testpki.WritePair(t, dir, int64(gen), cp, kp)
		changed, err := cert.Reload()
		if err != nil || !changed {
			t.Fatalf("generation %d: Reload %v %v", gen, changed, err)
		}
		reloads.Add(1)
		if _, err := cert.Reload(); err != nil {
			t.Fatalf("generation %d: second Reload: %v", gen, err)
		}
		if got := cert.cur.Load().Leaf.SerialNumber.Int64(); got != int64(100+gen) {
			t.Fatalf("serial %d in force, want %d", got, 100+gen)
		}
	}
	time.Sleep(150 * time.Millisecond)
	close(done)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed during rotation; first: %v", n, n+ok.Load(), firstErr.Load())
	}
	if reloads.Load() != 5 {
		t.Errorf("%d reloads, want 5", reloads.Load())
	}
	for s := int64(100); s <= 105; s++ {
		if _, seen := serials.Load(s); !seen {
			t.Errorf("certificate %d never presented", s)
		}
	}
	t.Logf("%d requests, 0 failed, over 6 certificates", ok.Load())
}
