package tracing

import (
	"context"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestExporterRedirects: a collector URL that answers with a redirect.
//   - 302 (and 301, 303) make Go's client re-send the export as a GET
//     without its body; an answer of 200 to that GET (a web page, a health
//     endpoint) was taken for a delivered batch: the spans were lost and
//     counted nowhere. Now a redirect that does not keep the POST and its
//     body is not followed: the export fails, export_failed.
//   - a 307 or 308 to another host sent the batch there with the
//     exporter's OTEL_EXPORTER_OTLP_HEADERS (Go's client drops only
//     Authorization and cookies across hosts: an "api-key" header, how
//     several vendors take their token, went along). Now only a 307/308 to
//     the same host is followed (an http to https upgrade, a moved path).
func TestExporterRedirects(t *testing.T) {
	var mu sync.Mutex
	var seen []string // what the redirect targets received: method, and the token header
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" api-key="+r.Header.Get("Api-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK) // any 200, as a web page would
	}))
	t.Cleanup(target.Close)
	// The same server under another host name: "localhost" for 127.0.0.1.
	otherHost := strings.Replace(target.URL, "127.0.0.1", "localhost", 1)
	rcv := startReceiver(t)

	for _, c := range []struct {
		name     string
		status   int
		location string
		ok       bool // the export succeeds
	}{
		{"302 to a page answering GET", http.StatusFound, target.URL + "/login", false},
		{"301", http.StatusMovedPermanently, target.URL + "/v1/traces", false},
		{"303", http.StatusSeeOther, target.URL + "/v1/traces", false},
		{"307 to another host", http.StatusTemporaryRedirect, otherHost + "/v1/traces", false},
		{"308 to another host", http.StatusPermanentRedirect, otherHost + "/v1/traces", false},
		// Same host (127.0.0.1), another port: the receiver decodes it.
		{"307 to the same host", http.StatusTemporaryRedirect, rcv.srv.URL + "/v1/traces", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, c.location, c.status)
			}))
			t.Cleanup(redirector.Close)
			e, err := newExporter(redirector.URL+"/v1/traces", ExportConfig{Headers: map[string]string{"api-key": "s3cret"}})
			if err != nil {
				t.Fatal(err)
			}
			e.drops = &drops{limit: 100}
			spans := recorded(t)
			before := len(rcv.requests())
			err = e.ExportSpans(context.Background(), spans)
			mu.Lock()
			got := strings.Join(seen, "; ")
			mu.Unlock()
			if got != "" {
				t.Errorf("the redirect target received %q, want nothing", got)
			}
			if (err == nil) != c.ok {
				t.Fatalf("export error %v, want success %v", err, c.ok)
			}
			if f := e.drops.failed.Load(); c.ok != (f == 0) {
				t.Errorf("export_failed %d", f)
			}
			if c.ok && len(rcv.requests()) != before+1 {
				t.Errorf("the receiver decoded %d exports, want 1", len(rcv.requests())-before)
			}
		})
	}
}

func (r *receiver) requests() []*coltracepb.ExportTraceServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), r.reqs...)
}

// TestExporterRedirectNotDowngraded: a 307/308 from an https collector URL
// to plain http on the same host name was followed, and the batch went in
// clear with the exporter's OTEL_EXPORTER_OTLP_HEADERS (an api-key) that
// the operator had sent only over TLS. Now a redirect from https to http
// is not followed: the export fails, export_failed.
func TestExporterRedirectNotDowngraded(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" api-key="+r.Header.Get("Api-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/v1/traces", status) // http://127.0.0.1: the same host name
		}))
		t.Cleanup(redirector.Close)
		e, err := newExporter(redirector.URL+"/v1/traces", ExportConfig{Headers: map[string]string{"api-key": "s3cret"}})
		if err != nil {
			t.Fatal(err)
		}
		// Trust the test server's certificate.
		e.client.Transport.(*http.Transport).TLSClientConfig = redirector.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		e.drops = &drops{limit: 100}
		err = e.ExportSpans(context.Background(), recorded(t))
		mu.Lock()
		got := strings.Join(seen, "; ")
		seen = nil
		mu.Unlock()
		if got != "" {
			t.Errorf("%d https -> http: the plain-http target received %q, want nothing", status, got)
		}
		if err == nil || e.drops.failed.Load() == 0 {
			t.Errorf("%d https -> http: export error %v, export_failed %d; want a failed export", status, err, e.drops.failed.Load())
		}
	}
}
