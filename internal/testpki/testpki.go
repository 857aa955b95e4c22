// Package testpki makes certificates and Kubernetes-style Secret volumes for
// tests: a throw-away CA, server certificates for 127.0.0.1 signed by it,
// and a directory whose files are links through "..data", swapped with one
// rename as the kubelet does. It is test support: nothing in the edge's
// binary imports it.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA signs leaf certificates; Pool trusts it, for clients.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	Pool *x509.CertPool
}

// NewCA returns a CA valid from an hour ago to an hour from now.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, Key: key, Pool: pool}
}

// Leaf returns the PEM certificate and key of a server certificate for
// 127.0.0.1 and localhost with the given serial number, valid until notAfter.
func (ca *CA) Leaf(t testing.TB, serial int64, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "edge"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// WritePair writes a pair as a Kubernetes Secret volume does: dir/tls.crt
// and dir/tls.key are links through "..data", itself a link to the
// generation's directory, swapped with one rename. It returns the two
// paths a config names.
func WritePair(t testing.TB, dir string, gen int64, certPEM, keyPEM []byte) (certFile, keyFile string) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	d := filepath.Join(dir, fmt.Sprintf("..gen%d", gen))
	must(os.MkdirAll(d, 0o700))
	must(os.WriteFile(filepath.Join(d, "tls.crt"), certPEM, 0o600))
	must(os.WriteFile(filepath.Join(d, "tls.key"), keyPEM, 0o600))
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	must(os.Symlink(filepath.Base(d), tmp))
	must(os.Rename(tmp, filepath.Join(dir, "..data")))
	for _, n := range []string{"tls.crt", "tls.key"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			must(os.Symlink(filepath.Join("..data", n), filepath.Join(dir, n)))
		}
	}
	return filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
}
