package chart

// Chart invariants under value sets other than the default and production
// ones: a value that would break what the chart's objects are built
// around fails to render, with a message naming the value to set instead.
// Each test failed on the chart before the audit of 2026-11-27.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
)

func execHelm(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(helmBinary(t), args...)
}

// helmTemplate runs helm template on the chart; on failure the error
// carries helm's message.
func helmTemplate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := execHelm(t, append([]string{"template", "edge", chartDir, "--kube-version", "1.31.0"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(b), err
}

// wantRenderFailure checks that helm template fails with a message
// containing each of want.
func wantRenderFailure(t *testing.T, args []string, want ...string) {
	t.Helper()
	_, err := helmTemplate(t, args...)
	if err == nil {
		t.Errorf("%v rendered; want a failure naming %q", args, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v: failure %q does not name %q", args, err, w)
		}
	}
}

// config: merges over the chart's own settings, except the fields the
// chart's objects are built around, which fail to render and point at the
// value to set instead: server.shutdown_grace (terminationGracePeriodSeconds
// is computed from shutdownGraceSeconds), listen and admin_listen (the
// containerPorts, probes, Services, ServiceMonitor and NetworkPolicy are
// fixed at 8080 and 9091), redis.addrs and redis.master_name (checked
// against redis.mode). Other fields merge, and the Deployment's invariants
// (checkDeployment) hold. Until 2026-11-27 the first three rendered and
// broke those invariants (a 60 s grace under a 30 s termination period;
// probes on 9091 while the admin listener moved).
func TestConfigOverridesKeepDeploymentInvariants(t *testing.T) {
	for set, want := range map[string][]string{
		"config.server.shutdown_grace=60s":   {"config.server.shutdown_grace", "shutdownGraceSeconds"},
		"config.admin_listen=0.0.0.0:9092":   {"config.admin_listen", "9091"},
		"config.listen=0.0.0.0:8081":         {"config.listen", "8080"},
		"config.redis.addrs={a:6379,b:6379}": {"config.redis.addrs", "redis.addrs"},
		"config.redis.master_name=m":         {"config.redis.master_name", "redis.masterName"},
	} {
		wantRenderFailure(t, []string{"--set", set}, want...)
	}
	edge := edgeBinary(t)
	r := render(t, "--set", "config.server.concurrency=2400", "--set", "shutdownGraceSeconds=60")
	var cfg struct {
		Server struct {
			Concurrency   int    `json:"concurrency"`
			ShutdownGrace string `json:"shutdown_grace"`
		} `json:"server"`
	}
	configOf(t, r, &cfg)
	if cfg.Server.Concurrency != 2400 || cfg.Server.ShutdownGrace != "60s" {
		t.Errorf("rendered server %+v, want concurrency 2400 (merged) and shutdown_grace 60s (from shutdownGraceSeconds)", cfg.Server)
	}
	checkDeployment(t, r, edge)
}

// redis.mode=cluster takes at least two seed addresses: the mode is not
// written into the config, and the edge reads one address as a single node
// (configs/README.md, redis.addrs), so one address (a cluster's
// configuration endpoint, a common setup) would run a single-node client
// against a cluster (MOVED on most keys). It fails to render, naming
// redis.addrs. Until 2026-11-27 the chart checked "at least one".
func TestRedisClusterModeNeedsTwoSeeds(t *testing.T) {
	wantRenderFailure(t, []string{"--set", "redis.mode=cluster", "--set", "redis.addrs={redis-cluster:6379}"}, "redis.mode cluster", "redis.addrs")
	r := render(t, "--set", "redis.mode=cluster", "--set", "redis.addrs={redis-0:6379,redis-1:6379}")
	var cfg struct {
		Redis struct {
			Addrs []string `json:"addrs"`
		} `json:"redis"`
	}
	configOf(t, r, &cfg)
	if len(cfg.Redis.Addrs) != 2 {
		t.Errorf("redis.mode=cluster with two seeds rendered redis.addrs %v", cfg.Redis.Addrs)
	}
}

// The PodDisruptionBudget always leaves room for a voluntary eviction:
// maxUnavailable 1 by default, whatever the replica count; a pdb.minAvailable
// the values set replaces it, and fails to render when it is not below the
// minimum replica count (hpa.minReplicas, or replicaCount without the HPA).
// Until 2026-11-27 it was minAvailable 2 whatever the replicas: with the
// HPA off and 1 or 2 replicas, or hpa.minReplicas 2, no pod could ever be
// evicted, so `kubectl drain` and node upgrades hung on the edge's pods.
func TestPDBLeavesRoomForDisruption(t *testing.T) {
	for _, c := range []struct {
		args     []string
		replicas int
	}{
		{nil, 3},
		{[]string{"--set", "hpa.enabled=false", "--set", "replicaCount=1"}, 1},
		{[]string{"--set", "hpa.enabled=false", "--set", "replicaCount=2"}, 2},
		{[]string{"--set", "hpa.minReplicas=2"}, 2},
		{[]string{"--set", "pdb.minAvailable=2"}, 3},
		{[]string{"--set", "hpa.enabled=false", "--set", "replicaCount=5", "--set", "pdb.maxUnavailable=2"}, 5},
	} {
		pdb := renderPDB(t, c.args...)
		switch s := pdb.Spec; {
		case s.MinAvailable != nil && s.MaxUnavailable != nil:
			t.Errorf("%v: PodDisruptionBudget sets both minAvailable and maxUnavailable", c.args)
		case s.MaxUnavailable != nil:
			if s.MaxUnavailable.IntValue() < 1 {
				t.Errorf("%v: PodDisruptionBudget maxUnavailable %s: no voluntary eviction allowed", c.args, s.MaxUnavailable)
			}
		case s.MinAvailable != nil:
			if s.MinAvailable.IntValue() >= c.replicas {
				t.Errorf("%v: PodDisruptionBudget minAvailable %s with %d replicas: no voluntary eviction allowed (drains hang)", c.args, s.MinAvailable, c.replicas)
			}
		default:
			t.Errorf("%v: PodDisruptionBudget with neither minAvailable nor maxUnavailable", c.args)
		}
	}
	wantRenderFailure(t, []string{"--set", "pdb.minAvailable=2", "--set", "hpa.minReplicas=2"}, "pdb.minAvailable", "hpa.minReplicas")
	wantRenderFailure(t, []string{"--set", "pdb.minAvailable=1", "--set", "hpa.enabled=false", "--set", "replicaCount=1"}, "pdb.minAvailable", "replicaCount")
}

func renderPDB(t *testing.T, args ...string) *policyv1.PodDisruptionBudget {
	t.Helper()
	render(t, args...) // strict decode of every object
	out, err := helmTemplate(t, append(args, "--show-only", "templates/pdb-hpa.yaml")...)
	if err != nil {
		t.Fatal(err)
	}
	var pdb policyv1.PodDisruptionBudget
	strict(t, []byte(regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1)[1]), &pdb)
	return &pdb
}

// The NetworkPolicy's admin-port rule admits only the namespaces of
// networkPolicy.adminNamespaces; with none (adminNamespaces: []) there is
// no admin rule, so no pod reaches the admin port (metrics, purge, reload,
// pprof), while the public port stays open. Until 2026-11-27 an empty list
// rendered the 9091 rule with `from:` null, which Kubernetes reads as "from
// every source": the admin port was opened to the whole cluster.
func TestNetworkPolicyAdminPortOnlyFromAdminNamespaces(t *testing.T) {
	for _, c := range []struct {
		values string
		want   []string // namespaces admitted to 9091; nil: no 9091 rule
	}{
		{"networkPolicy:\n  enabled: true\n  adminNamespaces: []\n", nil},
		{"networkPolicy:\n  enabled: true\n  adminNamespaces: [monitoring, ops]\n", []string{"monitoring", "ops"}},
	} {
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(c.values), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := helmTemplate(t, "-f", f, "--show-only", "templates/optional.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var np networkingv1.NetworkPolicy
		strict(t, []byte(out), &np)
		var public bool
		var admitted []string
		var adminRule bool
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				switch {
				case p.Port == nil:
					t.Errorf("ingress rule without a port:\n%s", out)
				case p.Port.IntValue() == 8080:
					public = len(rule.From) == 0
				case p.Port.IntValue() == 9091:
					adminRule = true
					if len(rule.From) == 0 {
						t.Errorf("admin port rule has no `from` (admits every source):\n%s", out)
					}
					for _, from := range rule.From {
						if from.NamespaceSelector == nil || from.PodSelector != nil || from.IPBlock != nil {
							t.Errorf("admin port rule admits more than namespaces: %+v", from)
							continue
						}
						admitted = append(admitted, from.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
					}
				}
			}
		}
		if !public {
			t.Errorf("%q: the public port is not open to every source:\n%s", c.values, out)
		}
		if adminRule != (c.want != nil) || fmt.Sprint(admitted) != fmt.Sprint(c.want) {
			want := fmt.Sprint("an admin rule from ", c.want)
			if c.want == nil {
				want = "no admin rule"
			}
			t.Errorf("%q: admin rule rendered %v, admitting %v; want %s", c.values, adminRule, admitted, want)
		}
	}
}

// GOMEMLIMIT is goMemLimitPercent of the container's memory less the L1's
// off-heap bulk tier, which the Go runtime does not count (cache.L1Tiers:
// above 256 MiB with l1_hot_bytes 0, 16 MiB hot and the rest bulk;
// l1_hot_bytes positive, that much hot unless the bulk would be under
// 32 MiB; negative, one tier). So the heap limit plus the bulk tier fits in
// the container, and the chart fails to render (naming memoryMiB and the
// value that fits) when the limit would be below the one the edge derives
// itself (cache.MemoryLimitFor: hot + hot/8 + bulk/32 + the frequency
// sketch with a bulk tier + 160 MiB), which the
// environment's GOMEMLIMIT replaces. Until 2026-11-27 it was 80% of the
// whole memory: with values.yaml's own example (1 GiB L1, 1,300 MiB) the
// heap could grow to 1,040 MiB next to 1,008 MiB off-heap, far above the
// container limit, so the soft limit never acted before the OOM killer.
func TestGoMemLimitLeavesRoomForBulkTier(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		l1, hot       int64
		memoryMiB     int
		wantGoMemMiB  int64
		wantBulkBytes int64
	}{
		{64 * mi, 0, 320, 256, 0},                            // defaults: one tier
		{256 * mi, 0, 600, 480, 0},                           // automatic split starts above 256 MiB
		{288 * mi, 0, 600, 262, 272 * mi},                    // 16 MiB hot, 272 bulk: (600-272) x 0.8
		{1 << 30, 0, 1300, 233, 1008 * mi},                   // values.yaml's example
		{1 << 30, 0, 1291, 226, 1008 * mi},                   // the least memoryMiB that fits it
		{1 << 30, -1, 1800, 1440, 0},                         // one tier at any size
		{512 * mi, 128 * mi, 900, 412, 384 * mi},             // hot share given
		{160 * mi, 144 * mi, 480, 384, 0},                    // a bulk under 32 MiB is not made
		{1<<30 + 512*1024, 0, 1400, 312, 1008*mi + 512*1024}, // bulk not a whole MiB: rounded up
	} {
		name := fmt.Sprintf("l1 %d hot %d memoryMiB %d", c.l1, c.hot, c.memoryMiB)
		t.Run(name, func(t *testing.T) {
			if _, bulk := l1Tiers(c.l1, c.hot); bulk != c.wantBulkBytes {
				t.Fatalf("test case: l1Tiers bulk %d, want %d", bulk, c.wantBulkBytes)
			}
			r := render(t, "--set", fmt.Sprintf("config.cache.l1_max_bytes=%d", c.l1), "--set", fmt.Sprintf("config.cache.l1_hot_bytes=%d", c.hot),
				"--set", fmt.Sprintf("memoryMiB=%d", c.memoryMiB))
			if got := goMemLimitMiB(t, r); got != c.wantGoMemMiB {
				t.Errorf("GOMEMLIMIT %d MiB, want %d", got, c.wantGoMemMiB)
			}
			checkGoMemLimit(t, r)
		})
	}
	// The same from a values file (numbers decode as floats there).
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, []byte("memoryMiB: 1300\nconfig:\n  cache:\n    l1_max_bytes: 1073741824\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := goMemLimitMiB(t, render(t, "-f", f)); got != 233 {
		t.Errorf("values file: GOMEMLIMIT %d MiB, want 233", got)
	}
	for _, args := range [][]string{
		{"--set", "config.cache.l1_max_bytes=1073741824"},                            // 320 MiB: not even the bulk tier
		{"--set", "config.cache.l1_max_bytes=1073741824", "--set", "memoryMiB=1290"}, // one MiB short
		{"--set", "memoryMiB=289"},                                                   // default L1: 232 MiB / 0.8 = 290
		{"--set", "goMemLimitPercent=50"},                                            // 160 MiB under 232
		{"--set", "config.cache.l1_max_bytes=1073741824", "--set", "config.cache.l1_hot_bytes=-1", "--set", "memoryMiB=1300"},
	} {
		wantRenderFailure(t, args, "memoryMiB", "set memoryMiB to at least")
	}
	// The value the message names renders.
	_, err := helmTemplate(t, "--set", "config.cache.l1_max_bytes=1073741824", "--set", "memoryMiB=1000")
	m := regexp.MustCompile(`set memoryMiB to at least (\d+)`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil || m[1] != "1291" {
		t.Fatalf("failure %v does not name memoryMiB 1291", err)
	}
	render(t, "--set", "config.cache.l1_max_bytes=1073741824", "--set", "memoryMiB="+m[1])
}

// l1Tiers is cache.L1Tiers (the main module's, which this module does not
// import): the hot (Go heap) and bulk (off-heap) shares of the L1.
func l1Tiers(l1MaxBytes, l1HotBytes int64) (hot, bulk int64) {
	switch {
	case l1MaxBytes <= 0 || l1HotBytes < 0:
		return l1MaxBytes, 0
	case l1HotBytes == 0 && l1MaxBytes <= 256<<20:
		return l1MaxBytes, 0
	case l1HotBytes == 0:
		l1HotBytes = 16 << 20
	}
	if l1MaxBytes-l1HotBytes < 32<<20 {
		return l1MaxBytes, 0
	}
	return l1HotBytes, l1MaxBytes - l1HotBytes
}

// memoryLimitFor is cache.MemoryLimitFor: the soft memory limit the edge
// sets itself when the environment has no GOMEMLIMIT.
func memoryLimitFor(l1MaxBytes, l1HotBytes int64) int64 {
	hot, bulk := l1Tiers(l1MaxBytes, l1HotBytes)
	lim := hot + hot/8 + bulk/32 + 160<<20
	if bulk > 0 { // cache.SketchBytes
		w := int64(1)
		for w < max(l1MaxBytes/256*4, 4096) {
			w *= 2
		}
		lim += w
	}
	return lim
}

func goMemLimitMiB(t *testing.T, r rendered) int64 {
	t.Helper()
	for _, e := range r.deploy.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GOMEMLIMIT" {
			var mib int64
			if _, err := fmt.Sscanf(e.Value, "%dMiB", &mib); err != nil {
				t.Fatalf("GOMEMLIMIT %q: %v", e.Value, err)
			}
			return mib
		}
	}
	t.Fatal("no GOMEMLIMIT")
	return 0
}

// checkGoMemLimit checks the rendered GOMEMLIMIT against the rendered L1:
// the heap limit plus the bulk tier fit in the container's memory limit,
// and the heap limit is at least what the edge would set itself.
func checkGoMemLimit(t *testing.T, r rendered) {
	t.Helper()
	var cfg struct {
		Cache struct {
			L1MaxBytes *int64 `json:"l1_max_bytes"`
			L1HotBytes int64  `json:"l1_hot_bytes"`
		} `json:"cache"`
	}
	configOf(t, r, &cfg)
	l1 := int64(64 << 20) // configs default
	if cfg.Cache.L1MaxBytes != nil {
		l1 = *cfg.Cache.L1MaxBytes
	}
	_, bulk := l1Tiers(l1, cfg.Cache.L1HotBytes)
	goMem := goMemLimitMiB(t, r) << 20
	lim := r.deploy.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Value()
	if goMem+bulk > lim {
		t.Errorf("GOMEMLIMIT %d MiB + off-heap bulk tier %d MiB above the container limit %d MiB", goMem>>20, bulk>>20, lim>>20)
	}
	if want := memoryLimitFor(l1, cfg.Cache.L1HotBytes); goMem < want {
		t.Errorf("GOMEMLIMIT %d MiB below the %d MiB the edge derives for its L1 (cache.MemoryLimitFor)", goMem>>20, want>>20)
	}
	if goMem < (lim-bulk)/2 {
		t.Errorf("GOMEMLIMIT %d MiB under half of what the bulk tier leaves of the container limit (%d MiB)", goMem>>20, (lim-bulk)>>20)
	}
}

// secrets.adminToken / secrets.keyHashSecret are empty (a random value) or
// at least the 16 characters the edge requires (README "Production
// checklist"): shorter ones fail to render, through values.schema.json and,
// with schema validation skipped, through the Secret's template. Until
// 2026-11-27 they rendered, and every pod crash-looped on "admin_token:
// must be at least 16 characters" (the chart's --check-config test swaps
// in its own secret contents and could not see it).
func TestShortSecretsRefused(t *testing.T) {
	for _, v := range []string{"adminToken", "keyHashSecret"} {
		set := "secrets." + v + "=short"
		wantRenderFailure(t, []string{"--set", set}, v, "16")
		wantRenderFailure(t, []string{"--set", set, "--skip-schema-validation"}, "secrets."+v, "16")
		if _, err := helmTemplate(t, "--set", "secrets."+v+"=0123456789abcdef"); err != nil {
			t.Errorf("a 16-character %s: %v", v, err)
		}
	}
}

// The container runs with the chart's godebug as GODEBUG (the runtime
// monitor without its deep sleep; README, "Runtime settings"), another value
// replaces it, and an empty one sets an empty GODEBUG (the runtime's
// defaults): with no variable the pod would keep the image's ENV GODEBUG
// (TestEmptyGodebugClearsImageGODEBUG).
func TestGODEBUGFromValues(t *testing.T) {
	godebug := func(r rendered) (string, bool) {
		for _, e := range r.deploy.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GODEBUG" {
				return e.Value, true
			}
		}
		return "", false
	}
	for _, c := range []struct {
		args   []string
		want   string
		wantOK bool
	}{
		{nil, "schedtrace=2147483647", true},
		{[]string{"--set", "godebug=madvdontneed=0"}, "madvdontneed=0", true},
		{[]string{"--set", "godebug="}, "", true},
	} {
		got, ok := godebug(render(t, c.args...))
		if got != c.want || ok != c.wantOK {
			t.Errorf("helm template %v: GODEBUG %q (set: %v), want %q (set: %v)", c.args, got, ok, c.want, c.wantOK)
		}
	}
}
