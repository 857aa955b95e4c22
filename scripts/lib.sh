# Shell helpers shared by scripts/test.sh, bench/run.sh and bench/ab.sh (sourced, not run). Each caller defines
# die (print an error and exit non-zero) before calling free_port.

# SHIPPED_GODEBUG is the GODEBUG the edge ships with (the Dockerfile's ENV, the systemd unit, the chart's godebug;
# README, "Runtime settings"): the benchmarks run their edges with it. deploy/checks/runtimeenv checks they agree.
SHIPPED_GODEBUG="schedtrace=2147483647"

# apt_install PKG...: installs the Debian packages named, apt-get update first, as root or through sudo; nothing
# when none is named.
apt_install() {
  (($#)) || return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# start_watchdog SECONDS TAG: bounds the calling script in time: after SECONDS a background process prints
# "[TAG] FAILED: time limit ..." and sends TERM to it. Sets WATCHDOG (kill it on exit).
start_watchdog() {
  local limit="$1" tag="$2" self=$$
  (
    trap 'kill $s 2>/dev/null; exit 0' TERM
    sleep "$limit" &
    s=$!
    wait $s
    echo "[$tag] FAILED: time limit of ${limit}s reached" >&2
    kill -TERM "$self"
  ) &
  WATCHDOG=$!
}

# free_port: sets PORT to a port nobody listens on at 127.0.0.1, in 20000-31999 (below the ephemeral range),
# never one it handed out before in this script (USED_PORTS).
USED_PORTS=" "
free_port() {
  local p
  for _ in $(seq 500); do
    p=$(((RANDOM * 32768 + RANDOM) % 12000 + 20000))
    [[ "$USED_PORTS" == *" $p "* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      USED_PORTS+="$p "
      PORT=$p
      return 0
    fi
  done
  die "no free port found"
}
