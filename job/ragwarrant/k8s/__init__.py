"""Kubernetes: the job's manifests and their submission, built with the official client.

``options`` holds what to render (``RenderOptions``) and the checks that refuse what cannot run;
``inputs`` reads and checks the contracts and the files they name (or, for an input volume, the
contract directories on it); ``render`` turns them into hardened V1 objects (Job, CronJob,
Indexed Job, ConfigMaps, NetworkPolicy, ledger claim); ``argo`` into an Argo Workflow with the
Indexed Job's pod; ``submit`` creates them in a cluster and waits for the decision.
``ragwarrant k8s`` is the command (``commands/k8s.py``); the ``kubernetes`` package is the
optional extra ``k8s``. This face exports what the scripts, benchmarks and tests use.
"""

from __future__ import annotations

from ragwarrant.k8s.argo import build_argo_manifests
from ragwarrant.k8s.options import (
    DEFAULT_PARALLELISM,
    FAIL_JOB_EXIT_CODES,
    MIN_KUBERNETES_VERSION,
    RETRIED_EXIT_CODES,
    InputFile,
    RenderOptions,
    WorkloadKind,
    config_key,
)
from ragwarrant.k8s.render import build_manifests, manifests_to_yaml

__all__ = [
    "DEFAULT_PARALLELISM",
    "FAIL_JOB_EXIT_CODES",
    "MIN_KUBERNETES_VERSION",
    "RETRIED_EXIT_CODES",
    "InputFile",
    "RenderOptions",
    "WorkloadKind",
    "build_argo_manifests",
    "build_manifests",
    "config_key",
    "manifests_to_yaml",
]
