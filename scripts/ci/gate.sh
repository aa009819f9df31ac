#!/usr/bin/env bash
# Runs the ragwarrant job for CI and maps its class to the step outcome. Used by action.yml (GitHub)
# and ci/gitlab/ragwarrant.gitlab-ci.yml; runs the same way on a laptop.
#
# Environment (all optional except the paths):
#   RAGWARRANT_INPUT          input directory (contract.yaml + evidence)            [required]
#   RAGWARRANT_OUTPUT         output directory                                        [required]
#   RAGWARRANT_IMAGE          run this container image (docker) instead of the CLI
#   RAGWARRANT_CMD            the CLI (default: ragwarrant)
#   RAGWARRANT_INCONCLUSIVE   pass | fail: the outcome of INCONCLUSIVE (exit 11)   [default fail]
#   GITHUB_STEP_SUMMARY       when set, receives the decision (report.md) as Markdown
#   GITHUB_OUTPUT             when set, receives class=, exit-code=, outcome=
# Exit status: 0 when the outcome is pass; otherwise the job's own exit code (10, 11, 12 or an
# error code from contracts/exit-codes.md), so GitLab's allow_failure: exit_codes can key on it.
set -uo pipefail
: "${RAGWARRANT_INPUT:?set RAGWARRANT_INPUT}" "${RAGWARRANT_OUTPUT:?set RAGWARRANT_OUTPUT}"
inconclusive="${RAGWARRANT_INCONCLUSIVE:-fail}"
case "$inconclusive" in pass|fail) ;; *) echo "RAGWARRANT_INCONCLUSIVE must be pass or fail" >&2; exit 64;; esac
mkdir -p "$RAGWARRANT_OUTPUT"

if [ -n "${RAGWARRANT_IMAGE:-}" ]; then
  docker run --rm --network none --user "$(id -u):$(id -g)" \
    -v "$(cd "$RAGWARRANT_INPUT" && pwd):/in:ro" -v "$(cd "$RAGWARRANT_OUTPUT" && pwd):/out" \
    "$RAGWARRANT_IMAGE" run --input /in --output /out >&2
  code=$?
else
  ${RAGWARRANT_CMD:-ragwarrant} run --input "$RAGWARRANT_INPUT" --output "$RAGWARRANT_OUTPUT" >&2
  code=$?
fi

case "$code" in
  0) class=PROMOTE; outcome=pass ;;
  10) class=REJECT; outcome=fail ;;
  11) class=INCONCLUSIVE; outcome="$inconclusive" ;;
  12) class=BLOCK; outcome=fail ;;
  *) class=ERROR; outcome=fail ;;
esac

line="ragwarrant: $class (exit $code): outcome $outcome"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  { echo "class=$class"; echo "exit-code=$code"; echo "outcome=$outcome"; } >> "$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### ragwarrant: $class (exit $code) — step $outcome"
    echo
    if [ -f "$RAGWARRANT_OUTPUT/report.md" ]; then
      sed '1{/^# /d}' "$RAGWARRANT_OUTPUT/report.md"
    else
      echo "No report.md was written: see the job log."
    fi
  } >> "$GITHUB_STEP_SUMMARY"
fi
echo "$line"
if [ "$outcome" = pass ]; then exit 0; fi
exit "$code"
