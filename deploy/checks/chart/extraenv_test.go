package chart

// The OpenTelemetry exporter's headers (an authenticated collector's
// token), timeout, compression and certificate files have no config field:
// only their OTEL_EXPORTER_OTLP_* variables set them (configs/README.md,
// tracing), so a pod the chart makes must take extra environment, with a
// Secret's key as a value. extraEnv reaches the container as given (after
// the chart's GOMEMLIMIT and GODEBUG, which it may not name: memoryMiB and
// godebug set them), and the rendered config passes --check-config under
// the literal values (checkDeployment). Until 2026-11-29 the chart had no
// way to set an environment variable.

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestExtraEnvReachesTheContainer(t *testing.T) {
	values := `config:
  tracing:
    endpoint: http://otel-collector:4318
extraEnv:
  - name: OTEL_EXPORTER_OTLP_COMPRESSION
    value: gzip
  - name: OTEL_EXPORTER_OTLP_HEADERS
    valueFrom:
      secretKeyRef:
        name: otel-collector-auth
        key: headers
`
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execHelm(t, "lint", "--strict", chartDir, "-f", f, "--kube-version", "1.31.0").CombinedOutput(); err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
	r := render(t, "-f", f)
	env := map[string]corev1.EnvVar{}
	for _, e := range r.deploy.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	if env["OTEL_EXPORTER_OTLP_COMPRESSION"].Value != "gzip" {
		t.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION not rendered as gzip: %+v", env["OTEL_EXPORTER_OTLP_COMPRESSION"])
	}
	if h := env["OTEL_EXPORTER_OTLP_HEADERS"].ValueFrom; h == nil || h.SecretKeyRef == nil || h.SecretKeyRef.Name != "otel-collector-auth" || h.SecretKeyRef.Key != "headers" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not rendered from the Secret: %+v", env["OTEL_EXPORTER_OTLP_HEADERS"])
	}
	if _, ok := env["GOMEMLIMIT"]; !ok {
		t.Error("the chart's GOMEMLIMIT is gone")
	}
	checkDeployment(t, r, edgeBinary(t))

	// A literal value the edge refuses fails checkDeployment's
	// --check-config: the check runs under the container's environment.
	bad := render(t, "-f", f, "--set", "extraEnv[0].value=zstd")
	if out, err := checkConfigUnderEnv(t, bad, edgeBinary(t)); err == nil {
		t.Errorf("--check-config passed with OTEL_EXPORTER_OTLP_COMPRESSION=zstd in the container's environment:\n%s", out)
	}

	for _, name := range []string{"GOMEMLIMIT", "GODEBUG"} {
		wantRenderFailure(t, []string{"--set", "extraEnv[0].name=" + name, "--set", "extraEnv[0].value=x"}, "extraEnv", name)
	}
}
