"""``ragwarrant k8s submit``: create the rendered objects in a cluster and wait for the decision.

Uses the official ``kubernetes`` client against the current kubeconfig context. With ``wait``,
polls the Job until it completes or fails, reads each pod's container exit code and termination
message (the job's one-line decision summary), and returns the exit code. Our tests exercise it
against a loopback HTTP server that replays Kubernetes API responses, never against a live cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragwarrant.errors import InternalError, UsageError
from ragwarrant.k8s.render import CONTAINER_NAME, require_kubernetes

# Objects that may exist from an earlier run and are reused as they are (HTTP 409 is fine): the
# ledger's PersistentVolumeClaim in particular must outlive every run that appends to it.
_KEPT_IF_PRESENT = ("Namespace", "ServiceAccount", "NetworkPolicy", "PersistentVolumeClaim")


@dataclass(frozen=True)
class PodOutcome:
    """The finished container of one pod.

    Attributes:
        pod: pod name.
        index: completion index (Indexed Job) or ``None``.
        exit_code: the ragwarrant container's exit code.
        message: its termination message (the one-line decision summary), stripped.
    """

    pod: str
    index: int | None
    exit_code: int
    message: str

    @classmethod
    def of_pod(cls, pod: Any) -> list[tuple[str, PodOutcome]]:
        """Return (finished-at stamp, outcome) of each terminated ragwarrant container of a
        V1Pod."""
        raw = (pod.metadata.annotations or {}).get("batch.kubernetes.io/job-completion-index")
        index = int(raw) if raw is not None else None
        found = []
        for status in pod.status.container_statuses or []:
            ended = status.state and status.state.terminated
            if status.name == CONTAINER_NAME and ended is not None:
                message = (ended.message or "").strip()
                outcome = cls(pod.metadata.name, index, int(ended.exit_code), message)
                found.append((str(ended.finished_at or ""), outcome))
        return found


@dataclass(frozen=True)
class SubmitResult:
    """What ``submit`` created and, when it waited, how the Job ended.

    Attributes:
        created: ``kind/name`` of every object created (or found already present).
        outcomes: one entry per completion (per index for an Indexed Job), in index order; empty
            when not waiting.
        exit_code: 0 when every outcome is 0, else the first non-zero one in index order.
    """

    created: tuple[str, ...]
    outcomes: tuple[PodOutcome, ...] = ()
    exit_code: int = 0


def _create_all(api_client: Any, objects: Sequence[Any]) -> list[str]:
    """Create each object in order; return ``Kind/name`` of each (kept ones included).

    Raises:
        UsageError: an object that is not kept if present exists (HTTP 409), or access is
            denied (401, 403).
        InternalError: any other API error.
    """
    from kubernetes.utils import FailToCreateError, create_from_dict

    created: list[str] = []
    for obj in objects:
        name, namespace = f"{obj.kind}/{obj.metadata.name}", obj.metadata.namespace
        try:  # the client's own mapping of kind to API call
            create_from_dict(api_client, api_client.sanitize_for_serialization(obj))
        except FailToCreateError as failed:
            (exc,) = failed.api_exceptions
            if exc.status == 409 and obj.kind not in _KEPT_IF_PRESENT:
                raise UsageError(
                    "k8s-object-exists",
                    f"{name} already exists in namespace {namespace}",
                    hint="delete the previous run (kubectl delete job,configmap -l "
                    "app.kubernetes.io/instance=NAME) or pass another --name",
                ) from exc
            if exc.status in (401, 403):
                raise UsageError(
                    "k8s-forbidden",
                    f"the cluster refused to create {name} (HTTP {exc.status})",
                    hint="check your kubeconfig user's RBAC for this namespace",
                ) from exc
            if exc.status != 409:
                raise InternalError(
                    "k8s-api-error",
                    f"creating {name} failed: HTTP {exc.status} {exc.reason}",
                    hint="see the API server's message above; retry if transient",
                ) from exc
        created.append(name)
    return created


@dataclass(frozen=True)
class SubmittedJob:
    """A created Job, to wait for and read the outcomes of.

    Attributes:
        api_client: the ``kubernetes.client.ApiClient`` that created it.
        namespace: its namespace.
        name: its name.
    """

    api_client: Any
    namespace: str
    name: str

    def wait_finished(
        self,
        timeout_s: float,
        poll_s: float,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        """Poll the Job every ``poll_s`` s until it has a ``Complete`` or ``Failed`` condition.

        Raises:
            InternalError: reading the Job fails, or it is not finished after ``timeout_s`` s.
        """
        k = require_kubernetes()
        from kubernetes.client.exceptions import ApiException

        batch = k.BatchV1Api(self.api_client)
        deadline = clock() + timeout_s
        while True:
            try:
                job = batch.read_namespaced_job_status(self.name, self.namespace)
            except ApiException as exc:
                raise InternalError(
                    "k8s-api-error",
                    f"reading Job/{self.name} failed: HTTP {exc.status} {exc.reason}",
                ) from exc
            conditions = (job.status and job.status.conditions) or []
            if any(c.type in ("Complete", "Failed") and c.status == "True" for c in conditions):
                return
            if clock() >= deadline:
                raise InternalError(
                    "k8s-wait-timeout",
                    f"Job/{self.name} did not finish within {timeout_s:.0f} s",
                    hint=f"kubectl -n {self.namespace} get job {self.name}; the Job itself "
                    "keeps running",
                )
            sleep(poll_s)

    def outcomes(self) -> tuple[PodOutcome, ...]:
        """Return the last attempt's outcome of each index of a finished Job, in index order.

        Raises:
            InternalError: listing the pods fails, or no pod has a terminated ragwarrant container.
        """
        k = require_kubernetes()
        from kubernetes.client.exceptions import ApiException

        try:
            pods = k.CoreV1Api(self.api_client).list_namespaced_pod(
                self.namespace, label_selector=f"batch.kubernetes.io/job-name={self.name}"
            )
        except ApiException as exc:
            raise InternalError(
                "k8s-api-error", f"listing the pods of Job/{self.name} failed: HTTP {exc.status}"
            ) from exc
        latest: dict[int | None, tuple[str, PodOutcome]] = {}
        for stamp, outcome in (found for pod in pods.items for found in PodOutcome.of_pod(pod)):
            # Keep the last attempt of each index (retried pods share the index).
            if outcome.index not in latest or stamp >= latest[outcome.index][0]:
                latest[outcome.index] = (stamp, outcome)
        if not latest:
            raise InternalError(
                "k8s-no-outcome",
                f"Job/{self.name} finished but no pod has a terminated {CONTAINER_NAME} container",
                hint=f"kubectl -n {self.namespace} describe job {self.name}",
            )
        return tuple(latest[i][1] for i in sorted(latest, key=lambda i: -1 if i is None else i))


def submit(
    objects: Sequence[Any],
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    wait: bool = False,
    timeout_s: float = 3900.0,
    poll_s: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> SubmitResult:
    """Create ``objects`` (from ``build_manifests``) and optionally wait for the Job's outcome.

    Namespace, ServiceAccount, NetworkPolicy and the ledger's PersistentVolumeClaim that already
    exist (HTTP 409) are kept (the existing claim, with the ledger on it, is reused); a
    ConfigMap or Job that already exists is an error, since ConfigMaps are immutable and a Job
    name is taken until ``ttlSecondsAfterFinished`` removes it.

    Args:
        objects: V1 objects in apply order; the last is the Job or CronJob.
        kubeconfig, context: which cluster; ``None`` uses ``KUBECONFIG`` / the current context.
        wait: poll the Job until a ``Complete`` or ``Failed`` condition, then read exit codes.
        timeout_s: give up waiting after this many seconds.
        poll_s: seconds between polls.
        sleep, clock: injected for tests.

    Raises:
        UsageError: no kubeconfig, an object already exists, access denied, or ``wait`` with a
            CronJob.
        InternalError: the API answered an unexpected error, the wait timed out, or the finished
            Job has no terminated ragwarrant container.
    """
    require_kubernetes()
    workload = objects[-1]
    if wait and workload.kind == "CronJob":
        raise UsageError(
            "k8s-wait-cronjob",
            "--wait needs a Job; a CronJob starts Jobs on its schedule",
            hint="submit --kind job (or indexed) to wait for a decision",
        )
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    try:
        api_client = config.new_client_from_config(config_file=kubeconfig, context=context)
    except (ConfigException, OSError) as exc:
        raise UsageError(
            "k8s-no-kubeconfig",
            f"cannot load the Kubernetes configuration: {exc}",
            hint="set KUBECONFIG or pass --kubeconfig FILE (and --context NAME)",
        ) from exc
    created = tuple(_create_all(api_client, objects))
    if not wait:
        return SubmitResult(created)
    job = SubmittedJob(api_client, workload.metadata.namespace, workload.metadata.name)
    job.wait_finished(timeout_s, poll_s, sleep, clock)
    outcomes = job.outcomes()
    code = next((o.exit_code for o in outcomes if o.exit_code != 0), 0)
    return SubmitResult(created, outcomes, code)
