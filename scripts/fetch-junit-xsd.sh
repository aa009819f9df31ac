#!/usr/bin/env bash
# Downloads the JUnit XML schema the junit.xml tests validate against (Jenkins xunit-plugin
# junit-10.xsd, MIT) into build/junit/, pinned by commit and sha256 (tests/data/junit/SOURCE.md).
set -euo pipefail
cd "$(dirname "$0")/.."
COMMIT=ae25da5089d4f94ac6c4669bf736e4d416cc4665
SHA256=a1a816f58d1bf95ebabf371994df0b9246dee66ea9572fbec4f9296f1b2c0ff6
URL="https://raw.githubusercontent.com/jenkinsci/xunit-plugin/$COMMIT/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd"
OUT=build/junit/junit-10.xsd
if [ -f "$OUT" ] && echo "$SHA256  $OUT" | sha256sum -c --quiet - 2>/dev/null; then exit 0; fi
mkdir -p "$(dirname "$OUT")"
curl -fsSL --retry 3 -o "$OUT.tmp" "$URL"
echo "$SHA256  $OUT.tmp" | sha256sum -c --quiet -
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT"
