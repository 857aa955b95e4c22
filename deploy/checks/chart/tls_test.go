package chart

// TLS on the public listener (config.tls.cert_file / key_file, the only
// path fields of the edge's config besides the secrets' *_file): the edge
// reads the pair at start and refuses to start without it (--check-config:
// "tls: tls.cert_file: open ...: no such file or directory"). The pod
// mounts one Secret, at /etc/dealer-edge/secrets, and the chart's own
// Secret holds no certificate, so a pair named anywhere else, or named in
// the mount without secrets.existingSecret (the Secret that can hold
// tls.crt and tls.key), gave pods that crash-looped. Until 2026-11-29 both
// rendered (README: "a *_file outside the mounted Secret" fails to render,
// which the chart checked for the secrets' files only).

import (
	"strings"
	"testing"
)

func TestTLSPairRendersStartablePods(t *testing.T) {
	edge := edgeBinary(t)
	for _, c := range []struct {
		args []string
		want []string // the failure names these; nil: renders startable pods
	}{
		// Outside the one mounted Secret: no such file in the pod.
		{[]string{"--set", "secrets.existingSecret=mine", "--set", "config.tls.cert_file=/etc/tls/tls.crt", "--set", "config.tls.key_file=/etc/tls/tls.key"},
			[]string{"config.tls.cert_file", "/etc/dealer-edge/secrets/"}},
		{[]string{"--set", "secrets.existingSecret=mine", "--set", "config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt", "--set", "config.tls.key_file=/etc/tls/tls.key"},
			[]string{"config.tls.key_file", "/etc/dealer-edge/secrets/"}},
		// In the mount, but the chart's own Secret holds no certificate.
		{[]string{"--set", "config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt", "--set", "config.tls.key_file=/etc/dealer-edge/secrets/tls.key"},
			[]string{"config.tls", "secrets.existingSecret"}},
		// The documented way: the pair in the existing Secret.
		{[]string{"--set", "secrets.existingSecret=mine", "--set", "config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt", "--set", "config.tls.key_file=/etc/dealer-edge/secrets/tls.key"}, nil},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if c.want != nil {
				wantRenderFailure(t, c.args, c.want...)
				return
			}
			checkDeployment(t, render(t, c.args...), edge)
		})
	}
}

// tlsKeysInSecret are the keys of an existing Secret that holds the
// public listener's pair (README, Kubernetes).
var tlsKeysInSecret = []string{"tls.crt", "tls.key"}
