package chart

import (
	"strings"
	"testing"
)

// TestPasswordInSecretWithoutSecretKey: redis.passwordInSecret renders
// redis.password_file = <secrets>/redis_password, but without
// secrets.existingSecret the pods mount the chart's own Secret, which has
// a redis_password key only when secrets.redisPassword is set. With
// passwordInSecret alone the chart renders, and every pod refuses to start
// (the edge fails on a missing *_file): CrashLoopBackOff on install. The
// chart refuses other inconsistent values at render time; this one must
// fail to render too (or the rendered pod must pass --check-config with
// the Secret it mounts, which checkDeployment runs).
func TestPasswordInSecretWithoutSecretKey(t *testing.T) {
	for _, args := range [][]string{
		{"--set", "redis.passwordInSecret=true"},
		{"--set", "redis.mode=sentinel", "--set", "redis.masterName=m", "--set", "redis.addrs={s0:26379,s1:26379}", "--set", "redis.sentinelPasswordInSecret=true"},
	} {
		if _, err := helmTemplate(t, args...); err != nil {
			continue // refused at render: fine
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			checkDeployment(t, render(t, args...), edgeBinary(t))
		})
	}
}

// TestPDBPercentBlockingDrains: a percentage pdb.minAvailable is rounded up by
// Kubernetes (ceil(p x replicas)); the schema admits 0-99% to keep 100%
// out, yet 67% (or anything above 66.7%) of the default 3 replicas is all
// 3: no pod can ever be evicted and `kubectl drain` hangs, the exact case
// the chart refuses for a number ("pdb.minAvailable 3 is not below the
// minimum replica count 3").
func TestPDBPercentBlockingDrains(t *testing.T) {
	wantRenderFailure(t, []string{"--set", "pdb.minAvailable=67%"}, "pdb.minAvailable")
	wantRenderFailure(t, []string{"--set", "hpa.enabled=false", "--set", "replicaCount=1", "--set", "pdb.minAvailable=1%"}, "pdb.minAvailable")
}
