"""Kubernetes manifests for the job, built from the official ``kubernetes`` client's V1 models.

``ragwarrant k8s render`` (``commands/k8s.py``) calls this module; the kustomize files under
``deploy/k8s/`` carry the same hardening, and ``tests/deploy`` checks that both agree. Every pod
meets Pod Security Standards "restricted": numeric non-root user 65532, read-only root filesystem,
no privilege escalation, all capabilities dropped, the RuntimeDefault seccomp profile, no service
account token, no network (a deny-all NetworkPolicy selecting the pod template's own labels).

The ``podFailurePolicy`` fails the Job at once on the decision and configuration exit codes
(``FAIL_JOB_EXIT_CODES``): a REJECT is an answer, never retried. Pod disruptions are ignored; any
other failure (internal error 70, an OOM kill) counts toward ``backoffLimit``.

``RenderOptions.check`` refuses options that cannot work before anything is rendered. The
``kubernetes`` package is the optional extra ``k8s``; ``require_kubernetes`` raises a
``UsageError`` naming it when it is missing.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import PurePosixPath
from types import ModuleType
from typing import Any

from ragwarrant.errors import UsageError
from ragwarrant.k8s.options import (
    FAIL_JOB_EXIT_CODES,
    RenderOptions,
    WorkloadKind,
    config_key,
)

CONTAINER_NAME = "ragwarrant"
JOB_UID = 65532
# Each run writes under its own prefix: /out/<job name>/<job uid>/ (the Job controller's pod
# labels, set since Kubernetes 1.27), and an Indexed Job index i under .../<i>/.
RUN_PREFIX = "$(JOB_NAME)/$(JOB_UID)"
# The evidence ledger's volume (a PersistentVolumeClaim) and the file every run appends to.
LEDGER_MOUNT = "/ledger"
# The optional signing key: a Secret mounted read-only; owner root, group fsGroup 65532, 0440.
SIGNING_MOUNT = "/secrets/signing"


def require_kubernetes() -> ModuleType:
    """Return ``kubernetes.client``.

    Raises:
        UsageError: the optional extra ``k8s`` (the ``kubernetes`` package) is not installed.
    """
    try:
        import kubernetes.client
    except ImportError as exc:
        raise UsageError(
            "k8s-client-missing",
            "`ragwarrant k8s` needs the official kubernetes client, which is not installed",
            hint="pip install 'ragwarrant[k8s]'",
        ) from exc
    return kubernetes.client


def _meta(k: ModuleType, options: RenderOptions, name: str | None) -> Any:
    return k.V1ObjectMeta(name=name, namespace=options.namespace, labels=options.object_labels)


def _claim_volume(k: ModuleType, name: str, claim: str, read_only: bool | None = None) -> Any:
    source = k.V1PersistentVolumeClaimVolumeSource(claim_name=claim, read_only=read_only)
    return k.V1Volume(name=name, persistent_volume_claim=source)


def _input_volume(k: ModuleType, options: RenderOptions) -> Any:
    """Return ``/in``: the input claim, or the ConfigMaps projected per index directory."""
    if options.input_claim is not None:
        return _claim_volume(k, "input", options.input_claim, read_only=True)
    indexed = options.kind is WorkloadKind.INDEXED
    prefixes = [f"{i}/" for i in range(len(options.contracts))] if indexed else [""]
    names = [
        "contract.json" if PurePosixPath(c.relpath).suffix == ".json" else "contract.yaml"
        for c in options.contracts
    ]
    contracts = [
        (f"contract-{i}", f"{prefix}{name}")
        for i, (prefix, name) in enumerate(zip(prefixes, names, strict=True))
    ]
    projected = [(f"{options.name}-contract", contracts)]
    groups, group_of = options.evidence_groups
    for g, files in enumerate(groups):
        items = [
            (config_key(f.relpath), f"{prefix}{f.relpath}")
            for prefix, of in zip(prefixes, group_of, strict=True)
            if of == g
            for f in files
        ]
        if items:
            projected.append((options.evidence_map_name(g), items))
    sources = [
        k.V1VolumeProjection(
            config_map=k.V1ConfigMapProjection(
                name=name, items=[k.V1KeyToPath(key=key, path=path) for key, path in items]
            )
        )
        for name, items in projected
    ]
    return k.V1Volume(
        name="input", projected=k.V1ProjectedVolumeSource(sources=sources, default_mode=0o444)
    )


def _container(k: ModuleType, options: RenderOptions, identity: dict[str, Any]) -> Any:
    """Return the hardened job container (non-root, read-only root, no capabilities) running
    ``run --input DIR --output DIR``; ``pod_template`` adds the optional flags and the mounts.

    The output directory is ``/out/<job name>/<job uid>/`` (plus ``<index>/``), so that no two
    runs, not even two Jobs of the same name, write the same directory.
    """
    fields = {  # environment variables holding the pod's own fields (downward API)
        "JOB_NAME": "metadata.labels['batch.kubernetes.io/job-name']",
        "JOB_UID": "metadata.labels['batch.kubernetes.io/controller-uid']",
    }
    input_dir, output_dir = "/in", f"/out/{RUN_PREFIX}"
    if options.kind is WorkloadKind.INDEXED:
        # Declared explicitly so that $(JOB_COMPLETION_INDEX) expands in args on every version.
        index = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        fields["JOB_COMPLETION_INDEX"] = index
        input_dir = "/in/$(JOB_COMPLETION_INDEX)"
        output_dir += "/$(JOB_COMPLETION_INDEX)"
    elif options.input_claim is not None:
        input_dir = f"/in/{options.input_names[0]}"
    env = [
        k.V1EnvVar(
            name=name,
            value_from=k.V1EnvVarSource(field_ref=k.V1ObjectFieldSelector(field_path=path)),
        )
        for name, path in fields.items()
    ]
    return k.V1Container(
        name=CONTAINER_NAME,
        image=options.image,
        image_pull_policy="Always",
        args=["run", "--input", input_dir, "--output", output_dir],
        env=[k.V1EnvVar(name="TMPDIR", value="/tmp"), *env],
        resources=k.V1ResourceRequirements(
            requests={"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "64Mi"},
            limits={"cpu": "2", "memory": "2Gi", "ephemeral-storage": "512Mi"},
        ),
        security_context=k.V1SecurityContext(
            read_only_root_filesystem=True,
            allow_privilege_escalation=False,
            privileged=False,
            capabilities=k.V1Capabilities(drop=["ALL"]),
            **identity,
        ),
        termination_message_path="/dev/termination-log",
        termination_message_policy="FallbackToLogsOnError",
    )


def pod_template(k: ModuleType, options: RenderOptions) -> Any:
    """Return the job's pod template: the hardened container, its volumes and the pod labels."""
    identity = dict(  # the pod's and the container's security contexts share these
        run_as_non_root=True,
        run_as_user=JOB_UID,
        run_as_group=JOB_UID,
        seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
    )
    container = _container(k, options, identity)
    tmp = k.V1EmptyDirVolumeSource(size_limit="256Mi")
    output = k.V1Volume(name="output", empty_dir=tmp)
    if options.output_claim is not None:
        output = _claim_volume(k, "output", options.output_claim)
    volumes = [  # (volume, mount path, read-only); /in, /out, /tmp stay volumes/0..2 for patches
        (_input_volume(k, options), "/in", True),
        (output, "/out", None),
        (k.V1Volume(name="tmp", empty_dir=tmp), "/tmp", None),
    ]
    if options.ledger_claim is not None:
        container.args += ["--ledger", f"{LEDGER_MOUNT}/ledger.jsonl"]
        volumes.append((_claim_volume(k, "ledger", options.ledger_claim), LEDGER_MOUNT, None))
    if options.signing_key_secret is not None:
        item = options.signing_key_item
        container.args += ["--signing-key", f"{SIGNING_MOUNT}/{item}"]
        secret = k.V1SecretVolumeSource(
            secret_name=options.signing_key_secret,
            items=[k.V1KeyToPath(key=item, path=item)],
            default_mode=0o440,
        )
        volumes.append((k.V1Volume(name="signing-key", secret=secret), SIGNING_MOUNT, True))
    container.volume_mounts = [
        k.V1VolumeMount(name=v.name, mount_path=path, read_only=read_only)
        for v, path, read_only in volumes
    ]
    spec = k.V1PodSpec(
        service_account_name=options.name,
        automount_service_account_token=False,
        restart_policy="Never",
        enable_service_links=False,
        security_context=k.V1PodSecurityContext(fs_group=JOB_UID, **identity),
        containers=[container],
        volumes=[v for v, _, _ in volumes],
    )
    if options.kind is WorkloadKind.INDEXED:
        # Per-index deadline: each pod (one attempt of one index) gets its own limit.
        spec.active_deadline_seconds = options.pod_deadline_seconds
    # Labels set here, on the pod template itself: the NetworkPolicy selects them.
    return k.V1PodTemplateSpec(metadata=k.V1ObjectMeta(labels=options.object_labels), spec=spec)


def build_manifests(options: RenderOptions) -> list[Any]:
    """Return the V1 objects of one deployment, in apply order.

    Returns:
        Namespace (unless ``namespace`` is ``None``), ServiceAccount, NetworkPolicy (deny all),
        the ledger's PersistentVolumeClaim (``ReadWriteMany``; when ``ledger_claim`` is set and
        ``ledger_claim_object``), ConfigMap ``<name>-contract`` (key
        ``contract-<i>`` per contract), ConfigMap ``<name>-evidence`` (when there is evidence;
        plus ``<name>-evidence-<g>`` per further distinct ``index_evidence`` set), then the Job
        or CronJob. For ``indexed``, index ``i`` reads ``/in/<i>/`` and a decision
        code fails that index only (``FailIndex``), not the whole Job.

    Raises:
        UsageError: the kubernetes client is missing, the name is not a DNS label, the contract
            count does not fit the kind, or the files exceed a ConfigMap.
    """
    k = require_kubernetes()
    options.check()
    objects = supporting_objects(k, options)
    indexed = options.kind is WorkloadKind.INDEXED
    on_exit = k.V1PodFailurePolicyOnExitCodesRequirement(
        container_name=CONTAINER_NAME, operator="In", values=list(FAIL_JOB_EXIT_CODES)
    )
    disrupted = k.V1PodFailurePolicyOnPodConditionsPattern(type="DisruptionTarget", status="True")
    rules = [  # an Indexed Job's decision code fails its index only
        k.V1PodFailurePolicyRule(
            action="FailIndex" if indexed else "FailJob", on_exit_codes=on_exit
        ),
        k.V1PodFailurePolicyRule(action="Ignore", on_pod_conditions=[disrupted]),
    ]
    fan_out: dict[str, Any] = {"backoff_limit": options.backoff_limit}
    if indexed:
        # One index's REJECT must not stop the other contracts' runs.
        fan_out = {
            "completion_mode": "Indexed",
            "completions": options.index_count,
            "parallelism": min(options.parallelism, options.index_count),
            "backoff_limit_per_index": options.backoff_limit,
            "max_failed_indexes": options.max_failed_indexes,
        }
    spec = k.V1JobSpec(
        active_deadline_seconds=options.job_deadline_seconds,
        ttl_seconds_after_finished=options.ttl_seconds_after_finished,
        pod_failure_policy=k.V1PodFailurePolicy(rules=rules),
        template=pod_template(k, options),
        **fan_out,
    )
    metadata = _meta(k, options, options.name)
    if options.kind is not WorkloadKind.CRONJOB:
        return [*objects, k.V1Job(api_version="batch/v1", kind="Job", metadata=metadata, spec=spec)]
    cron = k.V1CronJobSpec(
        schedule=options.schedule,
        time_zone=options.time_zone,
        concurrency_policy="Forbid",
        starting_deadline_seconds=600,
        successful_jobs_history_limit=3,
        failed_jobs_history_limit=3,
        job_template=k.V1JobTemplateSpec(
            metadata=k.V1ObjectMeta(labels=options.object_labels), spec=spec
        ),
    )
    return [
        *objects,
        k.V1CronJob(api_version="batch/v1", kind="CronJob", metadata=metadata, spec=cron),
    ]


def supporting_objects(k: ModuleType, options: RenderOptions) -> list[Any]:
    """Return every object the workload needs, in apply order, without the workload itself.

    Namespace (unless ``namespace`` is ``None``; enforcing Pod Security Standards
    "restricted"), ServiceAccount, NetworkPolicy (deny all), the ledger's claim (when emitted),
    and the input ConfigMaps (unless ``input_claim``).
    """
    objects: list[Any] = []
    if options.namespace is not None:
        restricted = {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
        }
        metadata = k.V1ObjectMeta(name=options.namespace, labels=restricted)
        objects.append(k.V1Namespace(api_version="v1", kind="Namespace", metadata=metadata))
    deny_all = k.V1NetworkPolicySpec(
        pod_selector=k.V1LabelSelector(match_labels=options.object_labels),
        policy_types=["Ingress", "Egress"],
    )
    objects += [
        k.V1ServiceAccount(
            api_version="v1",
            kind="ServiceAccount",
            metadata=_meta(k, options, options.name),
            automount_service_account_token=False,
        ),
        k.V1NetworkPolicy(
            api_version="networking.k8s.io/v1",
            kind="NetworkPolicy",
            metadata=_meta(k, options, f"{options.name}-deny-all"),
            spec=deny_all,
        ),
    ]
    if options.ledger_claim is not None and options.ledger_claim_object:
        claim = k.V1PersistentVolumeClaimSpec(
            # Every run, and every index of an Indexed Job, appends to one file under flock.
            access_modes=["ReadWriteMany"],
            storage_class_name=options.ledger_storage_class,
            resources=k.V1VolumeResourceRequirements(requests={"storage": options.ledger_size}),
        )
        metadata = _meta(k, options, options.ledger_claim)
        objects.append(
            k.V1PersistentVolumeClaim(
                api_version="v1", kind="PersistentVolumeClaim", metadata=metadata, spec=claim
            )
        )
    if options.input_claim is not None:
        return objects
    maps = [
        (f"{options.name}-contract", {f"contract-{i}": c for i, c in enumerate(options.contracts)})
    ]
    for g, files in enumerate(options.evidence_groups[0]):
        if files:
            maps.append((options.evidence_map_name(g), {config_key(f.relpath): f for f in files}))
    for name, by_key in maps:
        data: dict[str, str] = {}
        binary: dict[str, str] = {}
        for key, file in by_key.items():
            try:
                data[key] = file.content.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(file.content).decode("ascii")
        config_map = k.V1ConfigMap(
            api_version="v1",
            kind="ConfigMap",
            metadata=_meta(k, options, name),
            data=data or None,
            binary_data=binary or None,
            immutable=True,
        )
        objects.append(config_map)
    return objects


def manifests_to_yaml(objects: Sequence[Any]) -> str:
    """Serialise V1 objects as a multi-document YAML stream (camelCase keys, no nulls)."""
    k = require_kubernetes()
    client = k.ApiClient()
    docs = [client.sanitize_for_serialization(obj) for obj in objects]
    import yaml  # here: the command line registers `k8s` without loading PyYAML

    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False, width=100)
