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
AWS_RESOURCE = {"": "RagwarrantJobDefinition", "-array": "RagwarrantArrayJobDefinition"}


def _aws(form: str = "") -> dict[str, Any]:
    """The AWS template, its job definition of ``form`` first among the resources."""
    text = (CLOUD / "aws-batch" / "job-definition.yaml").read_text()
    doc = dict(yaml.load(text, _CfnLoader))
    doc["Resources"]["RagwarrantJobDefinition"] = doc["Resources"][AWS_RESOURCE[form]]
    return doc


def _gcp_batch(form: str = "") -> dict[str, Any]:
    return dict(json.loads((CLOUD / "gcp-batch" / f"job{form}.json").read_text()))


def _cloud_run(form: str = "") -> dict[str, Any]:
    return dict(yaml.safe_load((CLOUD / "gcp-cloud-run" / f"job{form}.yaml").read_text()))


def _azure(form: str = "") -> dict[str, Any]:
    path = CLOUD / "azure-container-apps" / f"job{form}.yaml"
    return dict(yaml.safe_load(path.read_text()))


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
        # "Tasks per task group: 100,000"; "Parallel tasks per job: 5,000".
        *_in("taskCount", group["taskCount"], 1, 100_000, "https://cloud.google.com/batch/quotas"),
        *_in(
            "parallelism", group["parallelism"], 1, 5_000, "https://cloud.google.com/batch/quotas"
        ),
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
            "parallelism",
            execution["parallelism"],
            0,
            execution["taskCount"],
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


PROVIDERS: dict[
    str, tuple[Callable[[str], dict[str, Any]], Callable[[dict[str, Any]], list[str]]]
] = {
    "aws-batch": (_aws, aws_batch_violations),
    "gcp-batch": (_gcp_batch, gcp_batch_violations),
    "gcp-cloud-run": (_cloud_run, cloud_run_violations),
    "azure-container-apps": (_azure, azure_violations),
}
# "": one run per submission; "-array": one run per contract directory /in/<index>/.
FORMS = ("", "-array")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_template_is_within_documented_bounds(provider: str, form: str) -> None:
    """Each shipped template, single and array form, passes its provider's documented bounds."""
    load, violations = PROVIDERS[provider]
    assert violations(load(form)) == []


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
    doc = copy.deepcopy(load(""))
    _plant(provider, doc)
    found = violations(doc)
    assert len(found) == 1, found
    if provider == "aws-batch":
        assert found[0].startswith("RetryStrategy.Attempts = 11")


def _commands(form: str = "") -> dict[str, list[str]]:
    """The job's argument list per template: no shell, the image's entrypoint (ragwarrant)."""
    aws = _aws(form)["Resources"]["RagwarrantJobDefinition"]["Properties"]["ContainerProperties"]
    gcp = _gcp_batch(form)["taskGroups"][0]["taskSpec"]["runnables"][0]["container"]
    run = _cloud_run(form)["spec"]["template"]["spec"]["template"]["spec"]["containers"][0]
    aca = _azure(form)["properties"]["template"]["containers"][0]
    assert "entrypoint" not in gcp and "command" not in run and "command" not in aca
    return {
        "aws-batch": list(aws["Command"]),
        "gcp-batch": list(gcp["commands"]),
        "gcp-cloud-run": list(run["args"]),
        "azure-container-apps": list(aca["args"]),
    }


# The platform's own variables, as each provider documents them: the run prefix, then (array
# form) the index. AWS Batch: AWS_BATCH_JOB_ID, AWS_BATCH_JOB_ARRAY_INDEX (child jobs only;
# docs.aws.amazon.com/batch/latest/userguide/job_env_vars.html). Google Batch: BATCH_JOB_UID,
# BATCH_TASK_INDEX (TaskGroup reference). Cloud Run: CLOUD_RUN_EXECUTION, CLOUD_RUN_TASK_INDEX
# (container contract). Container Apps: CONTAINER_APP_JOB_EXECUTION_NAME; it sets no replica
# index, so the array form reads RAGWARRANT_INDEX, given at each start.
PLATFORM = {
    "aws-batch": ("/out/${AWS_BATCH_JOB_ID}", "AWS_BATCH_JOB_ARRAY_INDEX"),
    "gcp-batch": ("/out/${BATCH_JOB_UID}/${BATCH_TASK_INDEX}", "BATCH_TASK_INDEX"),
    "gcp-cloud-run": (
        "/out/${CLOUD_RUN_EXECUTION}/${CLOUD_RUN_TASK_INDEX}",
        "CLOUD_RUN_TASK_INDEX",
    ),
    "azure-container-apps": ("/out/${CONTAINER_APP_JOB_EXECUTION_NAME}", "RAGWARRANT_INDEX"),
}


@pytest.mark.parametrize("form", FORMS)
def test_every_template_writes_a_per_run_prefix_and_appends_to_the_ledger(form: str) -> None:
    """No template writes bare /out or needs a user parameter: each output path is the
    platform's own execution id (and task index), the array form reads /in/<index>/, and each
    passes --ledger /ledger/ledger.jsonl."""
    for name, argv in _commands(form).items():
        prefix, index = PLATFORM[name]
        assert argv[:2] == ["run", "--input"] and argv[3] == "--output", name
        assert argv[2] == ("/in/${" + index + "}" if form else "/in"), (name, argv)
        assert argv[4] == prefix, (name, argv)
        assert argv[5:7] == LEDGER_ARG, (name, argv)
    assert "Parameters" not in _aws(form)["Resources"]["RagwarrantJobDefinition"]["Properties"]


def _platform_env(provider: str, index: int) -> dict[str, str]:
    """What the provider sets in the container of task (or child, or execution) ``index``."""
    return {
        "aws-batch": {"AWS_BATCH_JOB_ID": f"4a1b:{index}", "AWS_BATCH_JOB_ARRAY_INDEX": str(index)},
        "gcp-batch": {"BATCH_JOB_UID": "j-7f2", "BATCH_TASK_INDEX": str(index)},
        "gcp-cloud-run": {"CLOUD_RUN_EXECUTION": "e-9", "CLOUD_RUN_TASK_INDEX": str(index)},
        "azure-container-apps": {
            "CONTAINER_APP_JOB_EXECUTION_NAME": f"x-{index}",
            "RAGWARRANT_INDEX": str(index),
        },
    }[provider]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_array_form_gives_each_index_its_own_input_and_output(provider: str) -> None:
    """Expanded as the job expands them, 3 tasks read /in/0..2/ and write 3 distinct outputs;
    without the platform's variables the job refuses (exit 64) instead of writing bare /out."""
    from ragwarrant.commands.run import expand_variables
    from ragwarrant.errors import UsageError

    argv = _commands("-array")[provider]
    paths = [
        (expand_variables(argv[2], env), expand_variables(argv[4], env))
        for env in (_platform_env(provider, i) for i in range(3))
    ]
    assert [str(p[0]) for p in paths] == ["/in/0", "/in/1", "/in/2"]
    assert len({p[1] for p in paths}) == 3 and all(p[1].parent != p[1] for p in paths)
    for path in (argv[2], argv[4]):
        with pytest.raises(UsageError, match="unset or empty"):
            expand_variables(path, {})


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
