#!/usr/bin/env bash
# The whole test suite: unit, integration (real redis-server and a real
# three-master Redis Cluster), black-box contract tests, fuzz smoke runs and
# the benchmark smoke run. Installs the Debian packages it needs when they
# are missing (redis-server, nginx, wrk), so it works on a fresh machine.
#
#   scripts/test.sh            # everything
#   FUZZTIME=30s scripts/test.sh   # longer fuzzing
#   SOAK=5m scripts/test.sh        # longer soak (default 60s under CI, 10s otherwise)
#   ISOLATION_ITERS=60 scripts/test.sh   # more random dealer pairs in the isolation property test (default 6)
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v nginx >/dev/null 2>&1 || need+=(nginx)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "== go vet"
go vet ./...

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== race detector on the concurrent core"
go test -count=1 -race -timeout 15m ./aggregator/... ./cache/... ./upstream/...

FUZZTIME="${FUZZTIME:-5s}"
echo "== fuzz smoke (${FUZZTIME} per target)"
fuzz() { # package target
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" "$1"
}
for pkg in ./aggregator ./publicshape ./cache/ratelimit; do
  for t in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do fuzz "$pkg" "$t"; done
done

if [ -x bench/run.sh ]; then
  echo "== benchmark smoke"
  bench/run.sh --smoke
fi
echo "all tests passed"
