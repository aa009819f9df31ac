#!/usr/bin/env bash
# `make image`: builds $IMAGE from deploy/docker/Dockerfile with podman, offline:
# local debootstrapped base (no registry), wheels fetched on the host (no network in the build).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}"
IMAGE="${IMAGE:-localhost/ragwarrant:dev}"
# The Dockerfile's own default base (one home: its ARG line), unless BASE_IMAGE overrides it.
BASE_IMAGE="${BASE_IMAGE:-$(sed -n 's/^ARG BASE_IMAGE=//p' deploy/docker/Dockerfile)}"
BASE_IMAGE="$BASE_IMAGE" scripts/deploy/bootstrap-base.sh
scripts/deploy/fetch-wheels.sh
start=$(date +%s)
podman build --pull=never --network=none --runtime runc \
  --build-arg BASE_IMAGE="$BASE_IMAGE" \
  -f deploy/docker/Dockerfile -t "$IMAGE" .
echo "built $IMAGE in $(( $(date +%s) - start )) s"
