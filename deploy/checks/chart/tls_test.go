package chart

// TLS on the public listener (config.tls.cert_file / key_file, the only
// path fields of the edge's config besides the secrets' *_file): the edge
// reads the pair at start and refuses to start without it (--check-config:
// "tls: tls.cert_file: open ...: no such file or directory"). The pod
// mounts one Secret, at /etc/dealer-edge/secrets, and the chart's own
// Secret holds no certificate, so a pair named anywhere else, or named in
// the mount without secrets.existingSecret (the Secret that can hold
// tls.crt and tls.key), gave pods that crash-looped. Until 2026-11-29 both
// rendered (README: "a *_file outside the mounted Secret" fails to render,
// which the chart checked for the secrets' files only).

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"
)

func TestTLSPairRendersStartablePods(t *testing.T) {
	edge := edgeBinary(t)
	for _, c := range []struct {
		args []string
		want []string // the failure names these; nil: renders startable pods
	}{
		// Outside the one mounted Secret: no such file in the pod.
		{[]string{"--set", "secrets.existingSecret=mine", "--set", "config.tls.cert_file=/etc/tls/tls.crt", "--set", "config.tls.key_file=/etc/tls/tls.key"},
			[]string{"config.tls.cert_file", "/etc/dealer-edge/secrets/"}},
		{[]string{"--set", "secrets.existingSecret=mine", "--set", "config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt", "--set", "config.tls.key_file=/etc/tls/tls.key"},
			[]string{"config.tls.key_file", "/etc/dealer-edge/secrets/"}},
		// In the mount, but the chart's own Secret holds no certificate.
		{[]string{"--set", "config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt", "--set", "config.tls.key_file=/etc/dealer-edge/secrets/tls.key"},
			[]string{"config.tls", "secrets.existingSecret"}},
		// The documented way: the pair in the existing Secret.
		{[]string{"--set", "secrets.existingSecret=mine", "--set", "config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt", "--set", "config.tls.key_file=/etc/dealer-edge/secrets/tls.key"}, nil},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if c.want != nil {
				wantRenderFailure(t, c.args, c.want...)
				return
			}
			checkDeployment(t, render(t, c.args...), edge)
		})
	}
}

// writeTLSPair writes a self-signed ECDSA certificate and its key, valid
// for a day, as PEM files cert and key.
func writeTLSPair(t *testing.T, cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "dealer-edge chart test"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// tlsKeysInSecret are the keys of an existing Secret that holds the
// public listener's pair (README, Kubernetes).
var tlsKeysInSecret = []string{"tls.crt", "tls.key"}
