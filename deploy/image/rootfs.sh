#!/usr/bin/env bash
# Proves the container image's final stage without a container daemon:
# builds the binary and lays out the root filesystem with the same two
# scripts the Dockerfile runs (build.sh, assemble.sh), then runs it the way
# a hardened runtime would: chroot into a read-only bind mount of that tree
# as uid/gid 65532 (the Dockerfile's USER), only the Dockerfile's ENV, no /tmp,
# /proc, /dev or shell, with the Dockerfile's ENTRYPOINT. Two runs:
#
#   1. --demo (embedded fakes and Redis): /readyz answers 200, a demo key
#      gets its listing, SIGTERM ends it with status 0.
#   2. the image's own config (/etc/dealer-edge/config.json, admin token and
#      key hash secret from files mounted at /etc/dealer-edge/secrets as a
#      Kubernetes Secret would be) against a real redis-server and the fake
#      upstream: /readyz says redis "up", the admin token from the file
#      guards /metrics, edge_build_info names the commit, a listing
#      answers, SIGTERM ends it with status 0.
#
#   deploy/image/rootfs.sh              # build, assemble, run both checks (needs root)
#   deploy/image/rootfs.sh assemble DIR # only lay out the tree in DIR
#   deploy/image/rootfs.sh identity     # only the build identity of a plain docker build
#
# Listeners are on 127.0.0.1 port 0 (the flags override the image's
# 0.0.0.0:8080/9091); the addresses are read from the edge's first lines.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ca=/etc/ssl/certs/ca-certificates.crt

assemble() { # DIR
  local dir="$1"
  "$here/build.sh" "$dir.bin"
  "$here/assemble.sh" "$dir" "$dir.bin" "$ca"
  rm -f "$dir.bin"
}

if [ "${1:-}" = assemble ]; then
  assemble "${2:?usage: rootfs.sh assemble DIR}"
  exit 0
fi

# identity WORK: the build identity a plain `docker build .` (no build
# arguments) stamps. The build stage bind-mounts the build context, which is
# the work tree as .dockerignore filters it, and runs build.sh with VERSION,
# COMMIT, BUILD_TIME and SOURCE_DATE_EPOCH empty. buildah applies
# .dockerignore as docker does: it copies a context (the work tree's files
# and a .git at HEAD) into a scratch image, and build.sh runs on that tree.
# With .git: HEAD, its commit time, and a version not marked -dirty for the
# files .dockerignore drops. Without .git (a tarball, a git URL context, a
# worktree's .git file): the build clock, or SOURCE_DATE_EPOCH when given.
identity() {
  local w="$1" ctx="$1/context" b m c out head ctime ver t0 t1 at
  if ! command -v buildah >/dev/null 2>&1; then
    echo "== buildah not installed: build identity of a plain docker build not checked"
    return 0
  fi
  echo "== build identity of a plain docker build (no build arguments)"
  grep -q '^RUN --mount=type=bind,target=/src ' "$repo/Dockerfile" ||
    { echo "the Dockerfile's build stage does not bind-mount the context at /src for build.sh" >&2; return 1; }
  grep -q '^ARG SOURCE_DATE_EPOCH=""$' "$repo/Dockerfile" ||
    { echo "the Dockerfile's build stage does not pass SOURCE_DATE_EPOCH" >&2; return 1; }
  mkdir -p "$ctx"
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$ctx" -xf -
  git clone -q --no-checkout "$repo" "$w/clone"
  mv "$w/clone/.git" "$ctx/.git"
  git -C "$ctx" reset -q
  head="$(git -C "$repo" rev-parse HEAD)"
  [ "$(git -C "$ctx" rev-parse HEAD)" = "$head" ] || { echo "the context's HEAD is not $head" >&2; return 1; }
  ctime="$(TZ=UTC git -C "$repo" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)"
  ver="$(git -C "$repo" describe --tags --always)"
  git -C "$repo" diff --quiet --diff-filter=d HEAD -- || ver="$ver-dirty"
  printf 'FROM scratch\nCOPY . /src/\n' >"$w/Containerfile"
  b=(buildah --storage-driver vfs --root "$w/bstore" --runroot "$w/brun")
  "${b[@]}" bud --quiet --isolation chroot -t dealer-edge:context-test -f "$w/Containerfile" "$ctx" >/dev/null
  c="$("${b[@]}" from dealer-edge:context-test)"
  m="$("${b[@]}" mount "$c")"
  # build_in OUT [VAR=VALUE...]: build.sh in the context's tree with the
  # build arguments empty, as the Dockerfile's ARGs pass them.
  build_in() {
    local o="$1"; shift
    env VERSION= COMMIT= BUILD_TIME= SOURCE_DATE_EPOCH= GIT_CEILING_DIRECTORIES="$m" "$@" \
      "$m/src/deploy/image/build.sh" "$o"
    "$o" --version
  }
  out="$(build_in "$w/ctx.bin")"
  echo "  context with .git: $out"
  [[ "$out" == "dealer-edge $ver (commit $head, built $ctime, go"* ]] ||
    { echo "want dealer-edge $ver (commit $head, built $ctime, ...)" >&2; return 1; }
  rm -rf "$m/src/.git"
  t0="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  out="$(build_in "$w/ctx.bin")"
  t1="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "  context without .git: $out"
  at="$(sed -n 's/.*, built \([^,]*\),.*/\1/p' <<<"$out")"
  [[ "$out" == "dealer-edge devel (commit unknown, built "* && "$at" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ && ! "$at" < "$t0" && ! "$at" > "$t1" ]] ||
    { echo "want the build clock ($t0 to $t1) as the build time" >&2; return 1; }
  out="$(build_in "$w/ctx.bin" SOURCE_DATE_EPOCH=1700000000)"
  echo "  context without .git, SOURCE_DATE_EPOCH=1700000000: $out"
  [[ "$out" == *", built 2023-11-14T22:13:20Z, "* ]] || { echo "want built 2023-11-14T22:13:20Z" >&2; return 1; }
  "${b[@]}" umount "$c" >/dev/null
  "${b[@]}" rm -a >/dev/null 2>&1 || true
  "${b[@]}" rmi -a -f >/dev/null 2>&1 || true
  rm -rf "$w/ctx.bin"
}

if [ "${1:-}" = identity ]; then
  w="$(mktemp -d)"
  trap 'rm -rf "$w"' EXIT
  identity "$w"
  echo "identity: ok"
  exit 0
fi

[ "$(id -u)" = 0 ] || { echo "rootfs.sh: needs root (chroot, mount namespaces)" >&2; exit 1; }
[ -r "$ca" ] || { echo "rootfs.sh: $ca missing (apt-get install ca-certificates)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 0755 "$work"
root="$work/rootfs"
assemble "$root"

# The image's run settings, read from the Dockerfile's final stage.
final="$(awk '/^FROM /{s=""} {s=s $0 "\n"} END{printf "%s", s}' "$repo/Dockerfile")"
user="$(sed -n 's/^USER //p' <<<"$final")"
# The final stage's ENV lines (KEY=VALUE, one each): the chroot's only environment, as the image's.
mapfile -t image_env < <(sed -n 's/^ENV \([A-Za-z_][A-Za-z0-9_]*=[^ ]*\)$/\1/p' <<<"$final")
entry="$(sed -n 's/^ENTRYPOINT \["\(.*\)"\]$/\1/p' <<<"$final")"
cmd_cfg="$(sed -n 's/^CMD \["--config", "\(.*\)"\]$/\1/p' <<<"$final")"
[ "$user" = 65532:65532 ] || { echo "Dockerfile USER is '$user', want 65532:65532" >&2; exit 1; }
[ -x "$root$entry" ] || { echo "ENTRYPOINT $entry is not in the tree" >&2; exit 1; }
[ -f "$root$cmd_cfg" ] || { echo "CMD config $cmd_cfg is not in the tree" >&2; exit 1; }
grep -q '^FROM scratch' <<<"$final" || { echo "the final stage is not FROM scratch" >&2; exit 1; }
grep -q '^COPY --from=build /rootfs/ /$' <<<"$final" || { echo "the final stage copies something other than /rootfs" >&2; exit 1; }
echo "image tree:"; (cd "$root" && find . -mindepth 1 | sort | sed 's/^/  /')
for f in bin/sh usr/bin/env tmp proc; do
  [ ! -e "$root/$f" ] || { echo "the image has /$f" >&2; exit 1; }
done

# run_image OUT MOUNT_DIR ARGS...: starts the entry point in the chroot,
# MOUNT_DIR (if not "-") bound read-only over /etc/dealer-edge; sets $edge_pid.
run_image() {
  local out="$1" mnt="$2"; shift 2
  local bind=""
  if [ "$mnt" != - ]; then bind="mount --bind -o ro '$mnt' '$root/etc/dealer-edge' && "; fi
  env -i "${image_env[@]}" /usr/bin/unshare -m --propagation private /bin/sh -c \
    "unset PWD OLDPWD; mount --bind '$root' '$root' && mount -o remount,bind,ro '$root' && ${bind}exec /usr/sbin/chroot --userspec='$user' '$root' \"\$@\"" \
    sh "$entry" "$@" >"$out" 2>"$out.err" &
  edge_pid=$!
  pids+=("$edge_pid")
}

# addr_of OUT WHAT: the address the edge printed ("listening on" / "admin on").
addr_of() {
  local i
  for i in $(seq 100); do
    a="$(sed -n "s|^dealer-edge $2 http://||p" "$1" | head -1)"
    if [ -n "$a" ]; then echo "$a"; return 0; fi
    kill -0 "$edge_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "the edge did not start:" >&2; cat "$1" "$1.err" >&2; return 1
}

# stop: SIGTERM, expect exit status 0.
stop() {
  kill -TERM "$edge_pid"
  local rc=0
  wait "$edge_pid" || rc=$?
  [ "$rc" = 0 ] || { echo "exit status $rc after SIGTERM" >&2; cat "$1.err" >&2; exit 1; }
  echo "  SIGTERM: exit 0"
}

# expect WHAT CURL-ARGS...: curl must succeed; prints the body. Its checks
# read the whole body (grep >/dev/null, not grep -q): a grep -q that stops at
# its first match closes the pipe while curl may still be writing a body
# larger than the pipe's buffer (/metrics), and curl then fails (exit 23).
expect() {
  local what="$1"; shift
  curl -fsS --max-time 5 "$@" || { echo "FAILED: $what" >&2; exit 1; }
}

# Where Debian's buildah is installed, build the OCI image itself from the
# same tree: the Dockerfile's final stage with its one COPY reading the
# assembled tree instead of the build stage (buildah needs no daemon and,
# for FROM scratch, no registry; the build stage's golang image would need
# one). Its config must carry the Dockerfile's USER, ENTRYPOINT, CMD, ports.
if command -v buildah >/dev/null 2>&1; then
  echo "== buildah: FROM scratch image from the same tree"
  ctx="$work/buildah"; mkdir -p "$ctx"; cp -a "$root" "$ctx/rootfs"
  sed 's|^COPY --from=build /rootfs/ /$|COPY rootfs/ /|' <<<"$final" >"$ctx/Containerfile"
  b=(buildah --storage-driver vfs --root "$work/bstore" --runroot "$work/brun")
  "${b[@]}" bud --quiet --isolation chroot -t dealer-edge:rootfs-test -f "$ctx/Containerfile" "$ctx" >/dev/null
  conf="$("${b[@]}" inspect --type image --format '{{.OCIv1.Config.User}} {{.OCIv1.Config.Entrypoint}} {{.OCIv1.Config.Cmd}} {{.OCIv1.Config.ExposedPorts}}' dealer-edge:rootfs-test)"
  echo "  image config: $conf"
  [ "$conf" = "65532:65532 [/usr/local/bin/dealer-edge] [--config /etc/dealer-edge/config.json] map[8080/tcp:{} 9091/tcp:{}]" ] ||
    { echo "the buildah image's config differs from the Dockerfile's" >&2; exit 1; }
  "${b[@]}" rmi -a -f >/dev/null 2>&1 || true
else
  echo "== buildah not installed: OCI image build skipped (the chroot runs below are the proof)"
fi

identity "$work/identity"

echo "== run 1: --demo"
run_image "$work/demo.out" - --demo --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0
pub="$(addr_of "$work/demo.out" "listening on")"
adm="$(addr_of "$work/demo.out" "admin on")"
expect "/readyz" "http://$adm/readyz" | grep '"status":"ready"' >/dev/null
echo "  /readyz: ready"
expect "a demo listing" -H 'X-Api-Key: demo-key-alpha' "http://$pub/dealer/REWIND/listing?page_size=1" | grep '"items"' >/dev/null
echo "  GET /dealer/REWIND/listing: 200"
# The edge's environment is the image's ENV and nothing else.
got_env="$(tr '\0' '\n' <"/proc/$edge_pid/environ" | sort)"
want_env="$(printf '%s\n' "${image_env[@]}" | sed '/^$/d' | sort)"
[ "$got_env" = "$want_env" ] || { printf 'environment in the image:\n%s\nwant the ENV lines:\n%s\n' "$got_env" "$want_env" >&2; exit 1; }
echo "  environment: ${image_env[*]}"
stop "$work/demo.out"

echo "== run 2: the image's config, secrets from files, real redis-server, fake upstream"
command -v redis-server >/dev/null || { echo "redis-server missing" >&2; exit 1; }
for attempt in 1 2 3 4 5; do
  rport=$((20000 + RANDOM % 40000))
  redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
  rpid=$!
  for i in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
  if redis-cli -p "$rport" ping >/dev/null 2>&1; then pids+=("$rpid"); break; fi
  kill "$rpid" 2>/dev/null || true
  rport=""
done
[ -n "$rport" ] || { echo "could not start redis-server" >&2; exit 1; }
(cd "$repo" && go build -o "$work/fake-upstream" ./cmd/fake-upstream)
"$work/fake-upstream" --listen 127.0.0.1:0 >"$work/fake.out" 2>&1 &
pids+=("$!")
for i in $(seq 100); do up="$(sed -n 's|^fake-upstream listening on \(http://[^ ]*\).*|\1|p' "$work/fake.out")"; [ -n "$up" ] && break; sleep 0.1; done
[ -n "$up" ] || { echo "fake-upstream did not start" >&2; exit 1; }

# What a Kubernetes pod would mount over /etc/dealer-edge: the image's
# config (from the tree itself) and a Secret volume.
etc="$work/etc-dealer-edge"
mkdir -p "$etc/secrets"
cp "$root/etc/dealer-edge/config.json" "$etc/config.json"
token="rootfs-test-admin-token-$RANDOM$RANDOM"
printf '%s\n' "$token" >"$etc/secrets/admin_token"
printf '%s\n' "rootfs-test-key-hash-secret-$RANDOM$RANDOM" >"$etc/secrets/key_hash_secret"
chmod -R a+rX "$etc"
run_image "$work/cfg.out" "$etc" --config "$cmd_cfg" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 \
  --redis "127.0.0.1:$rport" --upstream "$up"
pub="$(addr_of "$work/cfg.out" "listening on")"
adm="$(addr_of "$work/cfg.out" "admin on")"
expect "/readyz" "http://$adm/readyz" | grep '"redis":"up"' >/dev/null
echo "  /readyz: redis up"
code="$(curl -s -o /dev/null -w '%{http_code}' "http://$adm/metrics")"
[ "$code" = 401 ] || { echo "/metrics without the token: $code, want 401" >&2; exit 1; }
commit="$(cd "$repo" && git rev-parse HEAD 2>/dev/null || echo unknown)"
expect "/metrics with the token" -H "Authorization: Bearer $token" "http://$adm/metrics" | grep "^edge_build_info{.*commit=\"$commit\"" >/dev/null
echo "  /metrics: 401 without the token, 200 with the one from the file; edge_build_info commit $commit"
expect "a listing through redis" -H 'X-Api-Key: demo-key-beta' "http://$pub/dealer/NOS/listing?page_size=1" | grep '"items"' >/dev/null
echo "  GET /dealer/NOS/listing: 200"
if grep -q "$token" "$work/cfg.out" "$work/cfg.out.err"; then echo "the admin token was logged" >&2; exit 1; fi
stop "$work/cfg.out"
echo "rootfs: ok"
