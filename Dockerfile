# syntax=docker/dockerfile:1
# dealer-edge container image: a static binary on an empty base, run as
# uid 65532 with no shell. Build:
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg BUILD_TIME=$(git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ) \
#     -t dealer-edge .
#
# The two scripts it runs (deploy/image/build.sh, deploy/image/assemble.sh)
# are the ones deploy/image/rootfs.sh runs to test the final stage's files
# in a chroot (no container daemon on the test machines).

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
ARG BUILD_TIME=""
RUN deploy/image/build.sh /out/dealer-edge \
 && deploy/image/assemble.sh /rootfs /out/dealer-edge /etc/ssl/certs/ca-certificates.crt

# scratch rather than distroless/static: the same five files either way
# (distroless/static adds tzdata, which the edge does not use), and the
# chroot test can rebuild scratch's content exactly.
FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
EXPOSE 8080 9091
ENTRYPOINT ["/usr/local/bin/dealer-edge"]
CMD ["--config", "/etc/dealer-edge/config.json"]
