#!/usr/bin/env bash
# Downloads what tests/deploy/test_argo.py validates deploy/argo against, pinned, into build/:
#   build/argo/analysis-template-crd.yaml  Argo Rollouts AnalysisTemplate CRD (Apache-2.0)
#   build/deploy-tools/argo/               a venv with Hera (Argo Workflows pydantic models)
# Neither is committed: they are third-party. Needs the network (GitHub, PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
ROLLOUTS_COMMIT=9f8d111d8f8e3e88b6d7f8bbdf62fd3cd863ef9d
CRD_SHA256=5e25e2bdd3851b75707732207e4d79ddd4ebdb69f95cf058cf539f0186678948
HERA_PINS="hera==7.1.0 PyYAML==6.0.3"
OUT=build/argo/analysis-template-crd.yaml
if ! { [ -f "$OUT" ] && echo "$CRD_SHA256  $OUT" | sha256sum -c --quiet - 2>/dev/null; }; then
  mkdir -p build/argo
  curl -fsSL --retry 3 -o "$OUT.tmp" \
    "https://raw.githubusercontent.com/argoproj/argo-rollouts/$ROLLOUTS_COMMIT/manifests/crds/analysis-template-crd.yaml"
  echo "$CRD_SHA256  $OUT.tmp" | sha256sum -c --quiet -
  mv "$OUT.tmp" "$OUT"
fi
VENV=build/deploy-tools/argo
if ! { [ -f "$VENV/.pins" ] && [ "$(cat "$VENV/.pins")" = "$HERA_PINS" ]; }; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install --quiet --disable-pip-version-check $HERA_PINS
  echo "$HERA_PINS" > "$VENV/.pins"
fi
echo "argo schemas ready"
