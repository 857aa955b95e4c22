#!/bin/sh
# Builds the dealer-edge binary as the container image ships it: static
# (CGO_ENABLED=0), -trimpath, stripped, the build identity linked in.
# The Dockerfile's build stage and deploy/image/rootfs.sh both run this
# script, so the image and the chroot test hold the same binary.
#
#   deploy/image/build.sh OUT            # OUT: path of the binary to write
#
# VERSION, COMMIT and BUILD_TIME come from the environment (the Dockerfile
# passes its build arguments, empty unless given), else from git (the
# Dockerfile's build stage sees the context's .git), else "devel" and
# "unknown". BUILD_TIME without git: SOURCE_DATE_EPOCH (seconds, the
# reproducible-builds convention), else the build machine's clock.
#
# Reproducible: BUILD_TIME defaults to SOURCE_DATE_EPOCH or the commit's
# time, so two builds of one commit are byte-identical. Only a build with
# none of BUILD_TIME, SOURCE_DATE_EPOCH and git stamps the clock, and two
# such builds differ in that string.
#
# A tracked file missing from the tree does not mark the version -dirty:
# the image's build context lacks every file .dockerignore drops (tests,
# docs), and they are not part of the binary. A changed or added tracked
# file does.
set -eu
out="${1:?usage: build.sh OUT}"
cd "$(dirname "$0")/../.."
git_ok() { command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; }
if [ -z "${VERSION:-}" ]; then
  VERSION=devel
  if git_ok; then
    VERSION=$(git describe --tags --always 2>/dev/null || echo devel)
    if [ "$VERSION" != devel ] && ! git diff --quiet --diff-filter=d HEAD -- 2>/dev/null; then
      VERSION="$VERSION-dirty"
    fi
  fi
fi
if [ -z "${COMMIT:-}" ]; then
  COMMIT=unknown
  if git_ok; then COMMIT=$(git rev-parse HEAD); fi
fi
if [ -z "${BUILD_TIME:-}" ]; then
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    BUILD_TIME=$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)
  elif git_ok; then
    BUILD_TIME=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
  else
    BUILD_TIME=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  fi
fi
CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildTime=${BUILD_TIME}" \
  -o "$out" ./cmd/dealer-edge
