package chart

// Review (second pass, deploy area): value combinations that render
// without complaint and give pods that cannot start, or objects the API
// server refuses.

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// The chart always sets admin_token_file and auth.key_hash_secret_file (its
// Secret's files) and, with a Redis password, redis.password_file. The edge
// takes a value or its _file, never both (configs/README.md: "Set
// admin_token or this, not both (a config error)"), so config.admin_token,
// config.auth.key_hash_secret or config.redis.password (next to
// secrets.redisPassword) render a ConfigMap every pod refuses at start
// (CrashLoopBackOff on install; on upgrade the rollout stalls). A
// config.*_file pointing elsewhere names a file the pod does not mount.
// Each must fail to render (as config.listen does), or render a config
// that passes --check-config with the Secret's keys.
func TestConfigSecretOverridesRenderStartablePods(t *testing.T) {
	edge := edgeBinary(t)
	for _, args := range [][]string{
		{"--set", "config.admin_token=inline-admin-token-0123456789"},
		{"--set", "config.auth.key_hash_secret=inline-key-hash-secret-0123456789"},
		{"--set", "secrets.redisPassword=pw-0123456789", "--set", "config.redis.password=pw-0123456789"},
		{"--set", "config.admin_token_file=/run/secrets/admin_token"},
	} {
		if _, err := helmTemplate(t, args...); err != nil {
			continue // refused at render: fine
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			checkDeployment(t, render(t, args...), edge)
		})
	}
}

// With secrets.existingSecret the chart renders no Secret, so
// secrets.redisPassword / sentinelPassword (and adminToken, keyHashSecret)
// reach no object, yet a redisPassword still makes the config name
// <secrets>/redis_password: the value the operator set is dropped without
// a word, and with an existing Secret that has no redis_password key
// (values.yaml: "optionally redis_password") every pod refuses to start.
// The chart must refuse secrets.* values next to existingSecret, or use them.
func TestExistingSecretDoesNotDropSecretValues(t *testing.T) {
	for _, set := range []string{
		"secrets.redisPassword=redis-pw-0123456789",
		"secrets.adminToken=admin-token-0123456789",
	} {
		out, err := helmTemplate(t, "--set", "secrets.existingSecret=mine", "--set", set)
		if err != nil {
			continue // refused: fine
		}
		val := set[strings.IndexByte(set, '=')+1:]
		if !strings.Contains(out, val) {
			t.Errorf("--set secrets.existingSecret=mine --set %s rendered, and the value is in no rendered object (silently dropped)", set)
		}
	}
}

// An image pinned by digest (image.tag "1.2.0@sha256:...", the only way
// this chart's "repository:tag" takes one; production policy engines
// often require digests) renders app.kubernetes.io/version with '@' and
// ':' and 70+ characters: not a valid label value, so the API server
// refuses the Deployment, Services, PDB... on install.
func TestImageDigestRendersValidLabels(t *testing.T) {
	digest := "1.2.0@sha256:" + strings.Repeat("ab", 32)
	out, err := helmTemplate(t, "--set", "image.tag="+digest)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	bad := map[string]bool{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj == nil {
			continue
		}
		walkLabels(obj, func(k, v string) {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				bad[k+"="+v+": "+errs[0]] = true
			}
		})
	}
	for b := range bad {
		t.Errorf("invalid label value (the API server refuses the object): %s", b)
	}
}

// walkLabels calls f for every metadata.labels entry (at any depth: the pod
// template's too).
func walkLabels(v any, f func(k, v string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "labels" {
				if m, ok := c.(map[string]any); ok {
					for lk, lv := range m {
						if s, ok := lv.(string); ok {
							f(lk, s)
						}
					}
					continue
				}
			}
			walkLabels(c, f)
		}
	case []any:
		for _, c := range x {
			walkLabels(c, f)
		}
	}
}

// values.yaml: "godebug ... Empty: no GODEBUG." and the README ("Runtime
// settings"): remove the setting with `godebug: ""`. But the image the
// chart runs sets it itself (Dockerfile: ENV GODEBUG=schedtrace=...), and a
// container's env only replaces an image ENV it names: with godebug "" the
// chart renders no GODEBUG, so the pod keeps the image's schedtrace (the
// scheduler line stays in the logs the operator removed it for). The chart
// must render GODEBUG whenever the image sets one: "" to clear it.
func TestEmptyGodebugClearsImageGODEBUG(t *testing.T) {
	df, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENV GODEBUG=(\S+)$`).FindSubmatch(df)
	if m == nil {
		t.Skip("the image sets no GODEBUG")
	}
	r := render(t, "--set", "godebug=")
	for _, e := range r.deploy.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GODEBUG" {
			if e.Value != "" {
				t.Errorf("godebug \"\" rendered GODEBUG=%q", e.Value)
			}
			return
		}
	}
	t.Errorf("godebug \"\" renders no GODEBUG env: the pod runs with the image's GODEBUG=%s (values.yaml promises no GODEBUG)", m[1])
}
