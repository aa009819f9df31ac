#!/usr/bin/env bash
# Builds the Dockerfile's default base image (BASE_IMAGE, localhost/ragwarrant-base:bookworm): a
# minimal Debian bookworm root with CPython 3.11 and its venv module, made by debootstrap from the
# Debian mirror apt already uses, then imported as $BASE_IMAGE with $CONTAINER_TOOL (podman, the
# default, or docker). Skipped when that image already exists.
# Needs root, debootstrap and podman or docker (scripts/install-ci-tools.sh installs podman).
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE_IMAGE="${BASE_IMAGE:-$(sed -n 's/^ARG BASE_IMAGE=//p' deploy/docker/Dockerfile)}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
TOOL="${CONTAINER_TOOL:-podman}"
if "$TOOL" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  echo "base image $BASE_IMAGE exists; not rebuilding"
  exit 0
fi
root=build/deploy/rootfs
rm -rf "$root"
mkdir -p "$root"
start=$(date +%s)
debootstrap --variant=minbase --include=python3,python3-venv bookworm "$root" "$MIRROR" >build/deploy/debootstrap.log 2>&1 \
  || { tail -20 build/deploy/debootstrap.log; exit 1; }
# No package manager caches or logs in the image.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*
# No documentation, manual pages or message catalogues (about 50 MB): the job runs under C.UTF-8
# and nobody reads a man page in a batch container.
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
tar --numeric-owner -C "$root" -c . \
  | "$TOOL" import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' - "$BASE_IMAGE" >/dev/null
rm -rf "$root"
echo "built $BASE_IMAGE in $(( $(date +%s) - start )) s"
