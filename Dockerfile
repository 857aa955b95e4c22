# syntax=docker/dockerfile:1
# dealer-edge container image: a static binary on an empty base, run as
# uid 65532 with no shell. Build (BuildKit, the default since Docker 23,
# or buildah/podman: RUN --mount):
#
#   docker build -t dealer-edge .
#
# The build identity (dealer-edge --version, edge_build_info) comes from
# the context's .git: `git describe`, the commit and its commit time, so
# two builds of one commit are byte-identical. A context without .git (a
# tarball, a git URL context without BUILDKIT_CONTEXT_KEEP_GIT_DIR=1, a
# git worktree whose .git is a file) gets "devel", "unknown" and, as the
# build time, SOURCE_DATE_EPOCH when given, else the build machine's clock
# (then two builds differ). Build arguments override each part:
#
#   docker build --build-arg VERSION=v1.2.0 --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg BUILD_TIME=2026-11-23T21:00:00Z -t dealer-edge:1.2.0 .
#   docker build --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) -t dealer-edge .
#
# The two scripts it runs (deploy/image/build.sh, deploy/image/assemble.sh)
# are the ones deploy/image/rootfs.sh runs to test the final stage's files
# in a chroot (no container daemon on the test machines); `rootfs.sh
# identity` checks the identity of a context as .dockerignore filters it.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
ARG VERSION=""
ARG COMMIT=""
ARG BUILD_TIME=""
ARG SOURCE_DATE_EPOCH=""
# The context, .git included, is bind-mounted (read-only) rather than
# copied: .git reaches build.sh for the identity but no layer, so nothing
# a CI checkout keeps in .git/config (a token) is stored in the build
# cache. safe.directory: the context's files may belong to another uid
# than the build's root, and git then refuses the repository.
RUN --mount=type=bind,target=/src git config --global --add safe.directory /src \
 && deploy/image/build.sh /out/dealer-edge \
 && deploy/image/assemble.sh /rootfs /out/dealer-edge /etc/ssl/certs/ca-certificates.crt

# scratch rather than distroless/static: the same five files either way
# (distroless/static adds tzdata, which the edge does not use), and the
# chroot test can rebuild scratch's content exactly.
FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
# The Go runtime's monitor without its deep sleep (README, "Runtime settings").
ENV GODEBUG=schedtrace=2147483647
EXPOSE 8080 9091
ENTRYPOINT ["/usr/local/bin/dealer-edge"]
CMD ["--config", "/etc/dealer-edge/config.json"]
