"""Read a run's inputs: the release contract, the policy configs and the evidence, with digests.

Every file read is hashed (``digests.sha256_file``) for the manifest; an evidence source may be a
dataset directory of part files, hashed part by part (``evidence_digests``). What cannot be read is
recorded, not raised: the contract's unresolved references and the evidence sources whose adapter
refused them, for the run-level gates (``gates.run``) to report.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson
import pyarrow as pa

from ragwarrant.adapters import AdapterResult, load_source
from ragwarrant.adapters._dataset import dataset_digests, dataset_sha256, is_dataset
from ragwarrant.contract import (
    ContractSource,
    ReleaseContract,
    find_contract,
    is_readable_file,
    load_contract_source,
    load_policy_config,
    resolve_inside,
    wide_margins,
)
from ragwarrant.digests import sha256_bytes, sha256_file
from ragwarrant.display import number, quoted
from ragwarrant.errors import (
    ContractError,
    EvidenceError,
    InputError,
    OutputError,
    UsageError,
    file_for_directory,
    shown_path,
)
from ragwarrant.evidence.schema import EVIDENCE_SCHEMA
from ragwarrant.mounts import unwritable_hint
from ragwarrant.outputs import ConfigDifference, FileDigest, LookRecord, ValidationCheck
from ragwarrant.review import HumanLabelSet, ReviewQueue, read_labels, read_queue
from ragwarrant.review.sample import binary_metric, check_redraw
from ragwarrant.sidefiles import special_file


@dataclass
class Inputs:
    """Everything read from the input directory, with the checks made while reading.

    Attributes:
        contract: the validated release contract.
        contract_path: the contract file's name in the input directory.
        contract_sha256: hex sha256 of the contract file's bytes.
        digests: every input file read (contract, configs, evidence), in reading order.
        config_sha: policy id → hex sha256 of its config file (absent when unreadable).
        configs: policy id → the parsed config (absent when unreadable or unparsable).
        results: the evidence sources read, in contract order.
        checks: validation checks made while reading.
        unresolved: descriptions of contract references that do not resolve to a readable file.
        unreadable: (source id, error) of each evidence source its adapter refused.
        source: the contract with its line map, for located run-time contract messages.
        labels: quality metric id → its human labels (``human_labels`` in the contract).
    """

    contract: ReleaseContract
    contract_path: str
    contract_sha256: str
    digests: list[FileDigest] = field(default_factory=list)
    config_sha: dict[str, str] = field(default_factory=dict)
    configs: dict[str, object] = field(default_factory=dict)
    results: list[AdapterResult] = field(default_factory=list)
    checks: list[ValidationCheck] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, EvidenceError]] = field(default_factory=list)
    source: ContractSource | None = None
    labels: dict[str, HumanLabelSet] = field(default_factory=dict)

    @classmethod
    def read_contract(cls, input_dir: Path) -> Inputs:
        """The contract read and hashed: its ``contract-schema`` check, a ``warn`` per margin of
        half its scale or more (``contract.wide_margins``)."""
        contract_file = find_contract(input_dir)
        name, source = contract_file.name, load_contract_source(contract_file)
        contract_bytes = contract_file.read_bytes()
        sha = sha256_bytes(contract_bytes)
        schema = "the release contract validates against contracts/contract.schema.json"
        checks = [ValidationCheck(id="contract-schema", target=name, status="pass", message=schema)]
        checks += [
            ValidationCheck(
                id="contract-margin-wide",
                target=name,
                status="warn",
                file=name,
                column=key,
                message=f"{key} is {number(margin)}, at least half the metric's scale width "
                f"{number(width)}: a candidate that lost that much still passes; is this the "
                "margin you meant?",
            )
            for key, margin, width in wide_margins(source.contract)
        ]
        digest = FileDigest(path=name, sha256=sha, bytes=len(contract_bytes))
        return cls(source.contract, name, sha, [digest], checks=checks, source=source)

    def content_sha256(self, policy_id: str, config: object = None) -> str:
        """The canonical content digest of a policy's config: sha256 of its parsed value (or of
        ``config`` when given) as JSON with sorted keys (so YAML and JSON, key order, comments and
        spacing do not count), or of its bytes when it did not parse."""
        if policy_id in self.configs:
            value = self.configs[policy_id] if config is None else config
            with contextlib.suppress(TypeError):
                option = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
                return sha256_bytes(orjson.dumps(value, option=option))
        return self.config_sha[policy_id]

    def _record_unreadable(self, source_id: str, source_path: str, exc: EvidenceError) -> None:
        """Record an evidence source (or human labels) its reader refused, with a located check."""
        self.unreadable.append((source_id, exc))
        self.checks.append(
            ValidationCheck(
                id=f"evidence-readable:{source_id}",
                target=source_path,
                status="fail",
                message=f"{exc.code}: {exc.message}",
                file=exc.file or source_path,
                row=exc.row,
                column=exc.column,
                expected=exc.expected,
                found=None if exc.found is None else str(exc.found)[:200],
            )
        )

    def _read_evidence(self, input_dir: Path, on_progress: Callable[..., None]) -> None:
        for source in self.contract.evidence:
            started = time.perf_counter()
            path = resolve_inside(input_dir, source.path)
            if not is_readable_evidence(path):
                self.unresolved.append(f"evidence {source.path} ({source.id})")
                continue
            try:
                digests, sha = evidence_digests(path, source.path)
            except OSError:  # a part file of a dataset directory that cannot be read
                self.unresolved.append(f"evidence {source.path} ({source.id})")
                continue
            self.digests += digests
            try:
                result = load_source(source, path, sha, self.contract)
            except EvidenceError as exc:
                self._record_unreadable(source.id, source.path, exc)
                continue
            self.results.append(result)
            on_progress(
                "source_read",
                source_id=source.id,
                adapter=result.provenance.adapter,
                rows=result.provenance.rows_read,
                elapsed_s=round(time.perf_counter() - started, 3),
            )
            self.checks.append(
                ValidationCheck(
                    id=f"evidence-readable:{source.id}",
                    target=source.path,
                    status="pass",
                    message=(
                        f"read {result.provenance.rows_read} rows "
                        f"with adapter {result.provenance.adapter}"
                    ),
                )
            )

    def _check_draw(self, queue_rel: str, queue: ReviewQueue, metric: str) -> None:
        """The queue must be a draw for ``metric`` from this run's evidence bytes: every evidence
        file it records is one this run reads, with the same sha256.

        Raises:
            EvidenceError: ``review-queue-metric-mismatch``, or ``review-queue-evidence-changed``
                naming the queue and the evidence file whose sha256 differs.
        """
        if queue.metric != metric:
            raise EvidenceError(
                "review-queue-metric-mismatch",
                f"{queue_rel}: the draw is for metric {queue.metric!r}, not {metric!r}",
                hint="name, under each metric, the queue drawn for that metric",
                file=queue_rel,
                column="metric",
            )
        read = {d.path: d.sha256 for d in self.digests}
        for drawn in queue.evidence:
            if read.get(drawn.path) != drawn.sha256:
                what = "a different" if drawn.path in read else "a file this run does not read,"
                raise EvidenceError(
                    "review-queue-evidence-changed",
                    f"{queue_rel}: the draw was made from {what} {drawn.path}",
                    hint="draw a new review queue from this evidence and label it",
                    file=queue_rel,
                    column="evidence",
                )

    def _read_labels(self, input_dir: Path) -> None:
        """Read each quality metric's human labels and their queue, hashed for the manifest.

        An unreadable file is an unresolved reference; labels that do not answer the draw are an
        unreadable source (``human_labels:<metric>``), so the run BLOCKs with the located error.
        """
        for metric in self.contract.quality_metrics:
            spec = metric.human_labels
            if spec is None:
                continue
            paths = [resolve_inside(input_dir, rel) for rel in (spec.queue, spec.file)]
            missing = [
                rel
                for rel, p in zip((spec.queue, spec.file), paths, strict=True)
                if not is_readable_file(p)
            ]
            if missing:
                self.unresolved += [f"human labels {rel} ({metric.id})" for rel in missing]
                continue
            self.digests += [
                _digest(p, rel) for p, rel in zip(paths, (spec.queue, spec.file), strict=True)
            ]
            try:
                queue = read_queue(paths[0], spec.queue)
                self._check_draw(spec.queue, queue, metric.id)
                tables = [r.evidence for r in self.results]  # every readable source's rows
                table = pa.concat_tables(tables) if tables else EVIDENCE_SCHEMA.empty_table()
                check_redraw(queue, table, self.contract, spec.queue)
                binary = binary_metric(table, metric)
                self.labels[metric.id] = read_labels(
                    paths[1], spec.file, queue, metric.scale, binary
                )
            except EvidenceError as exc:
                self._record_unreadable(f"human_labels:{metric.id}", spec.file, exc)


def check_input_dir(input_dir: Path) -> None:
    """Check the input directory exists and is readable.

    Raises:
        InputError: exit 66; a file, FIFO, socket or device is ``input-not-directory``.
    """
    hint = "check the volume's permissions: the job runs as uid 65532"
    try:
        is_dir = input_dir.is_dir()
    except OSError as exc:
        raise InputError(
            "input-unreadable",
            f"--input {shown_path(input_dir)} cannot be reached: {exc.strerror}",
            hint=hint,
        ) from exc
    if not is_dir and input_dir.is_file():
        raise file_for_directory("input-not-directory", "--input", input_dir)
    if not is_dir:
        kind = special_file(input_dir)
        what = f"is {kind}, not a directory" if kind else "does not exist"
        raise InputError(
            "input-not-directory" if kind else "input-missing",
            f"--input {shown_path(input_dir)} {what}",
            hint="pass --input the directory of the contract and the evidence (default /in)",
        )
    if not os.access(input_dir, os.R_OK | os.X_OK):
        raise InputError(
            "input-unreadable", f"--input {shown_path(input_dir)} is not readable", hint=hint
        )


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it (symlinks resolved; False if unresolvable)."""
    try:
        p, r = path.resolve(), root.resolve()
    except OSError:
        return False
    return p == r or r in p.parents


def check_output_dir(output_dir: Path, input_dir: Path) -> None:
    """Check the output directory lies outside the input directory, and create it writable.

    Raises:
        UsageError: the output directory lies inside the input directory (exit 64).
        OutputError: exit 73; ``output-not-directory`` for a file, FIFO, socket or device.
    """
    if is_inside(output_dir, input_dir):
        raise UsageError(
            "output-inside-input",
            f"--output {shown_path(output_dir)} is inside --input {shown_path(input_dir)}",
            hint="the input is never written to: choose an output directory outside it",
        )
    if output_dir.exists() and not output_dir.is_dir():  # a FIFO is named, never opened
        raise OutputError(
            "output-not-directory",
            f"--output {shown_path(output_dir)} is {special_file(output_dir) or 'a file'}, not a "
            "directory",
            hint="pass --output a directory for the outputs (created when absent)",
        )
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot create --output {shown_path(output_dir)}: {exc.strerror}",
            hint=unwritable_hint(output_dir, exc.errno),
        ) from exc
    if not os.access(output_dir, os.W_OK | os.X_OK):
        raise OutputError(
            "output-not-writable",
            f"--output {shown_path(output_dir)} is not writable",
            hint=unwritable_hint(output_dir),
        )


def check_directories(input_dir: Path, output_dir: Path) -> None:
    """Check the input directory is readable and the output directory writable, in that order.

    Raises:
        InputError: the input directory is missing or unreadable (exit 66).
        UsageError: the output directory lies inside the input directory (exit 64).
        OutputError: the output directory cannot be created or written (exit 73).
    """
    check_input_dir(input_dir)
    check_output_dir(output_dir, input_dir)


def inside_run_dirs(path: Path, input_dir: Path, output_dir: Path) -> str | None:
    """``"input"`` or ``"output"`` when ``path``'s directory, or ``path`` itself with every
    symlink followed (a link in a safe place to a file of a run directory), lies inside that
    run directory."""
    for root, what in ((input_dir, "input"), (output_dir, "output")):
        if is_inside(path.parent, root) or is_inside(path, root):
            return what
    return None


def refuse_inside_run_dirs(
    path: Path, input_dir: Path, output_dir: Path, *, code: str, option: str, hint: str
) -> None:
    """Refuse a file the run writes beside its outputs when it lies inside the input (never
    written to) or the output directory (every file there must be in its manifest, and a later
    run would find it foreign).

    Args:
        option: the command-line option that gave ``path`` (``--ledger``), named in the message
            and recorded in the error: ``verify`` cannot replay it from the inputs.

    Raises:
        UsageError: ``code`` (exit 64), before anything is written, also when ``path`` is a
            symlink leading into a run directory; ``path-not-regular-file`` (exit 64) when it
            exists and is not a regular file (a FIFO would block the run, a device swallow it).
    """
    what, shown = inside_run_dirs(path, input_dir, output_dir), shown_path(path)
    if what is not None:
        message = f"{option} {shown} is inside the {what} directory"
        raise UsageError(code, message, hint=hint, option=option)
    kind = special_file(path)
    if kind is not None:
        raise UsageError(
            "path-not-regular-file",
            f"{option} {shown} is {kind}, not a regular file",
            hint=f"pass {option} naming a regular file (or one not yet created)",
            option=option,
        )


def check_ledger_path(ledger: Path, input_dir: Path, output_dir: Path) -> None:
    """``refuse_inside_run_dirs`` for ``--ledger``, and its directory must exist.

    Raises:
        UsageError: ``ledger-inside-run-directory`` (exit 64), before anything is written.
        OutputError: ``ledger-unwritable`` (exit 73) when the ledger's directory does not exist,
            named by its last component (the decision record withholds --ledger's value).
    """
    refuse_inside_run_dirs(
        ledger,
        input_dir,
        output_dir,
        code="ledger-inside-run-directory",
        option="--ledger",
        hint="keep the ledger on its own volume, outside --input and --output",
    )
    if not ledger.parent.is_dir():
        raise OutputError(
            "ledger-unwritable",
            f"the directory {quoted(ledger.parent.name)} of --ledger {quoted(ledger.name)} "
            "does not exist",
            hint="create it (or mount a writable volume there), or pass another --ledger",
            option="--ledger",
        )


def require_ledger_for_plan(
    contract: ReleaseContract, ledger: Path | None, replay_look: LookRecord | None
) -> None:
    """Refuse a run of a contract with a ``sequential:`` plan that has no ledger to count with.

    A plan's looks are counted in the ledger; without ``--ledger`` every rerun would be look 1
    at the plan's first level, so a team rerunning until a pass would spend alpha again on each
    run. A ``verify --input`` replay takes its look from the record and needs no ledger.

    Raises:
        UsageError: ``sequential-plan-needs-ledger`` (exit 64).
    """
    if contract.sequential is None or ledger is not None or replay_look is not None:
        return
    raise UsageError(
        "sequential-plan-needs-ledger",
        "the contract declares a sequential plan (contract key 'sequential'), whose looks are "
        "counted in the evidence ledger, but the run was given no --ledger",
        hint="run with --ledger PATH on the volume that keeps this contract's earlier looks "
        "(the compose file and the Kubernetes overlays pass /ledger/ledger.jsonl)",
    )


def _digest(path: Path, relative: str) -> FileDigest:
    return FileDigest(path=relative, sha256=sha256_file(path), bytes=path.stat().st_size)


def is_readable_evidence(path: Path) -> bool:
    """Return whether an evidence path is a readable file or a readable dataset directory."""
    if is_dataset(path):
        return os.access(path, os.R_OK | os.X_OK)
    return is_readable_file(path)


def evidence_digests(path: Path, relative: str) -> tuple[list[FileDigest], str]:
    """The manifest digests of an evidence source and the one sha256 its rows carry.

    A file: its own digest and sha256. A dataset directory: one digest per part file, path
    ``<relative>/<part's relative path>``, sorted by path (so ``verify --input`` rechecks each
    part), and ``adapters._dataset.dataset_sha256`` of them (the sha256 of the sorted lines
    ``<sha256>  <part's relative path>``).

    Raises:
        OSError: a file cannot be read.
    """
    if not is_dataset(path):
        digest = _digest(path, relative)
        return [digest], digest.sha256
    parts = dataset_digests(path, relative)
    digests = [FileDigest(path=f"{relative}/{rel}", sha256=sha, bytes=n) for rel, sha, n in parts]
    return digests, dataset_sha256(parts)


NOTE_KEY = "note"
"""A policy config's top-level free-text note: never part of its behaviour."""


def _without(config: object, path: list[str]) -> object:
    """``config`` without the key at the dotted ``path`` (a copy of the dicts on the way)."""
    if not isinstance(config, dict) or path[0] not in config:
        return config
    out = dict(config)
    if len(path) == 1:
        del out[path[0]]
    else:
        out[path[0]] = _without(out[path[0]], path[1:])
    return out


def behavioural_sha256(inputs: Inputs, policy_id: str) -> str:
    """A policy config's identity for repeated looks: the canonical content digest
    (``Inputs.content_sha256``) of its parsed value without its top-level ``note`` and the keys the
    contract lists in ``non_behavioural_config_keys`` (dotted paths), so a config that differs
    from an earlier look's only in text that does not change the policy is the same config.
    The file's sha256 when it did not parse. With nothing to drop it equals the content digest.
    """
    config = inputs.configs.get(policy_id)
    for key in (NOTE_KEY, *inputs.contract.non_behavioural_config_keys):
        config = _without(config, key.split("."))
    return inputs.content_sha256(policy_id, config)


def refuse_identical_configs(inputs: Inputs) -> None:
    """Refuse a candidate whose policy config has the same content as the baseline's (or an
    earlier candidate's) in another file, as the contract refuses the same path.

    A copy of the baseline's config describes no candidate: its decision would list no
    difference, and an unchanged policy could be released under a new name.

    Raises:
        ContractError: ``contract-invalid`` at ``candidates[i].config``, naming both files and
            the shared canonical content digest (exit 78).
    """
    contract = inputs.contract
    seen: dict[str, tuple[str, str]] = {}
    refs = [("the baseline", contract.baseline), *((None, p) for p in contract.candidates)]
    for i, (label, policy) in enumerate(refs):
        if policy.policy_id not in inputs.config_sha:
            continue  # unreadable: the contract-references gate reports it
        digest = inputs.content_sha256(policy.policy_id)
        if digest in seen and label is None:
            other, other_path = seen[digest]
            loc = ("candidates", i - 1, "config")
            where = inputs.source.where(loc) if inputs.source else f"candidates[{i - 1}].config"
            raise ContractError(
                "contract-invalid",
                f"{where}: the config of candidate {policy.policy_id!r}, {policy.config}, has the "
                f"same content as the config of {other}, {other_path} (canonical sha256 "
                f"{digest[:12]}): a candidate's config must describe the candidate (the decision "
                "lists what differs)",
                hint="give the candidate its own config, with what differs from the baseline",
                file=policy.config,
            )
        seen.setdefault(digest, (label or f"candidate {policy.policy_id!r}", policy.config))


def read_inputs(input_dir: Path, on_progress: Callable[..., None] | None = None) -> Inputs:
    """Read the contract, the policy configs and the evidence sources of ``input_dir``.

    ``on_progress`` receives ``("source_read", source_id=, adapter=, rows=, elapsed_s=)`` after
    each evidence source is read.

    Raises:
        ContractError: no contract, one that does not validate, or policy configs of the same
            content (``refuse_identical_configs``) (exit 78).
        InputError: a reference escapes the input directory.
    """
    inputs = Inputs.read_contract(input_dir)
    contract = inputs.contract
    for policy in [contract.baseline, *contract.candidates]:
        path = resolve_inside(input_dir, policy.config)
        if not is_readable_file(path):
            inputs.unresolved.append(f"policy config {policy.config} ({policy.policy_id})")
            continue
        inputs.configs[policy.policy_id] = load_policy_config(path, policy.config)  # size-bounded
        inputs.digests.append(_digest(path, policy.config))
        inputs.config_sha[policy.policy_id] = inputs.digests[-1].sha256
    refuse_identical_configs(inputs)
    inputs._read_evidence(input_dir, on_progress or (lambda event, **fields: None))
    inputs._read_labels(input_dir)
    inputs.checks += [
        ValidationCheck(
            id="contract-reference",
            target=u,
            status="fail",
            message=f"{u} does not exist or is not readable",
        )
        for u in inputs.unresolved
    ]
    release_freed_memory()  # the files' decode buffers
    return inputs


def release_freed_memory() -> None:
    """Give memory the run has freed back to the operating system.

    Arrow's default pool (mimalloc or jemalloc) keeps freed pages for reuse, and so does
    glibc's malloc for numpy's arrays: after a 10^6-pair table is decoded, or indexed and
    dropped, several hundred MiB of freed memory would otherwise stay resident for the rest of
    the run. ``malloc_trim`` is called where the C library has it (glibc).
    """
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(AttributeError, OSError, TypeError):  # not glibc: nothing to trim
        ctypes.CDLL(None).malloc_trim(0)


def take_evidence(inputs: Inputs) -> pa.Table:
    """Every source's canonical evidence rows as one table, released from ``inputs``.

    Each ``AdapterResult.evidence`` is replaced by an empty table, so the rows live only as long
    as the returned table (the index keeps its own arrays): at 10^6 pairs the Arrow table is
    several hundred MiB that the rest of the run does not need.
    """
    table = pa.concat_tables([r.evidence for r in inputs.results])
    inputs.results[:] = [
        replace(r, evidence=r.evidence.schema.empty_table()) for r in inputs.results
    ]
    return table


def _flatten(obj: object, prefix: str = "") -> dict[str, object]:
    if isinstance(obj, dict):
        out: dict[str, object] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix or "(root)": obj}


def _scalar(value: object) -> object:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return orjson.dumps(value).decode()


def config_differences(baseline: object, candidate: object) -> list[ConfigDifference]:
    """Every leaf (dotted path) whose value differs between two parsed policy configs, sorted;
    non-scalar leaves (lists) are shown as their JSON text."""
    fb, fc = _flatten(baseline), _flatten(candidate)
    return [
        ConfigDifference(path=k, baseline=_scalar(fb.get(k)), candidate=_scalar(fc.get(k)))  # type: ignore[arg-type]
        for k in sorted(set(fb) | set(fc))
        if fb.get(k) != fc.get(k)
    ]
