#!/usr/bin/env bash
# Regenerates deploy/docker/requirements.lock: every runtime dependency of pyproject.toml plus the
# build backend, pinned with sha256 hashes for CPython 3.11 on x86_64 manylinux. Needs PyPI.
# Run after changing [project] dependencies:   make -f deploy/deploy.mk deploy-lock   (or `make deploy-lock`)
set -euo pipefail
cd "$(dirname "$0")/../.."
UV="${UV:-build/deploy-tools/venv/bin/uv}"
"$UV" pip compile pyproject.toml deploy/docker/build-requirements.in \
  --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --custom-compile-command "scripts/deploy/lock.sh" \
  --quiet -o deploy/docker/requirements.lock
echo "wrote deploy/docker/requirements.lock"
