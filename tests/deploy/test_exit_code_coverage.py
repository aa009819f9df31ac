"""Every deployment's retry rules classify every published exit code (contracts/exit-codes.md).

The table's `retry?` column is the single source: a decision (10, 11, 12) or a configuration error
is final, since retrying cannot change it; a code marked `yes` (70, internal) may be retried. Each
test maps each code of the table through the deployment's own rule semantics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ragwarrant.exit_codes import ExitCode
from ragwarrant.k8s import FAIL_JOB_EXIT_CODES, RETRIED_EXIT_CODES

from .conftest import (
    OVERLAYS,
    ROOT,
    exit_code_rows,
    exit_code_table,
    job_spec,
    load_docs,
    other_table_codes,
    workload,
)

CLOUD = ROOT / "deploy" / "cloud"


def _classify(code: int) -> str:
    if code == 0:
        return "success"
    return "retry" if exit_code_rows()[code] else "final"


def test_table_matches_exit_code_enum() -> None:
    """The `run` table lists ExitCode values only; an ExitCode missing from it is a verify code."""
    run_codes = set(exit_code_table())
    enum_codes = {int(c) for c in ExitCode}
    assert run_codes <= enum_codes
    assert enum_codes - run_codes <= other_table_codes(), enum_codes - run_codes
    assert {0, 10, 11, 12} <= run_codes


def test_render_constants_partition_the_table() -> None:
    """FAIL_JOB_EXIT_CODES and RETRIED_EXIT_CODES split every failing code of the table."""
    table = set(exit_code_table())
    assert set(FAIL_JOB_EXIT_CODES) == {c for c in table if _classify(c) == "final"}
    assert set(RETRIED_EXIT_CODES) == {c for c in table if _classify(c) == "retry"}


def _pod_failure_action(spec: dict[str, Any], code: int) -> str:
    """Return what a Job's podFailurePolicy does with a container exit code (first match wins)."""
    for rule in spec["podFailurePolicy"]["rules"]:
        req = rule.get("onExitCodes")
        if req is None:
            continue
        assert req["containerName"] == "ragwarrant"
        hit = code in req["values"]
        if (req["operator"] == "In") == hit:
            return rule["action"]
    return "Count"  # no rule matched: counts toward backoffLimit


def _check_pod_failure_policy(spec: dict[str, Any], indexed: bool) -> None:
    final_action = "FailIndex" if indexed else "FailJob"
    for code in exit_code_table():
        if code == 0:
            continue
        action = _pod_failure_action(spec, code)
        expected = final_action if _classify(code) == "final" else "Count"
        assert action == expected, f"exit code {code}: {action}, expected {expected}"
    patterns = [p for r in spec["podFailurePolicy"]["rules"] for p in r.get("onPodConditions", [])]
    assert {"type": "DisruptionTarget", "status": "True"} in patterns
    ignore = [r for r in spec["podFailurePolicy"]["rules"] if r.get("onPodConditions")]
    assert all(r["action"] == "Ignore" for r in ignore)
    limit = spec.get("backoffLimitPerIndex") if indexed else spec.get("backoffLimit")
    assert limit is not None and limit >= 1, "retryable codes need a backoff limit above 0"


def test_kustomize_pod_failure_policy_covers_every_code(kustomized: dict[str, Path]) -> None:
    """Each overlay's podFailurePolicy ends the Job (or index) on every final code, only those."""
    for overlay in OVERLAYS:
        spec = job_spec(workload(load_docs(kustomized[overlay])))
        _check_pod_failure_policy(spec, indexed=overlay == "indexed")


def test_rendered_pod_failure_policy_covers_every_code(rendered: dict[str, Path]) -> None:
    """`ragwarrant k8s render` writes the same podFailurePolicy semantics for every kind."""
    for kind, path in rendered.items():
        spec = job_spec(workload(load_docs(path)))
        _check_pod_failure_policy(spec, indexed=kind == "indexed")


def _aws_matches(pattern: str, code: int) -> bool:
    """AWS Batch onExitCode: decimal digits, optionally ending in '*' (prefix match)."""
    assert pattern.rstrip("*").isdigit() and pattern.count("*") <= 1, pattern
    text = str(code)
    return text.startswith(pattern[:-1]) if pattern.endswith("*") else text == pattern


def _aws_action(rules: list[dict[str, str]], code: int) -> str:
    for rule in rules:
        if "OnExitCode" in rule and _aws_matches(rule["OnExitCode"], code):
            return rule["Action"].upper()
    return "RETRY"  # AWS Batch retries a failure that matches no rule


class _CfnLoader(yaml.SafeLoader):
    pass


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: f"!{suffix}")


def test_aws_batch_retry_strategy_covers_every_code() -> None:
    """AWS Batch EXITs on each final code and retries the others (an unmatched code is retried)."""
    template = yaml.load((CLOUD / "aws-batch" / "job-definition.yaml").read_text(), _CfnLoader)
    strategy = template["Resources"]["RagwarrantJobDefinition"]["Properties"]["RetryStrategy"]
    assert strategy["Attempts"] >= 2
    assert len(strategy["EvaluateOnExit"]) <= 5, "AWS Batch accepts at most 5 rules"
    for code in exit_code_table():
        if code == 0:
            continue
        expected = "EXIT" if _classify(code) == "final" else "RETRY"
        assert _aws_action(strategy["EvaluateOnExit"], code) == expected, code
    # SIGTERM (143: eviction, Spot reclaim) stays retryable despite the "1*" wildcard.
    assert _aws_action(strategy["EvaluateOnExit"], 143) == "RETRY"


def test_google_batch_lifecycle_policy_covers_every_code() -> None:
    """Google Batch fails the task at once on each final code; others use maxRetryCount."""
    job = json.loads((CLOUD / "gcp-batch" / "job.json").read_text())
    spec = job["taskGroups"][0]["taskSpec"]
    assert spec["maxRetryCount"] >= 1
    fail = {
        code
        for p in spec["lifecyclePolicies"]
        if p["action"] == "FAIL_TASK"
        for code in p["actionCondition"]["exitCodes"]
    }
    for code in exit_code_table():
        if code:
            assert (code in fail) == (_classify(code) == "final"), code


def test_cloud_run_and_azure_never_retry() -> None:
    """Cloud Run Job (maxRetries 0) and Azure Container Apps Job (replicaRetryLimit 0): no retry."""
    run = yaml.safe_load((CLOUD / "gcp-cloud-run" / "job.yaml").read_text())
    assert run["spec"]["template"]["spec"]["template"]["spec"]["maxRetries"] == 0
    aca = yaml.safe_load((CLOUD / "azure-container-apps" / "job.yaml").read_text())
    assert aca["properties"]["configuration"]["replicaRetryLimit"] == 0


def test_aws_rule_matcher_is_a_prefix_glob() -> None:
    """The AWS matcher used above follows AWS's documented semantics ('6*' matches 64, not 164)."""
    assert _aws_matches("6*", 64) and _aws_matches("6*", 6) and not _aws_matches("6*", 164)
    assert _aws_matches("10", 10) and not _aws_matches("10", 100)
