#!/usr/bin/env bash
# Extracts the JUnit XML schema the junit.xml tests validate against (Jenkins xunit-plugin
# junit-10.xsd, MIT) into build/junit/, from a package registry only: pytest's source
# distribution on PyPI ships the same file as testing/example_scripts/junit-10.xsd (pytest
# validates its own junit output against it). Pinned by the sdist's and the file's sha256
# (tests/data/junit/SOURCE.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
PYTEST_SDIST=pytest-8.4.2.tar.gz
SDIST_SHA256=86c0d0b93306b961d58d62a4db4879f27fe25513d4b969df351abdddb3c30e01
MEMBER=pytest-8.4.2/testing/example_scripts/junit-10.xsd
SHA256=a1a816f58d1bf95ebabf371994df0b9246dee66ea9572fbec4f9296f1b2c0ff6
OUT=build/junit/junit-10.xsd
if [ -f "$OUT" ] && echo "$SHA256  $OUT" | sha256sum -c --quiet - 2>/dev/null; then exit 0; fi
mkdir -p build/junit/sdist
PIP=("$PYTHON" -m pip)
if ! "${PIP[@]}" --version >/dev/null 2>&1; then  # a Python without pip: a throwaway venv has one
  "$PYTHON" -m venv build/junit/venv
  PIP=(build/junit/venv/bin/python -m pip)
fi
"${PIP[@]}" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
  -d build/junit/sdist "pytest==8.4.2"
echo "$SDIST_SHA256  build/junit/sdist/$PYTEST_SDIST" | sha256sum -c --quiet -
tar -xzf "build/junit/sdist/$PYTEST_SDIST" -O "$MEMBER" > "$OUT.tmp"
echo "$SHA256  $OUT.tmp" | sha256sum -c --quiet -
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT"
