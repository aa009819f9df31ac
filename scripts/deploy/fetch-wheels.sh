#!/usr/bin/env bash
# Downloads, on the host, every wheel that deploy/docker/requirements.lock pins into
# deploy/docker/wheels/ (the build context), so the image builds with --network=none.
# pip checks each file against the lock's sha256 hashes (--require-hashes).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
dest=deploy/docker/wheels
mkdir -p "$dest"
"$PYTHON" -m pip download --quiet --disable-pip-version-check --require-hashes --no-deps \
  --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform linux_x86_64 \
  -r deploy/docker/requirements.lock -d "$dest"
echo "$(find "$dest" -name '*.whl' | wc -l) wheels in $dest"
