#!/usr/bin/env bash
# Paired A/B of one benchmark row between two variants of the edge (another build, or another environment).
# See bench/README.md, "A/B of two variants".
#
#   bench/ab.sh           AB_PAIRS pairs of runs, alternating A and B, each pair in the other order than the last
#   bench/ab.sh --smoke   CI smoke: two pairs of one-second runs; fails only when a process does not start or a
#                         run answers non-2xx / nothing, never on the numbers
#
# Why: on a shared VM the same binary's CPU per request moves by 30-50% between phases of the host, so two
# variants measured in two bench/run.sh runs cannot be compared; runs alternated within minutes can.
#
# Environment: AB_ROW (c: the listing miss with every cache route off, as row c; hit: the hot URL from L1, as
# row a; default c), AB_PATH (default the rows' listing page), AB_KEY (default bench-key-000), AB_CONNS (default
# 64), AB_PAIRS (default 6, smoke 2), AB_DURATION (wrk -d, default 10s, smoke 1s), AB_A_BIN / AB_B_BIN (the edge
# binaries; default one build of this tree for both), AB_A_ENV / AB_B_ENV (VAR=VALUE ... added to each edge's
# environment, e.g. AB_B_ENV=GOGC=200; both start from the shipped GODEBUG, AB_EDGE_GODEBUG, which a GODEBUG=
# word there replaces), AB_LATENCY (the fake upstream's latency, default 5ms), AB_AT_ONCE (1: each pair loads A
# and B at the same time, two wrk on CPU 1, instead of one after the other: both variants meet the same phase of the
# host, and the pairs' ratios spread by about 1% instead of 20-30%; the two edges share CPU 0, so each one's
# requests per second and latency are about half of a run alone: compare CPU per request only).
#
# Everything listens on 127.0.0.1 on free ports; every process started is stopped on exit. The edges and their
# redis-server run on CPU 0, wrk and the fake upstream on CPU 1, as in bench/run.sh.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=../scripts/lib.sh
. "$ROOT/scripts/lib.sh" # apt_install, start_watchdog, free_port

MODE=full
case "${1:-}" in
  "" | --full) ;;
  --smoke) MODE=smoke ;;
  -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
  *) echo "usage: bench/ab.sh [--smoke]" >&2; exit 2 ;;
esac

ROW="${AB_ROW:-c}"
case "$ROW" in c | hit) ;; *) echo "bench/ab.sh: AB_ROW must be c or hit, not $ROW" >&2; exit 2 ;; esac
URLPATH="${AB_PATH:-/dealer/REWIND/listing?page=1&page_size=20}"
KEY="${AB_KEY:-bench-key-000}"
CONNS="${AB_CONNS:-64}"
if [ "$MODE" = smoke ]; then
  PAIRS="${AB_PAIRS:-2}"; DURATION="${AB_DURATION:-1s}"
else
  PAIRS="${AB_PAIRS:-6}"; DURATION="${AB_DURATION:-10s}"
fi
DUR_S="${DURATION%s}"
[[ "$DUR_S" =~ ^[0-9]+$ && "$PAIRS" =~ ^[0-9]+$ && "$CONNS" =~ ^[0-9]+$ ]] ||
  { echo "bench/ab.sh: AB_DURATION must be whole seconds (e.g. 10s), AB_PAIRS and AB_CONNS numbers" >&2; exit 2; }
LIMIT_S=$((PAIRS * 2 * (DUR_S + 5) + 180))
[ "${AB_AT_ONCE:-0}" = 1 ] || [ "${AB_AT_ONCE:-0}" = 0 ] || { echo "bench/ab.sh: AB_AT_ONCE must be 0 or 1" >&2; exit 2; }

OUT="$BENCH_DIR/out/ab"
LOGS="$OUT/logs"
BIN="$OUT/bin"
mkdir -p "$LOGS" "$BIN"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/dealer-edge-ab.XXXXXX")"

log() { printf '[ab %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[ab] FAILED: %s\n' "$*" >&2; exit 1; }

PIDS=()
WATCHDOG=""
cleanup() {
  local rc=$? pid
  set +e
  trap - EXIT INT TERM
  [ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$WORK"
  [ "$rc" -ne 0 ] && echo "[ab] exit $rc; process logs in $LOGS" >&2
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_watchdog "$LIMIT_S" ab

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
if ((${#need[@]})); then
  log "installing ${need[*]} with apt-get"
  apt_install "${need[@]}"
fi
CPU_SRV=0
CPU_GEN=1
[ "$(nproc)" -ge 2 ] || CPU_GEN=0

if [ -z "${AB_A_BIN:-}" ] || [ -z "${AB_B_BIN:-}" ]; then
  log "building dealer-edge into $BIN"
  (cd "$ROOT" && go build -o "$BIN/" ./cmd/dealer-edge) || die "go build of cmd/dealer-edge failed"
fi
(cd "$ROOT" && go build -o "$BIN/" ./cmd/fake-upstream) || die "go build of cmd/fake-upstream failed"
A_BIN="${AB_A_BIN:-$BIN/dealer-edge}"
B_BIN="${AB_B_BIN:-$BIN/dealer-edge}"
[ -x "$A_BIN" ] && [ -x "$B_BIN" ] || die "AB_A_BIN / AB_B_BIN not executable"

wait_port() { # PID PORT NAME
  local deadline=$((SECONDS + 20))
  while ! (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; do
    kill -0 "$1" 2>/dev/null || { tail -n 20 "$LOGS/$3.log" >&2; die "$3 exited before listening"; }
    ((SECONDS < deadline)) || die "$3 not listening on 127.0.0.1:$2 after 20 s"
    sleep 0.1
  done
}

free_port; REDIS_PORT=$PORT
taskset -c "$CPU_SRV" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
  --protected-mode no --daemonize no --dir "$WORK" --logfile "" >"$LOGS/redis.log" 2>&1 &
PIDS+=($!)
wait_port $! "$REDIS_PORT" redis
free_port; UP_PORT=$PORT
taskset -c "$CPU_GEN" "$BIN/fake-upstream" --listen "127.0.0.1:$UP_PORT" --latency "${AB_LATENCY:-5ms}" --fail-rate 0 \
  >"$LOGS/fake-upstream.log" 2>&1 &
PIDS+=($!)
wait_port $! "$UP_PORT" fake-upstream

CFG="$WORK/edge.json"
if [ "$ROW" = c ]; then
  # As bench/run.sh's caching-off edge: every route uncached, upstream timeouts raised so queueing shows as latency.
  off='{"ttl":"0s","stale_while_revalidate":"0s","stale_if_error":"0s"}'
  printf '{"log":{"access_log":false},"server":{"request_timeout":"25s"},"upstream":{"timeouts":{"dealers":"10s","inventory":"10s","content":"10s"}},"cache":{"routes":{"inventory_listing":%s,"inventory_details":%s,"content_hub":%s,"content_search":%s,"content_listing":%s,"content_details":%s}}}\n' \
    "$off" "$off" "$off" "$off" "$off" "$off" >"$CFG"
else
  echo '{"log":{"access_log":false}}' >"$CFG"
fi

# The edges start from the Go runtime settings they ship with (as bench/run.sh's; README, "Runtime settings").
EDGE_GODEBUG="${AB_EDGE_GODEBUG-$SHIPPED_GODEBUG}"
declare -A EDGE_PID EDGE_PORT
for v in A B; do
  bin="$A_BIN"; envs="${AB_A_ENV:-}"
  if [ "$v" = B ]; then bin="$B_BIN"; envs="${AB_B_ENV:-}"; fi
  free_port; p=$PORT
  free_port; admin=$PORT
  # shellcheck disable=SC2086 # envs is a list of VAR=VALUE words
  env GODEBUG="$EDGE_GODEBUG" $envs taskset -c "$CPU_SRV" "$bin" --upstream "http://127.0.0.1:$UP_PORT" --redis "127.0.0.1:$REDIS_PORT" \
    --listen "127.0.0.1:$p" --admin-listen "127.0.0.1:$admin" --config "$CFG" >"$LOGS/edge-$v.log" 2>&1 &
  PIDS+=($!)
  EDGE_PID[$v]=$!
  EDGE_PORT[$v]=$p
  wait_port $! "$p" "edge-$v"
done
log "row $ROW, $URLPATH, $CONNS connections, $PAIRS pairs of ${DURATION}; A: $A_BIN ${AB_A_ENV:-}; B: $B_BIN ${AB_B_ENV:-}"

REPORT="$WORK/report.lua"
cat >"$REPORT" <<'LUA'
done = function(s, lat, r)
  io.write(string.format("ABRUN %d %d %d %d\n", s.requests, lat:percentile(50), lat:percentile(99), s.errors.status))
end
LUA

# Unmeasured: connections, L1 (row hit), the runtime's first heap growth.
for v in A B; do
  timeout 60 taskset -c "$CPU_GEN" wrk -t1 -c"$CONNS" -d2s -H "X-Api-Key: $KEY" "http://127.0.0.1:${EDGE_PORT[$v]}$URLPATH" \
    >"$LOGS/warm-$v.txt" 2>&1 || die "warm-up of edge $v failed (log: $LOGS/warm-$v.txt)"
done

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {s += $2} END {print s + 0}'; }
CLK_TCK=$(getconf CLK_TCK)
RES="$WORK/results.txt"
: >"$RES"
wrk_edge() { # VARIANT: one measured wrk run against edge VARIANT, its output on stdout
  timeout $((DUR_S + 60)) taskset -c "$CPU_GEN" wrk -t1 -c"$CONNS" -d"$DURATION" --timeout 10s -s "$REPORT" \
    -H "X-Api-Key: $KEY" "http://127.0.0.1:${EDGE_PORT[$1]}$URLPATH" 2>&1
}
run() { # VARIANT PAIR
  local v="$1" pid="${EDGE_PID[$1]}" t0 t1 s0 s1 out
  t0=$(ticks "$pid"); s0=$(switches "$pid")
  out=$(wrk_edge "$v") || { echo "$out" >&2; die "wrk failed against edge $v"; }
  t1=$(ticks "$pid"); s1=$(switches "$pid")
  record "$v" "$2" "$out" $((t1 - t0)) $((s1 - s0))
}
# run_at_once PAIR (AB_AT_ONCE=1): A and B loaded at the same time, each by its own wrk, so that both meet the same
# phase of the host; each edge's CPU is still its own process's.
run_at_once() {
  local ta0 tb0 sa0 sb0 ta1 tb1 sa1 sb1 pa pb
  ta0=$(ticks "${EDGE_PID[A]}"); tb0=$(ticks "${EDGE_PID[B]}"); sa0=$(switches "${EDGE_PID[A]}"); sb0=$(switches "${EDGE_PID[B]}")
  wrk_edge A >"$WORK/wrk-A.txt" & pa=$!
  wrk_edge B >"$WORK/wrk-B.txt" & pb=$!
  wait "$pa" || { cat "$WORK/wrk-A.txt" >&2; die "wrk failed against edge A"; }
  wait "$pb" || { cat "$WORK/wrk-B.txt" >&2; die "wrk failed against edge B"; }
  ta1=$(ticks "${EDGE_PID[A]}"); tb1=$(ticks "${EDGE_PID[B]}"); sa1=$(switches "${EDGE_PID[A]}"); sb1=$(switches "${EDGE_PID[B]}")
  record A "$1" "$(cat "$WORK/wrk-A.txt")" $((ta1 - ta0)) $((sa1 - sa0))
  record B "$1" "$(cat "$WORK/wrk-B.txt")" $((tb1 - tb0)) $((sb1 - sb0))
}
record() { # VARIANT PAIR WRK_OUTPUT CPU_TICKS SWITCHES
  local v="$1" out="$3" reqs p50 p99 non2xx
  read -r _ reqs p50 p99 non2xx <<<"$(grep '^ABRUN ' <<<"$out")"
  [ -n "${reqs:-}" ] && [ "$reqs" -gt 0 ] || { echo "$out" >&2; die "no requests answered by edge $v"; }
  [ "$non2xx" -eq 0 ] || die "edge $v answered $non2xx non-2xx responses"
  awk -v v="$v" -v pair="$2" -v r="$reqs" -v dt="$4" -v hz="$CLK_TCK" -v ds="$5" -v p50="$p50" -v p99="$p99" 'BEGIN {
    cpu = dt * 1e6 / hz / r
    printf "%s %d %.2f %.3f %d %d %d\n", v, pair, cpu, ds / r, r, p50, p99 }' >>"$RES"
  tail -n 1 "$RES" | awk '{printf "  pair %d %s: %.1f µs CPU/req, %.3f context switches/req, %d req, p50 %.2f ms, p99 %.2f ms\n", $2, $1, $3, $4, $5, $6 / 1000, $7 / 1000}'
}
for pair in $(seq 1 "$PAIRS"); do
  if [ "${AB_AT_ONCE:-0}" = 1 ]; then run_at_once "$pair"
  elif ((pair % 2)); then run A "$pair"; run B "$pair"; else run B "$pair"; run A "$pair"; fi
done

# Summary: medians of each variant and of the per-pair ratio B/A (CPU per request).
awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { cpu[$1, $2] = $3; sw[$1, $2] = $4; p99[$1, $2] = $7; pairs[$2] = 1 }
  END {
    n = 0
    for (p in pairs) { n++; ca[n] = cpu["A", p]; cb[n] = cpu["B", p]; r[n] = cpu["B", p] / cpu["A", p]; wa[n] = sw["A", p]; wb[n] = sw["B", p]; qa[n] = p99["A", p]; qb[n] = p99["B", p] }
    lo = 1e9; hi = 0; for (i = 1; i <= n; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
    mr = median(r, n)
    printf "[ab] medians over %d pairs: A %.1f µs CPU/req (%.3f switches/req, p99 %.2f ms); B %.1f µs (%.3f, %.2f ms); B/A %.3f (pairs %.3f-%.3f)\n",
      n, median(ca, n), median(wa, n), median(qa, n) / 1000, median(cb, n), median(wb, n), median(qb, n) / 1000, mr, lo, hi
    printf "ABJSON {\"pairs\":%d,\"a_cpu_us\":%.2f,\"b_cpu_us\":%.2f,\"ratio_b_over_a\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f}\n", n, median(ca, n), median(cb, n), mr, lo, hi
  }' "$RES"
