#!/bin/sh
# Lays out the container image's root filesystem: the only files of the
# final stage. The Dockerfile's build stage runs it and the final stage is
# `FROM scratch` + `COPY --from=build /rootfs/ /`; deploy/image/rootfs.sh
# runs it too, so the chroot test runs exactly these files.
#
#   deploy/image/assemble.sh ROOT BINARY CA_BUNDLE
#
# ROOT gets: the static binary, the CA bundle (HTTPS upstreams), passwd and
# group naming uid/gid 65532 "nonroot" (the distroless convention), the
# default config. No shell, no package manager, no /tmp.
set -eu
root="${1:?usage: assemble.sh ROOT BINARY CA_BUNDLE}"
bin="${2:?binary}"
ca="${3:?CA bundle}"
here="$(cd "$(dirname "$0")" && pwd)"
install -d -m 0755 "$root" "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/etc/dealer-edge"
install -m 0755 "$bin" "$root/usr/local/bin/dealer-edge"
install -m 0644 "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
install -m 0644 "$here/passwd" "$root/etc/passwd"
install -m 0644 "$here/group" "$root/etc/group"
install -m 0644 "$here/config.json" "$root/etc/dealer-edge/config.json"
