#!/usr/bin/env bash
# Installs what tests/deploy/test_argo.py validates deploy/argo against, pinned, into build/,
# from package registries only (npm and PyPI; no other host):
#   build/argo/npm/             the Argo Rollouts API models (npm @kubernetes-models/argo-rollouts,
#                               MIT; validators generated from the Argo Rollouts Go API types),
#                               installed with `npm ci` from scripts/argo/package-lock.json
#                               (versions and integrity hashes pinned); run by
#                               scripts/argo/validate-analysis-template.mjs
#   build/deploy-tools/argo/    a venv with Hera (Argo Workflows pydantic models, PyPI)
# Neither is committed: they are third-party.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
HERA_PINS="hera==7.1.0 PyYAML==6.0.3"
NPM_DIR=build/argo/npm
if ! { [ -d "$NPM_DIR/node_modules/@kubernetes-models/argo-rollouts" ] \
  && cmp -s scripts/argo/package-lock.json "$NPM_DIR/package-lock.json"; }; then
  rm -rf "$NPM_DIR"
  mkdir -p "$NPM_DIR"
  cp scripts/argo/package.json scripts/argo/package-lock.json scripts/argo/validate-analysis-template.mjs "$NPM_DIR/"
  npm ci --prefix "$NPM_DIR" --silent --no-audit --no-fund --ignore-scripts
fi
cp scripts/argo/validate-analysis-template.mjs "$NPM_DIR/"
VENV=build/deploy-tools/argo
if ! { [ -f "$VENV/.pins" ] && [ "$(cat "$VENV/.pins")" = "$HERA_PINS" ]; }; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install --quiet --disable-pip-version-check $HERA_PINS
  echo "$HERA_PINS" > "$VENV/.pins"
fi
echo "argo schemas ready"
