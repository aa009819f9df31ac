"""What ``ragwarrant k8s`` renders (``RenderOptions``), and the checks that refuse what cannot run.

``RenderOptions.check`` refuses a name, namespace, time zone, contract count, limit, claim
directory or ConfigMap that Kubernetes would reject, before anything is rendered; ``check_image``
an image not pinned by a ``sha256`` digest (tags only with ``allow_tag``) or with a malformed
digest; ``check_schedule`` a malformed cron schedule. Each raises ``UsageError`` (exit 64).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from ragwarrant.display import quoted
from ragwarrant.errors import UsageError
from ragwarrant.exit_codes import ExitCode

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
_KEY_RE = re.compile(r"[^-._a-zA-Z0-9]")
_INPUT_NAME_RE = re.compile(r"[-._a-zA-Z0-9]{1,253}")
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
# A cron schedule as Kubernetes accepts it (robfig/cron ParseStandard): five fields, or a macro.
_CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_FIELD_RE = re.compile(r"[0-9A-Za-z*?/,-]+")
_LABEL_HINT = "use lower-case letters, digits and '-'"
_OBJECT_NAME = (
    re.compile(r"[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?"),
    "a Kubernetes object name",
    "use lower-case letters, digits, '-' and '.'",
)


@dataclass(frozen=True)
class InputFile:
    """One file of the job's input directory, as it will appear under ``/in``.

    Attributes:
        relpath: POSIX path relative to the input directory (``evidence/a.csv``).
        content: the file's bytes.
    """

    relpath: str
    content: bytes


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

    @property
    def index_count(self) -> int:
        """Number of contracts (completions): mounted from ConfigMaps or named on the claim."""
        return len(self.input_names) if self.input_claim is not None else len(self.contracts)

    @property
    def index_dirs(self) -> list[str]:
        """The directory under ``/in`` of each contract, in order (claim names, or ``0`` ..)."""
        if self.input_claim is not None:
            return list(self.input_names)
        return [str(i) for i in range(len(self.contracts))]

    @property
    def object_labels(self) -> dict[str, str]:
        """The labels of every object and of the pod template (the NetworkPolicy selects them)."""
        return {
            "app.kubernetes.io/name": "ragwarrant",
            "app.kubernetes.io/instance": self.name,
            "app.kubernetes.io/component": "promotion-decision",
        }

    @property
    def evidence_groups(self) -> tuple[list[tuple[InputFile, ...]], list[int]]:
        """The distinct input-file sets (ConfigMaps) and, per index, which set it reads."""
        n = len(self.contracts)
        per_index = list(self.index_evidence) if self.index_evidence else [self.evidence] * n
        groups: list[tuple[InputFile, ...]] = []
        for files in per_index:
            if files not in groups:
                groups.append(files)
        return groups, [groups.index(files) for files in per_index]

    def evidence_map_name(self, group: int) -> str:
        """The name of the ConfigMap holding evidence set ``group`` of ``evidence_groups``."""
        return f"{self.name}-evidence" if group == 0 else f"{self.name}-evidence-{group}"

    @property
    def job_deadline_seconds(self) -> int:
        """The Job's (or Argo Workflow's) ``activeDeadlineSeconds``, s: as given, or derived.

        Derived from the fan-out, whatever the kind: every index may use its pod deadline once
        per attempt (``backoff_limit`` + 1), ``parallelism`` indexes at a time, i.e. ``ceil(n /
        parallelism) * (backoff_limit + 1) * pod_deadline_seconds`` s for ``n`` indexes of an
        Indexed Job or Argo fan-out. A Job or CronJob (one pod, no per-pod deadline) gets
        ``pod_deadline_seconds`` (3600 s by default) for all its attempts.
        """
        if self.active_deadline_seconds is not None:
            return self.active_deadline_seconds
        if self.kind is not WorkloadKind.INDEXED:
            return self.pod_deadline_seconds
        waves = -(-self.index_count // min(self.parallelism, self.index_count))
        return waves * (self.backoff_limit + 1) * self.pod_deadline_seconds

    def _check_names(self) -> None:
        """Refuse a name, claim, Secret, Secret key or namespace that Kubernetes would reject.

        The Namespace object written first labels the namespace with Pod Security "restricted":
        ``default`` and the cluster's own (``kube-system``, ``kube-public``, ...) are not the job's
        to relabel, nor the place for it.
        """
        label = re.compile(r"[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?")
        # A namespace is a DNS-1123 label (RFC 1123): at most 63 lower-case letters, digits and '-'.
        namespace = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
        for code, flag, value, (pattern, must_be, hint) in (
            ("k8s-bad-name", "--name", self.name,
             (label, "a DNS label of at most 42 characters", _LABEL_HINT)),
            ("k8s-bad-name", "--ledger-claim", self.ledger_claim, _OBJECT_NAME),
            ("k8s-bad-name", "--signing-key-secret", self.signing_key_secret, _OBJECT_NAME),
            ("k8s-bad-name", "--output-claim", self.output_claim, _OBJECT_NAME),
            ("k8s-bad-name", "--input-claim", self.input_claim, _OBJECT_NAME),
            ("k8s-bad-secret-key", "--signing-key-item", self.signing_key_item,
             (re.compile(r"[-._a-zA-Z0-9]{1,253}"), "a Secret key",
              "the key of the PEM file in the Secret, e.g. ed25519.pem")),
            ("k8s-bad-namespace", "--namespace", self.namespace,
             (namespace, "a DNS label of at most 63 characters", _LABEL_HINT)),
        ):  # fmt: skip
            if value is not None and (not pattern.fullmatch(value) or value in (".", "..")):
                raise UsageError(
                    code, f"{flag} must be {must_be}, found {quoted(value)}", hint=hint
                )
        if self.namespace == "default" or (self.namespace or "").startswith("kube-"):
            raise UsageError(
                "k8s-system-namespace",
                f"--namespace {self.namespace} is a namespace of the cluster: the job would "
                "relabel it with Pod Security 'restricted'",
                hint="use a namespace of the job's own (the default, ragwarrant), or "
                "--no-namespace and kubectl -n NAME",
            )

    def _check_counts(self) -> None:
        """Refuse no contract, several for a non-indexed kind, too many, a per-index file-set
        mismatch, or ``maxFailedIndexes`` out of range."""
        n = self.index_count
        if n == 0:
            raise UsageError(
                "k8s-no-contract",
                "no contract given",
                hint="pass --contract FILE, or --input-claim NAME with --input-root DIR",
            )
        if self.kind is not WorkloadKind.INDEXED and n != 1:
            raise UsageError(
                "k8s-many-contracts",
                f"--kind {self.kind} runs one contract, found {n}",
                hint="use --kind indexed to fan out over several contracts",
            )
        if n > MAX_INDEXES:
            raise UsageError(
                "k8s-too-many-indexes",
                f"{n} contracts in one Indexed Job, more than {MAX_INDEXES}",
                hint="split them into several Jobs (--name) of at most 100000 contracts each",
            )
        if self.index_evidence and len(self.index_evidence) != len(self.contracts):
            raise UsageError(
                "k8s-index-evidence-count",
                f"index_evidence holds {len(self.index_evidence)} file sets for "
                f"{len(self.contracts)} contracts",
                hint="give one set of input files per contract",
            )

    def _check_input_names(self, by_index: bool) -> None:
        """Refuse claim directories that are not path segments, or not 0..n-1 for an Indexed Job."""
        bad = [n for n in self.input_names if not _INPUT_NAME_RE.fullmatch(n) or n in (".", "..")]
        if bad:
            raise UsageError(
                "k8s-bad-input-name",
                "input directory names must be letters, digits, '.', '_' or '-', "
                f"found {bad[:3]!r}",
                hint="rename the directories under the input volume",
            )
        indexed = by_index and self.kind is WorkloadKind.INDEXED
        if indexed and self.input_names != tuple(str(i) for i in range(self.index_count)):
            raise UsageError(
                "k8s-input-not-indexed",
                "an Indexed Job reads /in/<completion index>/: the input volume's directories "
                "must be exactly 0, 1, ..., n-1",
                hint="lay the contracts out as /in/0/, /in/1/, ... (deploy/README.md, 'Thousands "
                "of contracts'), or fan out by name with --engine argo",
            )

    def _check_config_maps(self) -> None:
        """Refuse colliding ConfigMap keys and file sets larger than a ConfigMap holds."""
        groups, _ = self.evidence_groups
        for files in groups:
            keys = [config_key(f.relpath) for f in files]
            if len(set(keys)) != len(keys):
                raise UsageError(
                    "k8s-key-collision",
                    "two evidence paths map to the same ConfigMap key",
                    hint="rename the files so their paths differ in more than '/' versus '__'",
                )
        sizes = [(sum(len(f.content) for f in g), "evidence") for g in groups]
        for size, what in [*sizes, (sum(len(f.content) for f in self.contracts), "contracts")]:
            if size > CONFIGMAP_LIMIT_BYTES:
                raise UsageError(
                    "k8s-input-too-large",
                    f"the {what} total {size} bytes, more than a ConfigMap holds "
                    f"({CONFIGMAP_LIMIT_BYTES} bytes)",
                    hint="keep large evidence on a PersistentVolumeClaim mounted at /in instead of "
                    "using `k8s render`: see deploy/README.md, section 'Evidence larger than a "
                    "ConfigMap'",
                )

    def check(self, *, by_index: bool = True) -> None:
        """Refuse options that cannot render (each check raises ``UsageError``).

        Args:
            by_index: the pods find their input directory by completion index (a Kubernetes Indexed
                Job), so the claim's directories must be ``0`` .. ``n-1``; ``False`` for Argo, whose
                items may be any names.
        """
        import zoneinfo

        self._check_names()
        zones = zoneinfo.available_timezones()
        try:  # no time zone database to list (zones empty): a zone that loads is one
            known = self.time_zone in zones or (
                not zones and bool(zoneinfo.ZoneInfo(self.time_zone))
            )
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            known = False
        if not known:
            raise UsageError(
                "k8s-bad-time-zone",
                f"--time-zone {quoted(self.time_zone)} is not an IANA time zone",
                hint="e.g. --time-zone Etc/UTC or Europe/Paris",
            )
        self._check_counts()
        if self.input_claim is not None:
            self._check_input_names(by_index)
        m = self.max_failed_indexes
        if m is not None and not 0 <= m <= self.index_count:
            raise UsageError(
                "k8s-bad-number",
                f"--max-failed-indexes must be between 0 and the number of contracts "
                f"({self.index_count}), found {m}",
                hint="omit it to run every index whatever the others decide",
            )
        if self.input_claim is None:
            self._check_config_maps()


def config_key(relpath: str) -> str:
    """Return the ConfigMap key of an input path: ``/`` becomes ``__``, other bad bytes ``_``."""
    return _KEY_RE.sub("_", relpath.replace("/", "__"))


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
    if digest is not None and not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
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
