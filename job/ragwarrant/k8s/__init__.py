"""Kubernetes: the job's manifests and their submission, built with the official client.

``inputs`` reads and checks the contracts and the files they name (or, for an input volume, the
contract directories on it); ``render`` turns them into hardened V1 objects (Job, CronJob,
Indexed Job, ConfigMaps, NetworkPolicy, ledger claim); ``argo`` into an Argo Workflow with the
Indexed Job's pod; ``submit`` creates them in a cluster and waits for the decision.
``ragwarrant k8s`` is the command (``commands/k8s.py``); the ``kubernetes`` package is the
optional extra ``k8s``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwarrant.k8s.argo import ARGO_API_VERSION, build_argo_manifests
from ragwarrant.k8s.render import (
    CONFIGMAP_LIMIT_BYTES,
    CONTAINER_NAME,
    DEFAULT_PARALLELISM,
    FAIL_JOB_EXIT_CODES,
    JOB_UID,
    LEDGER_FILE,
    LEDGER_MOUNT,
    MAX_INDEXES,
    MIN_KUBERNETES_VERSION,
    RETRIED_EXIT_CODES,
    RUN_PREFIX,
    SIGNING_KEY_MODE,
    SIGNING_MOUNT,
    Engine,
    RenderOptions,
    WorkloadKind,
    build_manifests,
    check_image,
    check_schedule,
    config_key,
    job_deadline_seconds,
    manifests_to_yaml,
    require_kubernetes,
)
from ragwarrant.k8s.submit import PodOutcome, SubmitResult, submit

if TYPE_CHECKING:
    from ragwarrant.k8s.inputs import (
        InputFile,
        RenderInputs,
        collect_input_files,
        load_inputs,
        scan_input_root,
    )

# ``inputs`` (and with it the contract loader and pydantic) is loaded on first use (PEP 562), so
# that ``ragwarrant --help`` can register ``k8s`` without it.
_FROM_INPUTS = frozenset(
    {"InputFile", "RenderInputs", "collect_input_files", "load_inputs", "scan_input_root"}
)


def __getattr__(name: str) -> Any:
    """Load the names of ``ragwarrant.k8s.inputs`` on first use."""
    if name not in _FROM_INPUTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ragwarrant.k8s import inputs

    return getattr(inputs, name)


__all__ = [
    "ARGO_API_VERSION",
    "CONFIGMAP_LIMIT_BYTES",
    "CONTAINER_NAME",
    "DEFAULT_PARALLELISM",
    "FAIL_JOB_EXIT_CODES",
    "JOB_UID",
    "LEDGER_FILE",
    "LEDGER_MOUNT",
    "MAX_INDEXES",
    "MIN_KUBERNETES_VERSION",
    "RETRIED_EXIT_CODES",
    "RUN_PREFIX",
    "SIGNING_KEY_MODE",
    "SIGNING_MOUNT",
    "Engine",
    "InputFile",
    "PodOutcome",
    "RenderInputs",
    "RenderOptions",
    "SubmitResult",
    "WorkloadKind",
    "build_argo_manifests",
    "build_manifests",
    "check_image",
    "check_schedule",
    "collect_input_files",
    "config_key",
    "job_deadline_seconds",
    "load_inputs",
    "manifests_to_yaml",
    "require_kubernetes",
    "scan_input_root",
    "submit",
]
