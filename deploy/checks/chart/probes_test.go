package chart

// The paths the chart's probes and ServiceMonitor use, taken from the
// rendered objects, asked of the real edge's admin listener with an admin
// token set (the chart always sets admin_token_file): the probes get 200
// without the token (the kubelet sends none: README, "Probes (/healthz,
// /readyz) stay open"), /metrics answers 401 without it and 200 with the
// bearer token the ServiceMonitor sends. A probe path that is not the
// edge's, or one behind the token, would keep every pod unready or
// restart it.

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

func TestProbesAndScrapeAnsweredByTheEdge(t *testing.T) {
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, []byte("serviceMonitor:\n  enabled: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := render(t, "-f", f)
	ctr := r.deploy.Spec.Template.Spec.Containers[0]

	dir := t.TempDir()
	token := "probe-test-admin-token-0123456789"
	tokenFile := filepath.Join(dir, "admin_token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "edge.json")
	if err := os.WriteFile(cfg, []byte(`{"admin_token_file": "`+tokenFile+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := edgeproc.Start(t, "--config", cfg)

	for name, p := range map[string]string{"startup": ctr.StartupProbe.HTTPGet.Path, "liveness": ctr.LivenessProbe.HTTPGet.Path, "readiness": ctr.ReadinessProbe.HTTPGet.Path} {
		if st, _, b := edgeproc.Do(t, http.MethodGet, e.Admin+p); st != http.StatusOK {
			t.Errorf("%s probe GET %s without a token: %d %s", name, p, st, b)
		}
	}
	if r.monitor == nil || len(r.monitor.Spec.Endpoints) == 0 {
		t.Fatal("no ServiceMonitor endpoint rendered")
	}
	path := r.monitor.Spec.Endpoints[0].Path
	if st, _, _ := edgeproc.Do(t, http.MethodGet, e.Admin+path); st != http.StatusUnauthorized {
		t.Errorf("GET %s without the token: %d, want 401", path, st)
	}
	if st, _, b := edgeproc.Do(t, http.MethodGet, e.Admin+path, "Authorization", "Bearer "+token); st != http.StatusOK {
		t.Errorf("GET %s with the ServiceMonitor's bearer token: %d %.200s", path, st, b)
	}
}
