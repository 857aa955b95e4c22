package tracing

import (
	"strings"
	"testing"
)

// TestHeadersErrorHidesValues: a malformed OTEL_EXPORTER_OTLP_HEADERS (a
// colon instead of "=", a common slip) is refused by an error that names
// the entry, not its text, which start-up and --check-config print: the
// collector's token never is (it used to be, whole; found by an audit).
func TestHeadersErrorHidesValues(t *testing.T) {
	const secret = "s3cr3t-collector-token-0123"
	env := map[string]string{
		EnvEndpoint: "http://collector:4318",
		EnvHeaders:  "authorization: Bearer " + secret,
	}
	_, err := Config{}.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err == nil {
		t.Fatal("malformed headers accepted")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error prints the header value (secret): %v", err)
	}
}

// TestURLHidesPassword: an endpoint with credentials in its userinfo
// (basic authentication to the collector, which net/http honours) is shown
// by URL(), which cmd/dealer-edge logs at start ("tracing on"), with the
// password redacted; so is a malformed one in Validate's error.
func TestURLHidesPassword(t *testing.T) {
	const secret = "s3cr3t-basic-pass"
	tr, err := New(Config{Endpoint: "http://user:" + secret + "@127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(t.Context())
	if strings.Contains(tr.URL(), secret) || !strings.Contains(tr.URL(), "user:xxxxx@127.0.0.1:1") {
		t.Errorf("URL() (logged at start): %s, want the password redacted", tr.URL())
	}
	err = Config{Endpoint: "ftp://user:" + secret + "@collector"}.Validate()
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Validate of an ftp endpoint with a password: %v", err)
	}
}
