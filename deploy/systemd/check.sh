#!/usr/bin/env bash
# Checks deploy/systemd/dealer-edge.service with Debian's systemd-analyze:
# `verify` (syntax, directives, the binary exists: a freshly built one is
# put where ExecStart points, in a copy of the unit; once alone, once with
# the drop-ins of deploy/systemd/credentials/) and the offline
# `security` exposure score, which must stay at or under 2.0 ("OK").
# Skips with a message where systemd-analyze is not installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed: skipped"; exit 0; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
(cd "$here/../.." && go build -o "$work/dealer-edge" ./cmd/dealer-edge)
sed "s|/usr/local/bin/dealer-edge|$work/dealer-edge|g" "$here/dealer-edge.service" >"$work/dealer-edge.service"
systemd-analyze verify "$work/dealer-edge.service"
# Again with the credential drop-ins of deploy/systemd/credentials/ beside it.
mkdir "$work/dealer-edge.service.d"
cp "$here"/credentials/*.conf "$work/dealer-edge.service.d/"
out="$(systemd-analyze verify "$work/dealer-edge.service" 2>&1)"
[ -z "$out" ] || { echo "$out" >&2; exit 1; }
rm -r "$work/dealer-edge.service.d"
out="$(systemd-analyze security --offline=true "$work/dealer-edge.service" 2>&1)"
score="$(sed -n 's/.*Overall exposure level for dealer-edge.service: \([0-9.]*\).*/\1/p' <<<"$out")"
echo "systemd-analyze security: exposure $score"
awk -v s="$score" 'BEGIN{exit !(s != "" && s <= 2.0)}' || { echo "$out"; echo "exposure $score above 2.0" >&2; exit 1; }
