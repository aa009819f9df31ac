"""Every cloud template stays inside its provider's documented bounds, mounts the evidence ledger
and writes each run under its own output prefix.

The bounds are the providers' documented limits, cited beside each check. cfn-lint does not
check AWS Batch's retry range (a template with `Attempts: 11` passes it), so each bound is checked
here, and a planted violation per provider shows the check bites.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from .conftest import ROOT

CLOUD = ROOT / "deploy" / "cloud"
LEDGER_ARG = ["--ledger", "/ledger/ledger.jsonl"]


class _CfnLoader(yaml.SafeLoader):
    pass


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: f"!{suffix}")


def _aws() -> dict[str, Any]:
    text = (CLOUD / "aws-batch" / "job-definition.yaml").read_text()
    return dict(yaml.load(text, _CfnLoader))


def _gcp_batch() -> dict[str, Any]:
    return dict(json.loads((CLOUD / "gcp-batch" / "job.json").read_text()))


def _cloud_run() -> dict[str, Any]:
    return dict(yaml.safe_load((CLOUD / "gcp-cloud-run" / "job.yaml").read_text()))


def _azure() -> dict[str, Any]:
    return dict(yaml.safe_load((CLOUD / "azure-container-apps" / "job.yaml").read_text()))


def _in(name: str, value: Any, low: float, high: float, source: str) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        return [f"{name} = {value!r}, documented range [{low}, {high}] ({source})"]
    return []


def _quantity_gib(text: str) -> float:
    """Kubernetes-style memory quantity (Mi, Gi) in GiB."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(Mi|Gi)", str(text))
    assert found, text
    return float(found[1]) / (1024 if found[2] == "Mi" else 1)


def aws_batch_violations(template: dict[str, Any]) -> list[str]:
    """AWS Batch job definition bounds."""
    props = template["Resources"]["RagwarrantJobDefinition"]["Properties"]
    retry, container = props["RetryStrategy"], props["ContainerProperties"]
    resources = {r["Type"]: int(r["Value"]) for r in container["ResourceRequirements"]}
    api = "https://docs.aws.amazon.com/batch/latest/APIReference"
    return [
        # "You can specify between 1 and 10 attempts."
        *_in("RetryStrategy.Attempts", retry["Attempts"], 1, 10, f"{api}/API_RetryStrategy.html"),
        # "Array of up to 5 objects"
        *_in(
            "len(EvaluateOnExit)",
            len(retry["EvaluateOnExit"]),
            0,
            5,
            f"{api}/API_RetryStrategy.html",
        ),  # fmt: skip
        # "The minimum value for the timeout is 60 seconds."
        *_in(
            "Timeout.AttemptDurationSeconds",
            props["Timeout"]["AttemptDurationSeconds"],
            60,
            float("inf"),
            f"{api}/API_JobTimeout.html",
        ),  # fmt: skip
        # EC2 resources: "at least one vCPU"; memory "at least 4 MiB".
        *_in("VCPU", resources["VCPU"], 1, 192, f"{api}/API_ResourceRequirement.html"),
        *_in(
            "MEMORY (MiB)",
            resources["MEMORY"],
            4,
            float("inf"),
            f"{api}/API_ResourceRequirement.html",
        ),  # fmt: skip
    ]


def gcp_batch_violations(job: dict[str, Any]) -> list[str]:
    """Google Batch job bounds (REST reference of projects.locations.jobs, TaskSpec)."""
    src = "https://cloud.google.com/batch/docs/reference/rest/v1/projects.locations.jobs"
    (group,) = job["taskGroups"]  # "Only one TaskGroup is supported now."
    spec = group["taskSpec"]
    duration = re.fullmatch(r"(\d+)s", spec["maxRunDuration"])
    return [
        # maxRetryCount: "The valid value range is [0, 10]."
        *_in("maxRetryCount", spec["maxRetryCount"], 0, 10, src),
        # lifecyclePolicies: "Currently we only support one lifecycle policy."
        *_in("len(lifecyclePolicies)", len(spec["lifecyclePolicies"]), 0, 1, src),
        *_in(
            "maxRunDuration (s)",
            int(duration[1]) if duration else None,
            1,
            14 * 86400,
            "https://cloud.google.com/batch/quotas#max-job-duration",
        ),  # fmt: skip
        *_in("parallelism", group["parallelism"], 1, group["taskCount"], src),
    ]


def cloud_run_violations(job: dict[str, Any]) -> list[str]:
    """Cloud Run Job bounds."""
    execution = job["spec"]["template"]["spec"]
    task = execution["template"]["spec"]
    (container,) = task["containers"]
    limits = container["resources"]["limits"]
    return [
        # "Specify the number of retries using an integer from 0 to 10."
        *_in(
            "maxRetries",
            task["maxRetries"],
            0,
            10,
            "https://cloud.google.com/run/docs/configuring/max-retries",
        ),  # fmt: skip
        # "up to 168 hours (7 days)"
        *_in(
            "timeoutSeconds",
            task["timeoutSeconds"],
            1,
            168 * 3600,
            "https://cloud.google.com/run/docs/configuring/task-timeout",
        ),  # fmt: skip
        # "up to 10,000 tasks"
        *_in(
            "taskCount",
            execution["taskCount"],
            1,
            10_000,
            "https://cloud.google.com/run/docs/create-jobs",
        ),  # fmt: skip
        *_in(
            "cpu",
            float(limits["cpu"]),
            0.08,
            8,
            "https://cloud.google.com/run/docs/configuring/jobs/cpu",
        ),  # fmt: skip
        *_in(
            "memory (GiB)",
            _quantity_gib(limits["memory"]),
            0.5,
            32,
            "https://cloud.google.com/run/docs/configuring/jobs/memory-limits",
        ),  # fmt: skip
    ]


def azure_violations(job: dict[str, Any]) -> list[str]:
    """Azure Container Apps Job bounds (Consumption workload profile)."""
    config = job["properties"]["configuration"]
    (container,) = job["properties"]["template"]["containers"]
    cpu, memory = (
        float(container["resources"]["cpu"]),
        _quantity_gib(container["resources"]["memory"]),
    )
    quotas = "https://learn.microsoft.com/azure/container-apps/quotas"
    profiles = "https://learn.microsoft.com/azure/container-apps/workload-profiles-overview"
    problems = [
        *_in(
            "replicaRetryLimit",
            config["replicaRetryLimit"],
            0,
            float("inf"),
            "https://learn.microsoft.com/azure/container-apps/jobs",
        ),  # fmt: skip
        *_in(
            "replicaTimeout",
            config["replicaTimeout"],
            1,
            float("inf"),
            "https://learn.microsoft.com/azure/container-apps/jobs",
        ),  # fmt: skip
        # Consumption workload profile: at most 4 cores per replica.
        *_in("cpu", cpu, 0.25, 4, quotas),
    ]
    # Consumption: CPU in steps of 0.25 with memory twice the CPU (0.25/0.5Gi ... 4/8Gi).
    if cpu * 4 != int(cpu * 4) or memory != 2 * cpu:
        problems.append(f"cpu {cpu} / memory {memory} GiB is not a Consumption size ({profiles})")
    return problems


PROVIDERS: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], list[str]]]] = {
    "aws-batch": (_aws, aws_batch_violations),
    "gcp-batch": (_gcp_batch, gcp_batch_violations),
    "gcp-cloud-run": (_cloud_run, cloud_run_violations),
    "azure-container-apps": (_azure, azure_violations),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_template_is_within_documented_bounds(provider: str) -> None:
    """Each shipped template passes its provider's documented bounds."""
    load, violations = PROVIDERS[provider]
    assert violations(load()) == []


def _plant(provider: str, doc: dict[str, Any]) -> None:
    """Put one value just outside a documented bound."""
    if provider == "aws-batch":
        doc["Resources"]["RagwarrantJobDefinition"]["Properties"]["RetryStrategy"]["Attempts"] = 11
    elif provider == "gcp-batch":
        doc["taskGroups"][0]["taskSpec"]["maxRetryCount"] = 11
    elif provider == "gcp-cloud-run":
        doc["spec"]["template"]["spec"]["template"]["spec"]["maxRetries"] = 11
    else:
        doc["properties"]["template"]["containers"][0]["resources"]["memory"] = "3Gi"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_planted_violation_fails(provider: str) -> None:
    """A value outside a documented bound (AWS: `Attempts: 11`, the issue's plant) is reported."""
    load, violations = PROVIDERS[provider]
    doc = copy.deepcopy(load())
    _plant(provider, doc)
    found = violations(doc)
    assert len(found) == 1, found
    if provider == "aws-batch":
        assert found[0].startswith("RetryStrategy.Attempts = 11")


def _commands() -> dict[str, list[str]]:
    """The job's argument list per template (a shell wrapper's `exec ...` line split)."""
    aws = _aws()["Resources"]["RagwarrantJobDefinition"]["Properties"]["ContainerProperties"]
    gcp = _gcp_batch()["taskGroups"][0]["taskSpec"]["runnables"][0]["container"]
    run = _cloud_run()["spec"]["template"]["spec"]["template"]["spec"]["containers"][0]
    aca = _azure()["properties"]["template"]["containers"][0]
    shell = {
        "gcp-batch": (gcp["entrypoint"], gcp["commands"]),
        "gcp-cloud-run": (run["command"][0], run["args"]),
        "azure-container-apps": (aca["command"][0], aca["args"]),
    }
    out = {"aws-batch": list(aws["Command"])}
    for name, (entry, argv) in shell.items():
        assert entry == "/bin/sh" and argv[0] == "-c" and len(argv) == 2, name
        words = argv[1].replace('"', "").split()
        assert words[:2] == ["exec", "ragwarrant"], f"{name}: the shell must exec the job"
        out[name] = words[2:]
    return out


def test_every_template_writes_a_per_run_prefix_and_appends_to_the_ledger() -> None:
    """No template writes bare /out: each output path has a per-run part (AWS Ref::runId, Batch
    job uid and task index, Cloud Run execution and task index, Container Apps execution name),
    and each passes --ledger /ledger/ledger.jsonl."""
    per_run = {
        "aws-batch": "/out/Ref::runId",
        "gcp-batch": "/out/${BATCH_JOB_UID}/${BATCH_TASK_INDEX}",
        "gcp-cloud-run": "/out/${CLOUD_RUN_EXECUTION}/${CLOUD_RUN_TASK_INDEX}",
        "azure-container-apps": "/out/${CONTAINER_APP_JOB_EXECUTION_NAME}",
    }
    for name, argv in _commands().items():
        assert argv[:4] == ["run", "--input", "/in", "--output"], name
        assert argv[4] == per_run[name], (name, argv)
        assert argv[5:7] == LEDGER_ARG, (name, argv)
    params = _aws()["Resources"]["RagwarrantJobDefinition"]["Properties"]["Parameters"]
    assert "runId" in params, "Ref::runId needs a default in Parameters"


def test_every_template_mounts_a_writable_ledger_volume_with_locks() -> None:
    """/ledger is a writable mount of storage with file locks (EFS, Filestore NFS, NFS Azure
    Files), never the object-store FUSE mounts /in and /out use."""
    aws = _aws()["Resources"]["RagwarrantJobDefinition"]["Properties"]["ContainerProperties"]
    mount = next(m for m in aws["MountPoints"] if m["ContainerPath"] == "/ledger")
    volume = next(v for v in aws["Volumes"] if v["Name"] == mount["SourceVolume"])
    assert mount["ReadOnly"] is False and "EfsVolumeConfiguration" in volume
    gcp = _gcp_batch()["taskGroups"][0]["taskSpec"]
    assert "/mnt/disks/ledger:/ledger:rw" in gcp["runnables"][0]["container"]["volumes"]
    assert any("nfs" in v and v["mountPath"] == "/mnt/disks/ledger" for v in gcp["volumes"])
    task = _cloud_run()["spec"]["template"]["spec"]["template"]["spec"]
    (run_mount,) = [m for m in task["containers"][0]["volumeMounts"] if m["mountPath"] == "/ledger"]
    run_volume = next(v for v in task["volumes"] if v["name"] == run_mount["name"])
    assert run_volume["nfs"]["readOnly"] is False
    template = _azure()["properties"]["template"]
    (aca_mount,) = [
        m for m in template["containers"][0]["volumeMounts"] if m["mountPath"] == "/ledger"
    ]
    aca_volume = next(v for v in template["volumes"] if v["name"] == aca_mount["volumeName"])
    assert aca_volume["storageType"] == "NfsAzureFile"
