package chart

// Values the chart does not read were dropped without a word: the memory
// of the pod is memoryMiB (GOMEMLIMIT is derived from it), so the
// Kubernetes-standard resources.limits.memory=2Gi rendered a 320 MiB pod
// with a 256 MiB GOMEMLIMIT, and a misspelt key (hpa.enable=false,
// serviceMonitor.enable=true, a top-level replicas) left the default in
// force. Each must fail to render, naming what to set; the documented
// values still render (TestDocumentedValueCombinations). Until 2026-11-29
// every one rendered.

import "testing"

func TestUnreadValuesRefused(t *testing.T) {
	for _, c := range []struct {
		set  string
		want []string
	}{
		{"resources.limits.memory=2Gi", []string{"memoryMiB"}},
		{"resources.requests.memory=1Gi", []string{"memoryMiB"}},
		{"resources.limits.ephemeral-storage=1Gi", []string{"ephemeral-storage"}},
		{"hpa.enable=false", []string{"enable"}},
		{"serviceMonitor.enable=true", []string{"enable"}},
		{"replicas=5", []string{"replicas"}},
		{"service.targetPort=9000", []string{"targetPort"}},
		{"networkPolicy.enable=true", []string{"enable"}},
	} {
		wantRenderFailure(t, []string{"--set", c.set}, c.want...)
	}
}
