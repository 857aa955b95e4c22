// Package chart checks the Helm chart deploy/helm/dealer-edge without a
// cluster: every object `helm template` renders is decoded strictly into
// its k8s.io/api type (an unknown or misplaced field fails), and the
// Deployment's invariants hold for the default and the production values.
package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

const chartDir = "../../helm/dealer-edge"

// helmBinary finds helm: GOPATH/bin (where scripts/test.sh installs it) or PATH.
func helmBinary(t *testing.T) string {
	t.Helper()
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "helm")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("helm")
	if err != nil {
		t.Fatal("helm not found (scripts/test.sh installs it: go install helm.sh/helm/v3/cmd/helm@v3.22.0)")
	}
	return p
}

type rendered struct {
	deploy    *appsv1.Deployment
	configMap *corev1.ConfigMap
	secret    *corev1.Secret
	services  []*corev1.Service
	hpa       *autoscalingv2.HorizontalPodAutoscaler
	monitor   *serviceMonitor
	kinds     map[string]int
}

// strict decodes one YAML document into out, failing on unknown fields.
func strict(t *testing.T, doc []byte, out any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, out); err != nil {
		t.Fatalf("strict decode into %T: %v\n%s", out, err, doc)
	}
}

func render(t *testing.T, args ...string) rendered {
	t.Helper()
	cmd := exec.Command(helmBinary(t), append([]string{"template", "edge", chartDir, "--kube-version", "1.31.0"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	r := rendered{kinds: map[string]int{}}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(out), -1) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind == "" {
			continue
		}
		r.kinds[meta.Kind]++
		b := []byte(doc)
		switch meta.APIVersion + "/" + meta.Kind {
		case "apps/v1/Deployment":
			r.deploy = &appsv1.Deployment{}
			strict(t, b, r.deploy)
		case "v1/ConfigMap":
			r.configMap = &corev1.ConfigMap{}
			strict(t, b, r.configMap)
		case "v1/Secret":
			r.secret = &corev1.Secret{}
			strict(t, b, r.secret)
		case "v1/Service":
			s := &corev1.Service{}
			strict(t, b, s)
			r.services = append(r.services, s)
		case "policy/v1/PodDisruptionBudget":
			strict(t, b, &policyv1.PodDisruptionBudget{})
		case "autoscaling/v2/HorizontalPodAutoscaler":
			r.hpa = &autoscalingv2.HorizontalPodAutoscaler{}
			strict(t, b, r.hpa)
		case "networking.k8s.io/v1/NetworkPolicy":
			strict(t, b, &networkingv1.NetworkPolicy{})
		case "monitoring.coreos.com/v1/ServiceMonitor":
			// A CRD: no k8s.io/api type; decoded strictly into the
			// subset of its fields the chart uses (serviceMonitor).
			r.monitor = &serviceMonitor{}
			strict(t, b, r.monitor)
		default:
			t.Errorf("unexpected object %s %s", meta.APIVersion, meta.Kind)
		}
	}
	return r
}

// edgeBinary is dealer-edge for --check-config, built once per test
// binary (edgeproc.Binary; it was built again by each test).
func edgeBinary(t *testing.T) string {
	t.Helper()
	return edgeproc.Binary(t)
}

func TestChartInvariants(t *testing.T) {
	edge := edgeBinary(t)
	cases := []struct {
		name      string
		args      []string
		wantKinds []string
	}{
		{"default values", nil, []string{"Deployment", "ConfigMap", "Secret", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"}},
		{"production values", []string{"-f", chartDir + "/values-production.yaml"}, []string{"Deployment", "ConfigMap", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy", "ServiceMonitor"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := render(t, c.args...)
			for _, k := range c.wantKinds {
				if r.kinds[k] == 0 {
					t.Errorf("no %s rendered", k)
				}
			}
			if len(r.services) != 2 {
				t.Errorf("%d Services, want public and admin", len(r.services))
			}
			checkDeployment(t, r, edge)
		})
	}
}

func checkDeployment(t *testing.T, r rendered, edge string) {
	d := r.deploy
	if d == nil || r.configMap == nil {
		t.Fatal("no Deployment or ConfigMap")
	}
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	ctr := spec.Containers[0]

	// The config the pod runs, as the edge reads it.
	var cfg struct {
		AdminListen string `json:"admin_listen"`
		Server      struct {
			ShutdownGrace string `json:"shutdown_grace"`
		} `json:"server"`
	}
	raw := r.configMap.Data["config.json"]
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	adminPort := cfg.AdminListen[strings.LastIndexByte(cfg.AdminListen, ':')+1:]

	// Probes: /healthz (startup, liveness) and /readyz (readiness) on the admin listener's port.
	ports := map[string]string{}
	for _, p := range ctr.Ports {
		ports[p.Name] = fmt.Sprint(p.ContainerPort)
	}
	for name, pr := range map[string]*corev1.Probe{"startup": ctr.StartupProbe, "liveness": ctr.LivenessProbe, "readiness": ctr.ReadinessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			t.Errorf("%s probe missing or not HTTP", name)
			continue
		}
		want := "/healthz"
		if name == "readiness" {
			want = "/readyz"
		}
		port := pr.HTTPGet.Port.String()
		if v, ok := ports[port]; ok {
			port = v
		}
		if pr.HTTPGet.Path != want || port != adminPort {
			t.Errorf("%s probe %s on port %s, want %s on the admin port %s", name, pr.HTTPGet.Path, port, want, adminPort)
		}
	}

	// Grace period above shutdown grace + preStop.
	grace, err := time.ParseDuration(cfg.Server.ShutdownGrace)
	if err != nil {
		t.Fatalf("server.shutdown_grace %q: %v", cfg.Server.ShutdownGrace, err)
	}
	if ctr.Lifecycle == nil || ctr.Lifecycle.PreStop == nil || ctr.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("no preStop sleep action (the image has no shell for an exec)")
	}
	pre := time.Duration(ctr.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	if spec.TerminationGracePeriodSeconds == nil || time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second <= grace+pre {
		t.Errorf("terminationGracePeriodSeconds %v not above shutdown grace %v + preStop %v", spec.TerminationGracePeriodSeconds, grace, pre)
	}

	// Security context.
	sc, psc := ctr.SecurityContext, spec.SecurityContext
	switch {
	case sc == nil || psc == nil:
		t.Fatal("no security context")
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("runAsNonRoot not set")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem not set")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation not false")
	case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL":
		t.Error("capabilities: drop ALL missing")
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("seccomp RuntimeDefault missing")
	}

	// Resources; GOMEMLIMIT plus the L1's off-heap bulk tier under the
	// memory limit, and not under the limit the edge derives itself.
	lim, req := ctr.Resources.Limits, ctr.Resources.Requests
	if lim.Cpu().IsZero() || lim.Memory().IsZero() || req.Cpu().IsZero() || req.Memory().IsZero() {
		t.Errorf("resources not all set: %+v", ctr.Resources)
	}
	checkGoMemLimit(t, r)

	// Topology spread over zones and nodes.
	keys := map[string]bool{}
	for _, c := range spec.TopologySpreadConstraints {
		keys[c.TopologyKey] = true
	}
	if !keys["topology.kubernetes.io/zone"] || !keys["kubernetes.io/hostname"] {
		t.Errorf("topology spread keys %v", keys)
	}

	// The ConfigMap's config passes --check-config, with the secret
	// files it names (the chart's Secret keys) in a temporary directory,
	// under the container's environment.
	if out, err := checkConfigUnderEnv(t, r, edge); err != nil {
		t.Errorf("dealer-edge --check-config on the rendered ConfigMap: %v\n%s", err, out)
	}
}

// checkConfigUnderEnv runs dealer-edge --check-config on the rendered
// ConfigMap's config, the Secret's keys (the chart's, or those an existing
// Secret holds, a TLS pair included) as files in a temporary directory in
// place of the mount, with the container's literal environment values (a
// valueFrom is left out) over this process's environment less its OTEL_*.
func checkConfigUnderEnv(t *testing.T, r rendered, edge string) ([]byte, error) {
	t.Helper()
	ctr := r.deploy.Spec.Template.Spec.Containers[0]
	raw := r.configMap.Data["config.json"]
	mount := ""
	for _, m := range ctr.VolumeMounts {
		if m.Name == "secrets" {
			mount = m.MountPath
		}
	}
	if mount == "" {
		t.Fatal("no secrets volume mount")
	}
	dir := t.TempDir()
	keysInSecret := []string{"admin_token", "key_hash_secret", "redis_password", "sentinel_password"}
	if r.secret != nil {
		keysInSecret = keysInSecret[:0]
		for k := range r.secret.StringData {
			keysInSecret = append(keysInSecret, k)
		}
	}
	for _, k := range keysInSecret {
		if err := os.WriteFile(filepath.Join(dir, k), []byte("chart-test-"+k+"-0123456789\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if r.secret == nil {
		// An existing Secret may hold the public listener's pair too.
		edgeproc.WriteTLSPair(t, filepath.Join(dir, tlsKeysInSecret[0]), filepath.Join(dir, tlsKeysInSecret[1]), time.Now().Add(24*time.Hour))
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, []byte(strings.ReplaceAll(raw, mount, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(edge, "--check-config", cfgPath)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
	}
	return cmd.CombinedOutput()
}
