#!/usr/bin/env bash
# Checks the Helm chart without a cluster: `helm lint --strict` and
# `helm template` with the default values and with values-production.yaml,
# then the rendered ConfigMap's config.json through `dealer-edge
# --check-config` (the secrets directory it names replaced by a temporary
# one holding the keys the chart's Secret or existingSecret provides).
# Installs helm v3.22.0 with `go install` into GOPATH/bin when missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
chart="$here/dealer-edge"
gobin="$(go env GOPATH)/bin"
helm="$gobin/helm"
if ! [ -x "$helm" ]; then
  echo "installing helm v3.22.0 into $gobin"
  go install helm.sh/helm/v3/cmd/helm@v3.22.0
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
(cd "$here/../.." && go build -o "$work/dealer-edge" ./cmd/dealer-edge)
mkdir -p "$work/secrets"
for k in admin_token key_hash_secret redis_password sentinel_password; do
  printf 'chart-check-%s-0123456789\n' "$k" >"$work/secrets/$k"
done
for values in "" "$chart/values-production.yaml"; do
  name="${values:+production}"; name="${name:-default}"
  args=(); [ -z "$values" ] || args=(-f "$values")
  echo "-- $name values"
  "$helm" lint --strict "$chart" "${args[@]}" --kube-version 1.31.0 >/dev/null
  "$helm" template edge "$chart" "${args[@]}" --kube-version 1.31.0 >"$work/$name.yaml"
  for kind in Deployment ConfigMap Service PodDisruptionBudget HorizontalPodAutoscaler; do
    grep -q "^kind: $kind\$" "$work/$name.yaml" || { echo "no $kind rendered" >&2; exit 1; }
  done
  awk '/^  config.json: \|/{on=1; next} on && /^    /{print substr($0,5); next} on{exit}' "$work/$name.yaml" |
    sed "s|/etc/dealer-edge/secrets|$work/secrets|g" >"$work/$name.json"
  "$work/dealer-edge" --check-config "$work/$name.json"
done
echo "helm chart: ok"
