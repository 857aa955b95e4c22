#!/bin/sh
# Builds the dealer-edge binary as the container image ships it: static
# (CGO_ENABLED=0), -trimpath, stripped, the build identity linked in.
# The Dockerfile's build stage and deploy/image/rootfs.sh both run this
# script, so the image and the chroot test hold the same binary.
#
#   deploy/image/build.sh OUT            # OUT: path of the binary to write
#
# VERSION, COMMIT and BUILD_TIME come from the environment (the Dockerfile
# passes its build arguments), else from git, else "devel"/"unknown".
# BUILD_TIME defaults to the commit's time, so two builds of one commit
# are byte-identical.
set -eu
out="${1:?usage: build.sh OUT}"
cd "$(dirname "$0")/../.."
git_ok() { command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; }
if [ -z "${VERSION:-}" ]; then
  VERSION=devel
  if git_ok; then VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo devel); fi
fi
if [ -z "${COMMIT:-}" ]; then
  COMMIT=unknown
  if git_ok; then COMMIT=$(git rev-parse HEAD); fi
fi
if [ -z "${BUILD_TIME:-}" ]; then
  BUILD_TIME=unknown
  if git_ok; then BUILD_TIME=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ); fi
fi
CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildTime=${BUILD_TIME}" \
  -o "$out" ./cmd/dealer-edge
