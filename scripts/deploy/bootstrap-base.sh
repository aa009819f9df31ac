#!/usr/bin/env bash
# Builds the local base image for an offline `podman build`: a minimal Debian bookworm root with
# CPython 3.11 and its venv module, made by debootstrap from the Debian mirror apt already uses,
# then `podman import`ed as $BASE_IMAGE. Skipped when that image already exists.
# Needs root, debootstrap and podman (scripts/install-ci-tools.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE_IMAGE="${BASE_IMAGE:-localhost/ragwarrant-base:bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if podman image exists "$BASE_IMAGE"; then
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
tar --numeric-owner -C "$root" -c . \
  | podman import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' - "$BASE_IMAGE" >/dev/null
rm -rf "$root"
echo "built $BASE_IMAGE in $(( $(date +%s) - start )) s"
