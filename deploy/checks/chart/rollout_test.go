package chart

// Checks of deployment defects found by an audit (2026-11-27); each failed
// on the chart before its fix.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// A helm upgrade that changes restart-only settings (upstream, Redis, L1
// size, secrets) must roll the pods: the edge re-reads the ConfigMap and
// Secret through its watch, but applies those fields only at start
// (configs.RestartOnly; README "Live config reload", "Secrets from files").
// Without a checksum of the config/secret in the pod template the
// Deployment does not change, so the pods keep the old upstream / Redis /
// token; with a rotated admin token, Prometheus (ServiceMonitor, reading the
// new Secret) gets 401 from every pod.
func TestRestartOnlyChangesRollPods(t *testing.T) {
	base := render(t)
	for _, set := range []string{
		"upstream.baseURL=http://other-gw:9090",
		"redis.addrs={other-redis:6379}",
		"config.cache.l1_max_bytes=33554432",
		"secrets.adminToken=rotated-admin-token-0123456789",
	} {
		r := render(t, "--set", set)
		if reflect.DeepEqual(base.deploy.Spec.Template, r.deploy.Spec.Template) {
			t.Errorf("--set %s: the pod template is unchanged, so no rollout: running pods keep the old value (restart-only field)", set)
		}
	}
}

// The default and production values keep GOMEMLIMIT at or above the limit
// the edge derives for its L1 (values.yaml, memoryMiB; cache.MemoryLimitFor:
// L1 + 1/8 + 160 MiB for one tier, up to 256 MiB); the chart now refuses to
// render otherwise (TestGoMemLimitLeavesRoomForBulkTier covers split
// tiers). Before the audit the default values broke that rule.
func TestGoMemLimitCoversL1(t *testing.T) {
	for name, args := range map[string][]string{
		"default":    nil,
		"production": {"-f", chartDir + "/values-production.yaml"},
	} {
		r := render(t, args...)
		var cfg struct {
			Cache struct {
				L1MaxBytes int64 `json:"l1_max_bytes"`
			} `json:"cache"`
		}
		configOf(t, r, &cfg)
		l1 := cfg.Cache.L1MaxBytes
		if l1 == 0 {
			l1 = 64 << 20 // configs default
		}
		if l1 > 256<<20 {
			continue // split tiers: another formula
		}
		derived := l1 + l1/8 + 160<<20
		var mib int64
		for _, e := range r.deploy.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOMEMLIMIT" {
				fmt.Sscanf(e.Value, "%dMiB", &mib)
			}
		}
		lim := r.deploy.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Value()
		if mib<<20 < derived {
			t.Errorf("%s values: GOMEMLIMIT %d MiB below the limit the edge derives for its L1 (%d MiB = L1 %d MiB + 1/8 + 160 MiB); container limit %d MiB, 1.25 x derived = %d MiB",
				name, mib, derived>>20, l1>>20, lim>>20, derived*5/4>>20)
		}
	}
}

// redis.mode is checked against the Redis values: sentinel without
// masterName, masterName without sentinel and single with several
// addresses fail to render (before, mode was read by no template: sentinel
// without masterName rendered a Cluster config pointed at the Sentinels).
func TestRedisModeIsHonoured(t *testing.T) {
	for _, bad := range [][]string{
		{"--set", "redis.mode=sentinel", "--set", "redis.addrs={s0:26379,s1:26379,s2:26379}"},
		{"--set", "redis.masterName=m"},
		{"--set", "redis.addrs={a:6379,b:6379}"},
	} {
		cmd := exec.Command(helmBinary(t), append([]string{"template", "edge", chartDir, "--kube-version", "1.31.0"}, bad...)...)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "redis.") {
			t.Errorf("%v: rendered (err %v), want a failure naming the redis value:\n%.300s", bad, err, out)
		}
	}
	r := render(t, "--set", "redis.mode=sentinel", "--set", "redis.masterName=mymaster", "--set", "redis.addrs={s0:26379,s1:26379}")
	var cfg struct {
		Redis struct {
			MasterName string `json:"master_name"`
		} `json:"redis"`
	}
	configOf(t, r, &cfg)
	if cfg.Redis.MasterName != "mymaster" {
		t.Errorf("sentinel with masterName rendered master_name %q", cfg.Redis.MasterName)
	}
	render(t, "--set", "redis.mode=cluster", "--set", "redis.addrs={a:6379,b:6379,c:6379}")
}

// The readiness probe waits longer than /readyz's Redis ping (up to 1 s):
// with the default 1 s timeout and failureThreshold 1, a stalled Redis,
// which the edge serves through ("degraded", 200), would mark every pod
// unready at once.
func TestReadinessProbeOutwaitsRedisPing(t *testing.T) {
	r := render(t)
	p := r.deploy.Spec.Template.Spec.Containers[0].ReadinessProbe
	if p == nil || p.TimeoutSeconds < 2 {
		t.Fatalf("readiness probe %+v: timeoutSeconds must exceed the 1 s Redis ping", p)
	}
}

// configOf decodes the edge config the chart rendered into its ConfigMap.
func configOf(t *testing.T, r rendered, cfg any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.configMap.Data["config.json"]), cfg); err != nil {
		t.Fatal(err)
	}
}

// values-production.yaml, the chart's production example, follows the
// README's production checklist ("Connections against memory"): under a
// memory limit set server.concurrency to about (memory limit - L1 -
// 200 MiB) / 24 KB, since the default (what the file-descriptor limit
// allows, up to 262,144; a container's is usually 1,048,576) lets a flood
// of slow clients take far more memory than the pod has before the
// listener's fast 503s start: the kernel's OOM killer answers instead.
// Until 2026-11-29 the production values set none.
func TestProductionValuesBoundConcurrencyByMemory(t *testing.T) {
	r := render(t, "-f", chartDir+"/values-production.yaml")
	var cfg struct {
		Server struct {
			Concurrency int64 `json:"concurrency"`
		} `json:"server"`
		Cache struct {
			L1MaxBytes int64 `json:"l1_max_bytes"`
		} `json:"cache"`
	}
	configOf(t, r, &cfg)
	l1 := cfg.Cache.L1MaxBytes
	if l1 == 0 {
		l1 = 64 << 20
	}
	mem := r.deploy.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Value()
	limit := (mem - l1 - 200<<20) / (24 << 10)
	if cfg.Server.Concurrency <= 0 || cfg.Server.Concurrency > limit {
		t.Errorf("production values: server.concurrency %d; with a %d MiB memory limit and a %d MiB L1 the README's rule gives at most %d", cfg.Server.Concurrency, mem>>20, l1>>20, limit)
	}
}
