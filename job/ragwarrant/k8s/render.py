"""Kubernetes manifests for the job, built from the official ``kubernetes`` client's V1 models.

``ragwarrant k8s render`` (``commands/k8s.py``) calls this module; the kustomize files under
``deploy/k8s/`` carry the same hardening, and ``tests/deploy`` checks that both agree. Every pod
meets Pod Security Standards "restricted": numeric non-root user 65532, read-only root filesystem,
no privilege escalation, all capabilities dropped, the RuntimeDefault seccomp profile, no service
account token, no network (a deny-all NetworkPolicy selecting the pod template's own labels).

The ``podFailurePolicy`` fails the Job at once on the decision and configuration exit codes
(``FAIL_JOB_EXIT_CODES``): a REJECT is an answer, never retried. Pod disruptions are ignored; any
other failure (internal error 70, an OOM kill) counts toward ``backoffLimit``.

``k8s.inputs.load_inputs`` refuses inputs that cannot work before anything is rendered;
``check_image`` refuses an image that is not pinned by a ``sha256`` digest (tags only with
``allow_tag``) and a malformed digest (``UsageError``, 64).

The ``kubernetes`` package is the optional extra ``k8s``; ``require_kubernetes`` raises a
``UsageError`` naming it when it is missing.
"""

from __future__ import annotations

import base64
import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import PurePosixPath
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ragwarrant.display import quoted
from ragwarrant.errors import UsageError
from ragwarrant.exit_codes import ExitCode

if TYPE_CHECKING:  # annotations only: the contract loader is not needed to render
    from ragwarrant.k8s.inputs import InputFile

CONTAINER_NAME = "ragwarrant"
JOB_UID = 65532
# Exit codes that end the Job at once (podFailurePolicy FailJob/FailIndex; cloud rules EXIT): the
# decisions 10/11/12 and the configuration errors 64/66/73/78, which a retry cannot change. The
# `retry?` column of contracts/exit-codes.md is the source; tests/deploy checks both agree.
FAIL_JOB_EXIT_CODES: tuple[int, ...] = (
    int(ExitCode.REJECT),
    int(ExitCode.INCONCLUSIVE),
    int(ExitCode.BLOCK),
    int(ExitCode.USAGE),
    int(ExitCode.NO_INPUT),
    int(ExitCode.CANT_CREATE),
    int(ExitCode.CONFIG),
)
# Failures a retry may cure (an internal error; any runtime kill): count toward backoffLimit.
RETRIED_EXIT_CODES: tuple[int, ...] = (int(ExitCode.INTERNAL),)
# A ConfigMap holds at most 1 MiB (etcd's object limit); leave room for keys and metadata.
CONFIGMAP_LIMIT_BYTES = 1_000_000
# An Indexed Job with backoffLimitPerIndex and more than 10^5 completions must also set
# maxFailedIndexes <= 10^4 (JobSpec.maxFailedIndexes, batch/v1 API reference); we stop at 10^5.
MAX_INDEXES = 100_000
# Pods of an Indexed Job at once by default: each requests 500m CPU and 1 GiB.
DEFAULT_PARALLELISM = 10
# The oldest Kubernetes whose batch/v1 schema (strict) accepts what we render, and on which
# backoffLimitPerIndex and the FailIndex action are on by default (beta in 1.29, GA in 1.33;
# podFailurePolicy is GA since 1.31). tests/deploy validates against it and fails below it.
MIN_KUBERNETES_VERSION = "1.29"
# Each run writes under its own prefix: /out/<job name>/<job uid>/ (the Job controller's pod
# labels, set since Kubernetes 1.27), and an Indexed Job index i under .../<i>/.
RUN_PREFIX = "$(JOB_NAME)/$(JOB_UID)"
# The evidence ledger's volume (a PersistentVolumeClaim) and the file every run appends to.
LEDGER_MOUNT = "/ledger"
LEDGER_FILE = f"{LEDGER_MOUNT}/ledger.jsonl"
# The optional signing key: a Secret mounted read-only; owner root, group fsGroup 65532, 0440.
SIGNING_MOUNT = "/secrets/signing"
SIGNING_KEY_MODE = 0o440
_KEY_RE = re.compile(r"[^-._a-zA-Z0-9]")
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$")
_OBJECT_NAME_RE = re.compile(r"^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$")
_SECRET_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")
_INPUT_NAME_RE = re.compile(r"[-._a-zA-Z0-9]{1,253}")
# A namespace is a DNS-1123 label (RFC 1123): at most 63 lower-case letters, digits and '-'.
_NAMESPACE_RE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# Where the too-large error sends the user: the guide's section on mounting /in from a claim.
LARGE_INPUT_GUIDE = "deploy/README.md, section 'Evidence larger than a ConfigMap'"
# An image reference, after the grammar of github.com/distribution/reference (reference.go):
# name [":" tag] ["@" digest]. A pinned reference's digest is sha256 and 64 lower-case hex digits
# (OCI image-spec, descriptor.md: "the encoded portion MUST match /[a-f0-9]{64}/").
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[_.]|__|-+)[a-z0-9]+)*"
_IMAGE_RE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>.*))?"
)
_SHA256_DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
# A cron schedule as Kubernetes accepts it (robfig/cron ParseStandard): five fields, or a macro.
_CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_FIELD_RE = re.compile(r"[0-9A-Za-z*?/,-]+")


class WorkloadKind(StrEnum):
    """Which workload ``render`` builds."""

    JOB = "job"
    CRONJOB = "cronjob"
    INDEXED = "indexed"


class Engine(StrEnum):
    """Which orchestrator runs the fan-out: Kubernetes' own Job controller, or Argo Workflows."""

    KUBERNETES = "kubernetes"
    ARGO = "argo"


@dataclass(frozen=True)
class RenderOptions:
    """What ``build_manifests`` renders.

    Attributes:
        kind: Job, CronJob, or Indexed Job (one completion index per contract).
        image: container image reference; a digest reference (``...@sha256:``) is best.
        contracts: one contract file per index (exactly one unless ``kind`` is ``indexed``);
            each is mounted as ``contract.<ext>`` of its input directory.
        evidence: the evidence files every contract reads, shared by all indexes (ignored when
            ``index_evidence`` is given).
        index_evidence: the input files of each contract, one tuple per contract in order, for
            contracts that do not share one directory; index ``i`` then sees only its own files
            under ``/in/<i>/``. Identical tuples share one ConfigMap; each further distinct one
            is ConfigMap ``<name>-evidence-<g>``. Empty: every index gets ``evidence``.
        name: base name of every object (DNS label, at most 42 characters).
        namespace: namespace of every object, emitted first as a Namespace that enforces Pod
            Security Standards "restricted"; ``None`` leaves the namespace to ``kubectl``. A
            DNS-1123 label other than ``default`` and ``kube-*`` (UsageError otherwise).
        schedule: cron schedule (``cronjob`` only), in ``time_zone``.
        time_zone: IANA time zone of ``schedule`` (``zoneinfo``; UsageError otherwise).
        parallelism: pods of an Indexed Job running at once (at most the number of indexes).
        active_deadline_seconds: wall-clock limit of the Job (or Argo Workflow), s. ``None``
            derives it from the fan-out (``job_deadline_seconds``), whatever ``kind`` says.
        pod_deadline_seconds: wall-clock limit of one pod of an Indexed Job or Argo fan-out
            (one attempt of one index; the pod's ``activeDeadlineSeconds``), s; a pod that
            exceeds it fails without an exit code, which counts toward ``backoffLimitPerIndex``.
            Also the default whole-Job deadline of a Job or CronJob.
        ttl_seconds_after_finished: how long a finished Job (and its pods) stays, s.
        backoff_limit: retries of failures that ``podFailurePolicy`` does not end at once
            (per index for an Indexed Job: ``backoffLimitPerIndex``).
        max_failed_indexes: ``maxFailedIndexes`` of an Indexed Job: stop the whole Job once
            more indexes than this have failed. A decision code (REJECT, INCONCLUSIVE, BLOCK)
            fails its index (``FailIndex``) and counts too; ``None`` runs every index.
        input_claim: PersistentVolumeClaim mounted read-only at ``/in`` instead of ConfigMaps
            (a file share, or a volume of an object-store CSI driver): nothing is packaged,
            ``contracts`` and ``evidence`` stay empty, and ``input_names`` names the
            directories under ``/in``.
        input_names: with ``input_claim``, the directory of each index under ``/in`` (one
            contract and its files each); for an Indexed Job exactly ``0`` .. ``n-1``, since a
            pod finds its directory by its completion index.
        output_claim: PersistentVolumeClaim mounted at ``/out`` to keep the outputs; ``None``
            uses an ``emptyDir`` (the decision then survives in the exit code, the termination
            message and the logs only). An Indexed Job writes index i to ``/out/<i>/``.
        ledger_claim: PersistentVolumeClaim mounted at ``/ledger``; the job appends one entry
            per run to ``/ledger/ledger.jsonl`` (``--ledger``). Every run (and every index of an
            Indexed Job) appends to the same file under an exclusive ``flock``, so the claim
            must be ``ReadWriteMany`` on storage with working locks (NFSv4, EFS). ``None``
            mounts no ledger and passes no ``--ledger``.
        ledger_claim_object: also emit the PersistentVolumeClaim ``ledger_claim`` itself
            (``False``: the claim exists already, created elsewhere).
        ledger_size: storage requested by the emitted claim (a Kubernetes quantity).
        ledger_storage_class: storage class of the emitted claim; ``None`` uses the cluster's
            default class (which must offer ``ReadWriteMany``).
        signing_key_secret: Secret holding the Ed25519 PKCS#8 PEM key; mounted read-only at
            ``/secrets/signing`` (mode 0440, group ``fsGroup`` 65532) and passed as
            ``--signing-key``, so ``decision.intoto.json`` becomes a signed DSSE envelope.
            ``None``: no key, the statement is written unsigned.
        signing_key_item: the key inside that Secret holding the PEM file.
        labels: extra labels on every object and the pod template.
    """

    kind: WorkloadKind
    image: str
    contracts: tuple[InputFile, ...]
    evidence: tuple[InputFile, ...] = ()
    index_evidence: tuple[tuple[InputFile, ...], ...] = ()
    name: str = "ragwarrant"
    namespace: str | None = "ragwarrant"
    schedule: str = "0 6 * * *"
    time_zone: str = "Etc/UTC"
    parallelism: int = DEFAULT_PARALLELISM
    active_deadline_seconds: int | None = None
    pod_deadline_seconds: int = 3600
    ttl_seconds_after_finished: int = 86400
    backoff_limit: int = 2
    max_failed_indexes: int | None = None
    input_claim: str | None = None
    input_names: tuple[str, ...] = ()
    output_claim: str | None = None
    ledger_claim: str | None = "ragwarrant-ledger"
    ledger_claim_object: bool = True
    ledger_size: str = "1Gi"
    ledger_storage_class: str | None = None
    signing_key_secret: str | None = None
    signing_key_item: str = "ed25519.pem"
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def index_count(self) -> int:
        """Number of contracts (completions): mounted from ConfigMaps or named on the claim."""
        return len(self.input_names) if self.input_claim is not None else len(self.contracts)


def require_kubernetes() -> ModuleType:
    """Return ``kubernetes.client``.

    Raises:
        UsageError: the optional extra ``k8s`` (the ``kubernetes`` package) is not installed.
    """
    try:
        return importlib.import_module("kubernetes.client")
    except ImportError as exc:
        raise UsageError(
            "k8s-client-missing",
            "`ragwarrant k8s` needs the official kubernetes client, which is not installed",
            hint="pip install 'ragwarrant[k8s]'",
        ) from exc


def check_image(image: str, *, allow_tag: bool = False) -> None:
    """Refuse an image reference the Job cannot pull reproducibly.

    A reference follows ``name[:tag][@digest]`` (github.com/distribution/reference); a pinned one
    ends in ``@sha256:`` and 64 lower-case hex digits (OCI image-spec, descriptor.md).

    Args:
        image: the ``--image`` value.
        allow_tag: accept a reference without a digest (a tag, or none: ``latest``).

    Raises:
        UsageError: ``k8s-bad-image`` (not a reference), ``k8s-bad-image-digest`` (a digest that
            is not ``sha256:`` plus 64 lower-case hex digits; refused even with ``allow_tag``),
            ``k8s-image-not-pinned`` (no digest, without ``allow_tag``).
    """
    found = _IMAGE_RE.fullmatch(image)
    if found is None:
        raise UsageError(
            "k8s-bad-image",
            f"--image {image!r} is not an image reference",
            hint="pass REGISTRY/ragwarrant@sha256:<64 hex digits>",
        )
    digest = found.group("digest")
    if digest is not None and not _SHA256_DIGEST_RE.fullmatch(digest):
        raise UsageError(
            "k8s-bad-image-digest",
            f"--image {image!r} has a malformed digest {digest!r}: expected 'sha256:' and 64 "
            "lower-case hex digits",
            hint="copy the digest from `podman image inspect --format '{{.Digest}}' IMAGE` "
            "(or `docker buildx imagetools inspect`)",
        )
    if digest is None and not allow_tag:
        tag = found.group("tag") or "latest"
        raise UsageError(
            "k8s-image-not-pinned",
            f"--image {image!r} names the tag {tag!r}, not a digest: each pod would run whatever "
            "the tag points to when it starts",
            hint="pin it as REGISTRY/ragwarrant@sha256:<64 hex digits> (deploy/README.md), or "
            "pass --allow-tag to accept a mutable tag",
        )


def check_schedule(schedule: str) -> None:
    """Refuse a CronJob schedule that is neither five cron fields nor a macro (``@daily``).

    Only the shape is checked, not each field's range; the API server checks the rest.

    Raises:
        UsageError: ``k8s-bad-schedule``.
    """
    fields = schedule.split()
    if schedule.strip() in _CRON_MACROS:
        return
    if len(fields) != 5 or not all(_CRON_FIELD_RE.fullmatch(f) for f in fields):
        raise UsageError(
            "k8s-bad-schedule",
            f"--schedule {schedule!r} is not a cron schedule: expected five fields "
            "(minute hour day-of-month month day-of-week) or one of " + ", ".join(_CRON_MACROS),
            hint="e.g. --schedule '0 6 * * 1' (Mondays at 06:00 in --time-zone)",
        )


def _evidence_groups(options: RenderOptions) -> tuple[list[tuple[InputFile, ...]], list[int]]:
    """Return the distinct input-file sets and, per index, which set it reads."""
    n = len(options.contracts)
    per_index = list(options.index_evidence) if options.index_evidence else [options.evidence] * n
    groups: list[tuple[InputFile, ...]] = []
    group_of = []
    for files in per_index:
        if files not in groups:
            groups.append(files)
        group_of.append(groups.index(files))
    return groups, group_of


def _evidence_name(options: RenderOptions, group: int) -> str:
    return f"{options.name}-evidence" if group == 0 else f"{options.name}-evidence-{group}"


def _labels(options: RenderOptions) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "ragwarrant",
        "app.kubernetes.io/instance": options.name,
        "app.kubernetes.io/component": "promotion-decision",
        **options.labels,
    }


def config_key(relpath: str) -> str:
    """Return the ConfigMap key of an input path: ``/`` becomes ``__``, other bad bytes ``_``."""
    return _KEY_RE.sub("_", relpath.replace("/", "__"))


def _check_names(options: RenderOptions) -> None:
    """Refuse a name, claim, Secret or Secret key that Kubernetes would reject."""
    if not _NAME_RE.fullmatch(options.name):
        raise UsageError(
            "k8s-bad-name",
            f"--name must be a DNS label of at most 42 characters, found {options.name!r}",
            hint="use lower-case letters, digits and '-'",
        )
    for flag, value in (
        ("--ledger-claim", options.ledger_claim),
        ("--signing-key-secret", options.signing_key_secret),
        ("--output-claim", options.output_claim),
        ("--input-claim", options.input_claim),
    ):
        if value is not None and not _OBJECT_NAME_RE.fullmatch(value):
            raise UsageError(
                "k8s-bad-name",
                f"{flag} must be a Kubernetes object name, found {value!r}",
                hint="use lower-case letters, digits, '-' and '.'",
            )
    if not _SECRET_KEY_RE.fullmatch(options.signing_key_item) or options.signing_key_item in (
        ".",
        "..",
    ):
        raise UsageError(
            "k8s-bad-secret-key",
            f"--signing-key-item must be a Secret key, found {options.signing_key_item!r}",
            hint="the key of the PEM file in the Secret, e.g. ed25519.pem",
        )


def _check_namespace(namespace: str | None) -> None:
    """Refuse a namespace that is not a DNS-1123 label, or ``default`` or a ``kube-`` one.

    The Namespace object written first labels the namespace with Pod Security "restricted":
    ``default`` and the cluster's own (``kube-system``, ``kube-public``, ...) are not the job's
    to relabel, nor the place for it.
    """
    if namespace is None:
        return
    if not _NAMESPACE_RE.fullmatch(namespace):
        raise UsageError(
            "k8s-bad-namespace",
            f"--namespace must be a DNS label of at most 63 characters, found {quoted(namespace)}",
            hint="use lower-case letters, digits and '-'",
        )
    if namespace == "default" or namespace.startswith("kube-"):
        raise UsageError(
            "k8s-system-namespace",
            f"--namespace {namespace} is a namespace of the cluster: the job would relabel it "
            "with Pod Security 'restricted'",
            hint="use a namespace of the job's own (the default, ragwarrant), or --no-namespace "
            "and kubectl -n NAME",
        )


def _check_time_zone(time_zone: str) -> None:
    """Refuse a --time-zone that is not an IANA zone name (``zoneinfo.available_timezones``)."""
    import zoneinfo

    zones = zoneinfo.available_timezones()
    if time_zone in zones:
        return
    try:  # no time zone database to list (zones empty): a zone that loads is one
        known = not zones and zoneinfo.ZoneInfo(time_zone) is not None
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        known = False
    if not known:
        raise UsageError(
            "k8s-bad-time-zone",
            f"--time-zone {quoted(time_zone)} is not an IANA time zone",
            hint="e.g. --time-zone Etc/UTC or Europe/Paris",
        )


def _check_contract_count(options: RenderOptions) -> None:
    """Refuse no contract, several for a non-indexed kind, or a per-index file-set mismatch."""
    n = options.index_count
    if n == 0:
        raise UsageError(
            "k8s-no-contract",
            "no contract given",
            hint="pass --contract FILE, or --input-claim NAME with --input-root DIR",
        )
    if options.kind is not WorkloadKind.INDEXED and n != 1:
        raise UsageError(
            "k8s-many-contracts",
            f"--kind {options.kind} runs one contract, found {n}",
            hint="use --kind indexed to fan out over several contracts",
        )
    if n > MAX_INDEXES:
        raise UsageError(
            "k8s-too-many-indexes",
            f"{n} contracts in one Indexed Job, more than {MAX_INDEXES}",
            hint="split them into several Jobs (--name) of at most 100000 contracts each",
        )
    if options.index_evidence and len(options.index_evidence) != len(options.contracts):
        raise UsageError(
            "k8s-index-evidence-count",
            f"index_evidence holds {len(options.index_evidence)} file sets for "
            f"{len(options.contracts)} contracts",
            hint="give one set of input files per contract",
        )


def _check_config_maps(options: RenderOptions) -> None:
    """Refuse colliding ConfigMap keys and file sets larger than a ConfigMap holds."""
    groups, _ = _evidence_groups(options)
    sizes = [(sum(len(f.content) for f in g), "evidence") for g in groups]
    for files in groups:
        keys = [config_key(f.relpath) for f in files]
        if len(set(keys)) != len(keys):
            raise UsageError(
                "k8s-key-collision",
                "two evidence paths map to the same ConfigMap key",
                hint="rename the files so their paths differ in more than '/' versus '__'",
            )
    for size, what in [*sizes, (sum(len(f.content) for f in options.contracts), "contracts")]:
        if size > CONFIGMAP_LIMIT_BYTES:
            raise UsageError(
                "k8s-input-too-large",
                f"the {what} total {size} bytes, more than a ConfigMap holds "
                f"({CONFIGMAP_LIMIT_BYTES} bytes)",
                hint="keep large evidence on a PersistentVolumeClaim mounted at /in instead of "
                f"using `k8s render`: see {LARGE_INPUT_GUIDE}",
            )


def _check_limits(options: RenderOptions) -> None:
    """Refuse ``maxFailedIndexes`` out of range."""
    m = options.max_failed_indexes
    if m is not None and not 0 <= m <= options.index_count:
        raise UsageError(
            "k8s-bad-number",
            f"--max-failed-indexes must be between 0 and the number of contracts "
            f"({options.index_count}), found {m}",
            hint="omit it to run every index whatever the others decide",
        )


def _check_input_names(options: RenderOptions) -> None:
    """Refuse claim directories that are not path segments, or not 0..n-1 for an Indexed Job."""
    if options.input_claim is None:
        return
    bad = [n for n in options.input_names if not _INPUT_NAME_RE.fullmatch(n) or n in (".", "..")]
    if bad:
        raise UsageError(
            "k8s-bad-input-name",
            f"input directory names must be letters, digits, '.', '_' or '-', found {bad[:3]!r}",
            hint="rename the directories under the input volume",
        )
    indexed = options.kind is WorkloadKind.INDEXED
    if indexed and list(options.input_names) != [str(i) for i in range(options.index_count)]:
        raise UsageError(
            "k8s-input-not-indexed",
            "an Indexed Job reads /in/<completion index>/: the input volume's directories "
            "must be exactly 0, 1, ..., n-1",
            hint="lay the contracts out as /in/0/, /in/1/, ... (deploy/README.md, 'Thousands "
            "of contracts'), or fan out by name with --engine argo",
        )


def check_options(options: RenderOptions, *, by_index: bool = True) -> None:
    """Refuse options that cannot render (each check raises ``UsageError``).

    Args:
        options: what to render.
        by_index: the pods find their input directory by completion index (a Kubernetes Indexed
            Job), so the claim's directories must be ``0`` .. ``n-1``; ``False`` for Argo, whose
            items may be any names.
    """
    _check_names(options)
    _check_namespace(options.namespace)
    _check_time_zone(options.time_zone)
    _check_contract_count(options)
    if by_index:
        _check_input_names(options)
    else:
        _check_input_names(replace(options, kind=WorkloadKind.JOB))
    _check_limits(options)
    if options.input_claim is None:
        _check_config_maps(options)


def _configmap(
    k: ModuleType, name: str, options: RenderOptions, files: Sequence[tuple[str, bytes]]
) -> Any:
    data: dict[str, str] = {}
    binary: dict[str, str] = {}
    for key, content in files:
        try:
            data[key] = content.decode("utf-8")
        except UnicodeDecodeError:
            binary[key] = base64.b64encode(content).decode("ascii")
    return k.V1ConfigMap(
        api_version="v1",
        kind="ConfigMap",
        metadata=k.V1ObjectMeta(name=name, namespace=options.namespace, labels=_labels(options)),
        data=data or None,
        binary_data=binary or None,
        immutable=True,
    )


def _contract_name(contract: InputFile) -> str:
    suffix = PurePosixPath(contract.relpath).suffix
    return "contract.json" if suffix == ".json" else "contract.yaml"


def _input_volume(k: ModuleType, options: RenderOptions) -> Any:
    if options.input_claim is not None:
        return k.V1Volume(
            name="input",
            persistent_volume_claim=k.V1PersistentVolumeClaimVolumeSource(
                claim_name=options.input_claim, read_only=True
            ),
        )
    indexed = options.kind is WorkloadKind.INDEXED
    prefixes = [f"{i}/" for i in range(len(options.contracts))] if indexed else [""]
    contract_items = [
        k.V1KeyToPath(key=f"contract-{i}", path=f"{prefix}{_contract_name(c)}")
        for i, (prefix, c) in enumerate(zip(prefixes, options.contracts, strict=True))
    ]
    sources = [
        k.V1VolumeProjection(
            config_map=k.V1ConfigMapProjection(
                name=f"{options.name}-contract", items=contract_items
            )
        )
    ]
    groups, group_of = _evidence_groups(options)
    for g, files in enumerate(groups):
        evidence_items = [
            k.V1KeyToPath(key=config_key(f.relpath), path=f"{prefix}{f.relpath}")
            for prefix, of in zip(prefixes, group_of, strict=True)
            if of == g
            for f in files
        ]
        if evidence_items:
            sources.append(
                k.V1VolumeProjection(
                    config_map=k.V1ConfigMapProjection(
                        name=_evidence_name(options, g), items=evidence_items
                    )
                )
            )
    return k.V1Volume(
        name="input", projected=k.V1ProjectedVolumeSource(sources=sources, default_mode=0o444)
    )


def _output_volume(k: ModuleType, options: RenderOptions) -> Any:
    if options.output_claim is None:
        return k.V1Volume(name="output", empty_dir=k.V1EmptyDirVolumeSource(size_limit="256Mi"))
    return k.V1Volume(
        name="output",
        persistent_volume_claim=k.V1PersistentVolumeClaimVolumeSource(
            claim_name=options.output_claim
        ),
    )


def _ledger_claim(k: ModuleType, options: RenderOptions) -> Any:
    return k.V1PersistentVolumeClaim(
        api_version="v1",
        kind="PersistentVolumeClaim",
        metadata=k.V1ObjectMeta(
            name=options.ledger_claim, namespace=options.namespace, labels=_labels(options)
        ),
        spec=k.V1PersistentVolumeClaimSpec(
            # Every run, and every index of an Indexed Job, appends to one file under flock.
            access_modes=["ReadWriteMany"],
            storage_class_name=options.ledger_storage_class,
            resources=k.V1VolumeResourceRequirements(requests={"storage": options.ledger_size}),
        ),
    )


def _label_env(k: ModuleType, name: str, label: str) -> Any:
    """Return an environment variable holding one of the pod's labels (downward API)."""
    return k.V1EnvVar(
        name=name,
        value_from=k.V1EnvVarSource(
            field_ref=k.V1ObjectFieldSelector(field_path=f"metadata.labels['{label}']")
        ),
    )


def _env_and_dirs(k: ModuleType, options: RenderOptions) -> tuple[list[Any], str, str]:
    """Return the container's environment and its input and output directories.

    The output directory is ``/out/<job name>/<job uid>/`` (plus ``<index>/``), so that no two
    runs, not even two Jobs of the same name, write the same directory.
    """
    indexed = options.kind is WorkloadKind.INDEXED
    env = [
        k.V1EnvVar(name="TMPDIR", value="/tmp"),
        _label_env(k, "JOB_NAME", "batch.kubernetes.io/job-name"),
        _label_env(k, "JOB_UID", "batch.kubernetes.io/controller-uid"),
    ]
    input_dir = "/in"
    if indexed:
        # Declared explicitly so that $(JOB_COMPLETION_INDEX) expands in args on every version.
        env.append(
            k.V1EnvVar(
                name="JOB_COMPLETION_INDEX",
                value_from=k.V1EnvVarSource(
                    field_ref=k.V1ObjectFieldSelector(
                        field_path="metadata.annotations['batch.kubernetes.io/job-completion-index']"
                    )
                ),
            )
        )
        input_dir = "/in/$(JOB_COMPLETION_INDEX)"
    elif options.input_claim is not None:
        input_dir = f"/in/{options.input_names[0]}"
    output_dir = f"/out/{RUN_PREFIX}/$(JOB_COMPLETION_INDEX)" if indexed else f"/out/{RUN_PREFIX}"
    return env, input_dir, output_dir


def _container(
    k: ModuleType, options: RenderOptions, args: list[str], env: list[Any], mounts: list[Any]
) -> Any:
    """Return the hardened job container (non-root, read-only root, no capabilities)."""
    return k.V1Container(
        name=CONTAINER_NAME,
        image=options.image,
        image_pull_policy="Always",
        args=args,
        env=env,
        resources=k.V1ResourceRequirements(
            requests={"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "64Mi"},
            limits={"cpu": "2", "memory": "2Gi", "ephemeral-storage": "512Mi"},
        ),
        security_context=k.V1SecurityContext(
            run_as_non_root=True,
            run_as_user=JOB_UID,
            run_as_group=JOB_UID,
            read_only_root_filesystem=True,
            allow_privilege_escalation=False,
            privileged=False,
            capabilities=k.V1Capabilities(drop=["ALL"]),
            seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
        ),
        volume_mounts=mounts,
        termination_message_path="/dev/termination-log",
        termination_message_policy="FallbackToLogsOnError",
    )


def pod_template(k: ModuleType, options: RenderOptions) -> Any:
    env, input_dir, output_dir = _env_and_dirs(k, options)
    args = ["run", "--input", input_dir, "--output", output_dir]
    mounts = [
        k.V1VolumeMount(name="input", mount_path="/in", read_only=True),
        k.V1VolumeMount(name="output", mount_path="/out"),
        k.V1VolumeMount(name="tmp", mount_path="/tmp"),
    ]
    volumes = [
        _input_volume(k, options),
        _output_volume(k, options),
        k.V1Volume(name="tmp", empty_dir=k.V1EmptyDirVolumeSource(size_limit="256Mi")),
    ]
    # Appended after the original three, so that patches addressing volumes/0..2 keep working.
    if options.ledger_claim is not None:
        args += ["--ledger", LEDGER_FILE]
        mounts.append(k.V1VolumeMount(name="ledger", mount_path=LEDGER_MOUNT))
        volumes.append(
            k.V1Volume(
                name="ledger",
                persistent_volume_claim=k.V1PersistentVolumeClaimVolumeSource(
                    claim_name=options.ledger_claim
                ),
            )
        )
    if options.signing_key_secret is not None:
        args += ["--signing-key", f"{SIGNING_MOUNT}/{options.signing_key_item}"]
        mounts.append(k.V1VolumeMount(name="signing-key", mount_path=SIGNING_MOUNT, read_only=True))
        volumes.append(
            k.V1Volume(
                name="signing-key",
                secret=k.V1SecretVolumeSource(
                    secret_name=options.signing_key_secret,
                    items=[
                        k.V1KeyToPath(key=options.signing_key_item, path=options.signing_key_item)
                    ],
                    default_mode=SIGNING_KEY_MODE,
                ),
            )
        )
    spec = k.V1PodSpec(
        service_account_name=options.name,
        automount_service_account_token=False,
        restart_policy="Never",
        enable_service_links=False,
        security_context=k.V1PodSecurityContext(
            run_as_non_root=True,
            run_as_user=JOB_UID,
            run_as_group=JOB_UID,
            fs_group=JOB_UID,
            seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
        ),
        containers=[_container(k, options, args, env, mounts)],
        volumes=volumes,
    )
    if options.kind is WorkloadKind.INDEXED:
        # Per-index deadline: each pod (one attempt of one index) gets its own limit.
        spec.active_deadline_seconds = options.pod_deadline_seconds
    # Labels set here, on the pod template itself: the NetworkPolicy selects them.
    return k.V1PodTemplateSpec(metadata=k.V1ObjectMeta(labels=_labels(options)), spec=spec)


def job_deadline_seconds(options: RenderOptions) -> int:
    """Return the Job's (or Argo Workflow's) ``activeDeadlineSeconds``: as given, or derived.

    Derived from the fan-out, whatever the kind: every index may use its pod deadline once per
    attempt (``backoff_limit`` + 1), ``parallelism`` indexes at a time, i.e. ``ceil(n /
    parallelism) * (backoff_limit + 1) * pod_deadline_seconds`` s for ``n`` indexes of an
    Indexed Job or Argo fan-out. A Job or CronJob (one pod, no per-pod deadline) gets
    ``pod_deadline_seconds`` (3600 s by default) for all its attempts.
    """
    if options.active_deadline_seconds is not None:
        return options.active_deadline_seconds
    if options.kind is not WorkloadKind.INDEXED:
        return options.pod_deadline_seconds
    parallelism = min(options.parallelism, options.index_count)
    waves = -(-options.index_count // parallelism)
    return waves * (options.backoff_limit + 1) * options.pod_deadline_seconds


def _job_spec(k: ModuleType, options: RenderOptions) -> Any:
    spec = k.V1JobSpec(
        backoff_limit=options.backoff_limit,
        active_deadline_seconds=job_deadline_seconds(options),
        ttl_seconds_after_finished=options.ttl_seconds_after_finished,
        pod_failure_policy=k.V1PodFailurePolicy(
            rules=[
                k.V1PodFailurePolicyRule(
                    action="FailJob",
                    on_exit_codes=k.V1PodFailurePolicyOnExitCodesRequirement(
                        container_name=CONTAINER_NAME,
                        operator="In",
                        values=list(FAIL_JOB_EXIT_CODES),
                    ),
                ),
                k.V1PodFailurePolicyRule(
                    action="Ignore",
                    on_pod_conditions=[
                        k.V1PodFailurePolicyOnPodConditionsPattern(
                            type="DisruptionTarget", status="True"
                        )
                    ],
                ),
            ]
        ),
        template=pod_template(k, options),
    )
    if options.kind is WorkloadKind.INDEXED:
        spec.completion_mode = "Indexed"
        spec.completions = options.index_count
        spec.parallelism = min(options.parallelism, options.index_count)
        # One index's REJECT must not stop the other contracts' runs.
        spec.backoff_limit_per_index = options.backoff_limit
        spec.backoff_limit = None
        spec.max_failed_indexes = options.max_failed_indexes
        spec.pod_failure_policy.rules[0].action = "FailIndex"
    return spec


def _namespace(k: ModuleType, namespace: str) -> Any:
    """Return the Namespace, enforcing Pod Security Standards "restricted"."""
    return k.V1Namespace(
        api_version="v1",
        kind="Namespace",
        metadata=k.V1ObjectMeta(
            name=namespace,
            labels={
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": "latest",
            },
        ),
    )


def _workload(k: ModuleType, options: RenderOptions, meta: Callable[[str], Any]) -> Any:
    """Return the Job, or the CronJob that creates it on ``schedule``."""
    job_spec = _job_spec(k, options)
    if options.kind is WorkloadKind.CRONJOB:
        return k.V1CronJob(
            api_version="batch/v1",
            kind="CronJob",
            metadata=meta(options.name),
            spec=k.V1CronJobSpec(
                schedule=options.schedule,
                time_zone=options.time_zone,
                concurrency_policy="Forbid",
                starting_deadline_seconds=600,
                successful_jobs_history_limit=3,
                failed_jobs_history_limit=3,
                job_template=k.V1JobTemplateSpec(
                    metadata=k.V1ObjectMeta(labels=_labels(options)), spec=job_spec
                ),
            ),
        )
    return k.V1Job(api_version="batch/v1", kind="Job", metadata=meta(options.name), spec=job_spec)


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
    check_options(options)
    objects = supporting_objects(k, options)
    objects.append(_workload(k, options, _meta_factory(k, options)))
    return objects


def _meta_factory(k: ModuleType, options: RenderOptions) -> Callable[[str], Any]:
    labels = _labels(options)

    def meta(name: str) -> Any:
        return k.V1ObjectMeta(name=name, namespace=options.namespace, labels=labels)

    return meta


def supporting_objects(k: ModuleType, options: RenderOptions) -> list[Any]:
    """Return every object the workload needs, in apply order, without the workload itself.

    Namespace (unless ``namespace`` is ``None``), ServiceAccount, NetworkPolicy (deny all), the
    ledger's claim (when emitted), and the input ConfigMaps (unless ``input_claim``).
    """
    labels = _labels(options)
    meta = _meta_factory(k, options)
    objects: list[Any] = []
    if options.namespace is not None:
        objects.append(_namespace(k, options.namespace))
    objects += [
        k.V1ServiceAccount(
            api_version="v1",
            kind="ServiceAccount",
            metadata=meta(options.name),
            automount_service_account_token=False,
        ),
        k.V1NetworkPolicy(
            api_version="networking.k8s.io/v1",
            kind="NetworkPolicy",
            metadata=meta(f"{options.name}-deny-all"),
            spec=k.V1NetworkPolicySpec(
                pod_selector=k.V1LabelSelector(match_labels=labels),
                policy_types=["Ingress", "Egress"],
            ),
        ),
    ]
    if options.ledger_claim is not None and options.ledger_claim_object:
        objects.append(_ledger_claim(k, options))
    if options.input_claim is None:
        objects += _input_configmaps(k, options)
    return objects


def _input_configmaps(k: ModuleType, options: RenderOptions) -> list[Any]:
    """Return the contract ConfigMap and one ConfigMap per distinct evidence set."""
    objects = [
        _configmap(
            k,
            f"{options.name}-contract",
            options,
            [(f"contract-{i}", c.content) for i, c in enumerate(options.contracts)],
        ),
    ]
    for g, files in enumerate(_evidence_groups(options)[0]):
        if files:
            objects.append(
                _configmap(
                    k,
                    _evidence_name(options, g),
                    options,
                    [(config_key(f.relpath), f.content) for f in files],
                )
            )
    return objects


def manifests_to_yaml(objects: Sequence[Any]) -> str:
    """Serialise V1 objects as a multi-document YAML stream (camelCase keys, no nulls)."""
    k = require_kubernetes()
    client = k.ApiClient()
    docs = [client.sanitize_for_serialization(obj) for obj in objects]
    import yaml  # here: the command line registers `k8s` without loading PyYAML

    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False, width=100)
