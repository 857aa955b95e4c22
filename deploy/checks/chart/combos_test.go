package chart

// The chart's documented value combinations (values.yaml, README
// "Kubernetes"), beyond the default and the production values: each passes
// helm lint --strict, renders objects that decode strictly into their
// k8s.io/api types, and keeps the Deployment's invariants (checkDeployment:
// probes on the admin port, grace period, security context, resources,
// GOMEMLIMIT, the config through dealer-edge --check-config). The objects
// that name one another agree: the HPA scales the Deployment, the
// ServiceMonitor selects the admin Service by its labels and port name and
// reads its bearer token from the Secret the pod mounts.

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor
// (prometheus-operator) that the chart renders; strict decoding into it
// fails on a field the chart renders that is not there.
type serviceMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			Authorization *struct {
				Type        string                    `json:"type,omitempty"`
				Credentials *corev1.SecretKeySelector `json:"credentials"`
			} `json:"authorization,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func TestDocumentedValueCombinations(t *testing.T) {
	edge := edgeBinary(t)
	for name, values := range map[string]string{
		"HPA off":                                  "hpa:\n  enabled: false\nreplicaCount: 2\n",
		"Redis Cluster":                            "redis:\n  mode: cluster\n  addrs: [redis-0:6379, redis-1:6379, redis-2:6379]\n",
		"Sentinel with passwords":                  "redis:\n  mode: sentinel\n  addrs: [s-0:26379, s-1:26379]\n  masterName: edge\n  passwordInSecret: true\n  sentinelPasswordInSecret: true\nsecrets:\n  redisPassword: redis-pw-0123456789\n  sentinelPassword: sentinel-pw-0123456789\n",
		"monitoring":                               "serviceMonitor:\n  enabled: true\nnetworkPolicy:\n  enabled: true\n",
		"monitoring with an existing Secret":       "serviceMonitor:\n  enabled: true\nsecrets:\n  existingSecret: edge-secrets\n",
		"large L1 and resources":                   "memoryMiB: 1300\nresources:\n  requests:\n    cpu: \"1\"\n  limits:\n    cpu: \"4\"\nconfig:\n  cache:\n    l1_max_bytes: 1073741824\n",
		"LoadBalancer no GODEBUG PDB minAvailable": "service:\n  type: LoadBalancer\ngodebug: \"\"\npdb:\n  minAvailable: 2\n",
		"TLS": "secrets:\n  existingSecret: edge-secrets\nconfig:\n  tls:\n    cert_file: /etc/dealer-edge/secrets/tls.crt\n    key_file: /etc/dealer-edge/secrets/tls.key\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "values.yaml") // helm -f splits at commas: none in the test names
			if err := os.WriteFile(f, []byte(values), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := execHelm(t, "lint", "--strict", chartDir, "-f", f, "--kube-version", "1.31.0").CombinedOutput(); err != nil {
				t.Errorf("helm lint --strict: %v\n%s", err, out)
			}
			r := render(t, "-f", f)
			checkDeployment(t, r, edge)
			checkReferences(t, r)
		})
	}
}

// checkReferences checks that the objects naming one another agree.
func checkReferences(t *testing.T, r rendered) {
	t.Helper()
	d := r.deploy
	if r.hpa != nil {
		if ref := r.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != d.Name {
			t.Errorf("HPA scales %s %s, not the Deployment %s", ref.Kind, ref.Name, d.Name)
		}
		if d.Spec.Replicas != nil {
			t.Errorf("Deployment sets replicas %d beside the HPA (every upgrade resets the scale)", *d.Spec.Replicas)
		}
	} else if d.Spec.Replicas == nil {
		t.Error("no HPA and no replicas on the Deployment")
	}
	podLabels := labels.Set(d.Spec.Template.Labels)
	for _, s := range r.services {
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			t.Errorf("Service %s selects %v, not the pods (%v)", s.Name, s.Spec.Selector, podLabels)
		}
	}
	m := r.monitor
	if m == nil {
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(&m.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	var admin *corev1.Service
	for _, s := range r.services {
		if sel.Matches(labels.Set(s.Labels)) {
			if admin != nil {
				t.Errorf("ServiceMonitor selects Services %s and %s", admin.Name, s.Name)
			}
			admin = s
		}
	}
	if admin == nil {
		t.Fatalf("ServiceMonitor selector %v matches no Service", m.Spec.Selector)
	}
	adminPort := ""
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == "admin" {
			adminPort = p.Name
		}
	}
	if len(m.Spec.Endpoints) == 0 {
		t.Fatal("ServiceMonitor has no endpoint")
	}
	secretName := ""
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "secrets" && v.Secret != nil {
			secretName = v.Secret.SecretName
		}
	}
	for _, ep := range m.Spec.Endpoints {
		found := false
		for _, p := range admin.Spec.Ports {
			found = found || (p.Name == ep.Port && p.TargetPort.String() == adminPort)
		}
		if !found {
			t.Errorf("ServiceMonitor endpoint port %q is not a port of %s that reaches the container's admin port", ep.Port, admin.Name)
		}
		if ep.Path != "/metrics" {
			t.Errorf("ServiceMonitor scrapes %q, not /metrics", ep.Path)
		}
		if ep.Authorization == nil || ep.Authorization.Credentials == nil {
			t.Error("ServiceMonitor sends no bearer token: the admin listener off loopback answers /metrics 401 without one")
			continue
		}
		c := ep.Authorization.Credentials
		if c.Name != secretName || c.Key != "admin_token" {
			t.Errorf("ServiceMonitor token from Secret %s key %s; the pod's admin token is Secret %s key admin_token", c.Name, c.Key, secretName)
		}
		if r.secret != nil {
			if _, ok := r.secret.StringData[c.Key]; !ok {
				t.Errorf("the chart's Secret has no key %s", c.Key)
			}
		}
	}
}
