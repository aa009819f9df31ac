"""``ragwarrant init``: a first release contract drafted from the user's own exports.

Each file's tool is detected by the ``auto`` adapter's rules (``adapters.auto.detect``);
``scaffold_specs.SPECS`` says per tool where its pairing key and policy may be and how rows pair
without a key, which gives each export its evidence source. Every results file is then read **by
its own adapter**, so the draft lists the scores as ``run`` will read them: each with its scale
(``[0, 1]`` when every value lies in it, else the observed range to check), the direction the
export declares (a Phoenix Score's ``direction``, TruLens' ``<name> direction``) or the tool
documents, and ``on_missing: worst`` naming the rows without a value. Counts, tokens, times and
costs are never quality metrics (they come from telemetry). A file without a policy column takes
its policy from its name or folder (``baseline``/``candidate``), else its file name (CHECK).

The draft leaves null only the user's judgement: an unknown ``direction``, every ``margin_abs``
(a margin is a release decision, not a setting), the claim's ``items`` and ``evidence_class``;
it does not validate until they are declared. ``init`` also writes a stub config per policy
(``policies/<id>.yaml``) that it never overwrites.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast, get_args

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import yaml

from ragwarrant import scaffold_specs as specs
from ragwarrant.adapters import auto
from ragwarrant.adapters._base import AdapterRequest, AdapterResult
from ragwarrant.adapters._columns import looks_numeric_column, snake_metric_id
from ragwarrant.adapters._tables import read_table
from ragwarrant.adapters.deepeval import parse_test_run
from ragwarrant.adapters.otel import DEFAULT_METRICS
from ragwarrant.adapters.phoenix import eval_name, is_spans_parquet
from ragwarrant.adapters.registry import load_source
from ragwarrant.contract import IDENTIFIER_PATTERN, EvidenceSource, PolicyRef, ReleaseContract
from ragwarrant.digests import sha256_file
from ragwarrant.display import template, visible
from ragwarrant.errors import ContractError, EvidenceError, InputError


@dataclass(frozen=True)
class MetricGuess:
    """One metric of an export, with what is known about it.

    ``low``/``high`` are the observed finite range (None before the adapter read the file);
    ``missing`` lists the 1-based rows (of the file, as the adapter counts them) without a value.
    """

    column: str
    metric_id: str
    kind: Literal["quality", "operational"]
    direction: specs.Direction | None
    why: str
    low: float | None = None
    high: float | None = None
    missing: tuple[int, ...] = ()

    @property
    def scale(self) -> tuple[float, float]:
        """``(0, 1)`` when every observed value lies in it, else the observed range, widened to
        whole numbers."""
        if self.low is None or self.high is None:
            return (0.0, 1.0)
        if self.low >= -specs.SCALE_TOLERANCE and self.high <= 1 + specs.SCALE_TOLERANCE:
            return (0.0, 1.0)
        low, high = float(math.floor(self.low)), float(math.ceil(self.high))
        return (low, high if high > low else low + 1)

    @classmethod
    def of(cls, adapter: str, column: str) -> MetricGuess:
        """The guess for a score column of ``adapter``'s export: its metric id (snake case, less
        TruLens' ``feedback.``), direction (``specs.guess_direction``) and kind."""
        metric_id = snake_metric_id(column.removeprefix("feedback."))
        direction, why = specs.guess_direction(adapter, metric_id)
        quality = specs.is_quality(metric_id)
        return cls(column, metric_id, "quality" if quality else "operational", direction, why)


@dataclass(frozen=True)
class ExportSummary:
    """What ``init`` saw in one export file."""

    path: str
    format: str
    adapter: str
    detected: str
    rows: int
    metrics: list[MetricGuess]
    id_column: str | None
    policy_column: str | None
    policies: list[str]
    slice_column: str | None
    slices: list[str]
    split_column: str | None
    splits: list[str]
    notes: list[str] = field(default_factory=list)
    file: Path | None = None
    spans_file: bool = False
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    long: tuple[str, str] | None = None  # a generic table's metric-name and value columns

    @property
    def kind(self) -> Literal["results", "telemetry"]:
        """``telemetry`` for spans (otel, Phoenix spans) or operational metrics only."""
        if self.adapter == "otel" or self.spans_file:
            return "telemetry"
        if self.metrics and all(m.kind == "operational" for m in self.metrics):
            return "telemetry"
        return "results"

    @property
    def pairing(self) -> specs.Pairing:
        """How rows get their example id: the id column, else the tool's way (``SPECS``)."""
        if self.id_column and not (self.adapter == "phoenix" and self.kind == "results"):
            return "id-column"
        return specs.spec_of(self.adapter).without_id

    @property
    def source_id(self) -> str:
        """A contract source id derived from the file name (and its role, when only the folder
        names it)."""
        stem = snake_metric_id(Path(self.path).stem).replace("_", "-")
        if self.role and self.role not in stem:
            stem = f"{self.role}-{stem}"
        return stem[:60] or "source"

    @property
    def file_policy(self) -> str | None:
        """The policy of a file that names none inside: its role word, else its file name."""
        if self.policies:
            return None
        if self.role or self.policy_column:  # a policy field the reader cannot list (Phoenix)
            return self.role
        return snake_metric_id(Path(self.path).stem).replace("_", "-")

    @property
    def role(self) -> str | None:
        """``baseline`` or ``candidate`` when the file's name or folder says so."""
        roles = set(re.split(r"[^a-z0-9]+", self.path.lower())).intersection(specs.ROLE_WORDS)
        return roles.pop() if len(roles) == 1 else None

    def source(self, exports: Sequence[ExportSummary]) -> dict[str, Any]:
        """The evidence source of this export, as the contract's YAML mapping."""
        phoenix_results = self.adapter == "phoenix" and self.kind == "results"
        spans = self._spans_of(exports) if phoenix_results else None
        entry: dict[str, Any] = {"id": self.source_id, "path": self.path, "format": self.format}
        entry["adapter"] = self.adapter
        if spans:
            entry["options"] = {"spans": spans.path}
        if self.kind == "telemetry":
            entry["kind"] = "telemetry"
        if (policy := self.file_policy) is not None:
            entry["policy"] = policy
        entry["pairing"] = self.pairing
        return entry | self._fields(spans or self)

    def _spans_of(self, exports: Sequence[ExportSummary]) -> ExportSummary | None:
        """The spans file of a Phoenix evaluations file: one given with it (never one of the other
        role; of the same role and folder first, then of the same role, then of the same folder),
        else the one beside it (``_spans_beside``)."""
        folder, role = Path(self.path).parent, self.role
        given = [s for s in exports if s.spans_file and (not role or s.role in (None, role))]
        given.sort(key=lambda s: (not (role and s.role == role), folder != Path(s.path).parent))
        return given[0] if given else self._spans_beside(folder)

    def _spans_beside(self, folder: Path) -> ExportSummary | None:
        """The one Phoenix spans file in the folder of evaluations given without their spans (the
        one whose name has the file's role, when several), described; else None."""
        if self.file is None or self.pairing != "span-join":
            return None
        found = [p for p in sorted(self.file.parent.glob("*.parquet")) if is_spans_parquet(p)]
        same = [p for p in found if self.role and self.role in p.name.lower()]
        pick = same[0] if len(same) == 1 else found[0] if len(found) == 1 else None
        return describe_export(pick, str(folder / pick.name)) if pick else None

    def _fields(self, key: ExportSummary) -> dict[str, Any]:
        """``columns`` of this export (``key`` holds its example id and policy: its spans file,
        for Phoenix evaluations), ``metrics`` of a results export, ``reduce`` of a generic
        telemetry one."""
        columns = {"example_id": key.id_column, "policy_id": key.policy_column}
        columns |= {"slice": self.slice_column, "split": self.split_column}
        fields: dict[str, Any] = {"layout": "long"} if self.long else {}
        columns |= dict(zip(("metric", "value"), self.long, strict=True)) if self.long else {}
        fields["columns"] = {k: v for k, v in columns.items() if v}
        quality = {m.column: m.metric_id for m in self.metrics if m.kind == "quality"}
        ops = [m for m in self.metrics if m.kind == "operational"]
        if self.kind == "results":
            fields["metrics"] = quality
        elif self.adapter == "generic":
            fields["reduce"] = {m.metric_id: {"column": m.column, "how": "sum"} for m in ops}
        return {k: v for k, v in fields.items() if v}

    def observe(
        self, entry: dict[str, Any], policies: Sequence[str]
    ) -> tuple[ExportSummary, dict[str, Any]]:
        """Read a results export with its own adapter: its scores, ranges and missing rows."""
        if self.kind != "results" or self.file is None or not policies:
            return self, entry
        if isinstance(result := self._read(entry, policies), str):
            notes = [*self.notes, f"not read by its adapter: {result}"]
            return replace(self, notes=notes), entry
        scores = self._scores(result)  # each with its column as the export names it
        quality = {s.column: s.metric_id for s in scores if s.kind == "quality"}
        others = ", ".join(s.metric_id for s in scores if s.kind != "quality")
        notes = [f"not proposed as quality (a count, time or cost): {others}"] * bool(others)
        entry = entry | ({"metrics": quality} if quality and not self.long else {})
        return replace(self, metrics=scores, notes=[*self.notes, *notes]), entry

    def _read(self, entry: dict[str, Any], policies: Sequence[str]) -> AdapterResult | str:
        """The export read by its adapter as ``entry`` declares it (every metric of a tool's
        export), or why it could not be read."""
        # a tool's adapter lists every metric itself; a generic table and a SpanEvaluations frame
        # (one ``score`` column, named by init) are read as the draft maps them
        named = [m.column for m in self.metrics] == ["score"] and self.metrics[
            0
        ].metric_id != "score"
        keep = self.adapter == "generic" or (self.adapter == "phoenix" and named)
        probe = entry if keep else {k: v for k, v in entry.items() if k != "metrics"}
        # an unvalidated contract with the few fields an adapter reads (the draft has no margins)
        refs = [PolicyRef.model_construct(policy_id=p, config="") for p in policies]
        stub = ReleaseContract.model_construct(  # type: ignore[call-arg]
            baseline=refs[0], candidates=refs[1:], prices={}, operational_metrics=[]
        )
        try:
            file = cast(Path, self.file)
            return load_source(EvidenceSource.model_validate(probe), file, sha256_file(file), stub)
        except (EvidenceError, ContractError, ValueError) as exc:
            return getattr(exc, "message", None) or str(exc).splitlines()[0]

    def _scores(self, result: AdapterResult) -> list[MetricGuess]:
        """One ``MetricGuess`` per metric the adapter read (canonical evidence rows), with its
        observed finite range, its missing rows and the direction the export declares."""
        evidence, names = result.evidence, result.provenance.metric_names
        original = {metric: column for column, metric in names.items()}
        out = []
        for metric in sorted(set(evidence.column("metric").to_pylist())):
            rows = evidence.filter(pc.equal(evidence.column("metric"), metric))
            ok = pc.fill_null(pc.is_finite(rows.column("value")), False)
            missed = pc.filter(rows.column("source_row"), pc.invert(ok)).fill_null(0).to_pylist()
            mm = pc.min_max(pc.filter(rows.column("value"), ok))
            guess = MetricGuess.of(self.adapter, metric)
            if (declared := result.directions.get(metric)) in get_args(specs.Direction):
                why = "as the export itself declares it"
                guess = replace(guess, direction=cast(specs.Direction, declared), why=why)
            low, high, column = mm["min"].as_py(), mm["max"].as_py(), original.get(metric, metric)
            guess = replace(guess, metric_id=metric, column=column, low=low, high=high)
            out.append(replace(guess, missing=tuple(sorted(missed))))
        return out


def _detect(path: Path, fmt: str, display: str) -> tuple[str, str]:
    """The tool adapter that reads ``path`` (auto's rules), or ``generic`` with the reason."""
    source = EvidenceSource(id="init", path=path.name, format=fmt, adapter="auto")  # type: ignore[arg-type]
    digest = sha256_file(path)
    # detect reads only the source's format and the file; it never looks at the contract.
    request = AdapterRequest(source, path, display, digest, cast(ReleaseContract, None))
    try:
        return auto.detect(request)
    except EvidenceError as exc:
        if exc.code != "evidence-format-unknown":
            raise
        return "generic", "no tool's layout matched: read as a generic table"


def _first(names: Sequence[str], wanted: Sequence[str]) -> str | None:
    return next((w for w in wanted if w in names), None)


@dataclass(frozen=True)
class _Table:
    """One tabular export as ``init`` reads it, with the adapter that reads it and its key
    names: the column names, and the fields of an ``attributes.metadata`` struct (Phoenix
    spans)."""

    path: Path
    table: pa.Table
    adapter: str
    names: list[str]

    @classmethod
    def read(cls, path: Path, fmt: str, display: str, adapter: str) -> _Table:
        """Read ``path`` (``read_table``'s errors) and list its key names."""
        table = read_table(path, fmt, display)
        names = list(table.column_names)
        if "attributes.metadata" in names:
            kind = table.schema.field("attributes.metadata").type
            if pa.types.is_struct(kind):
                names += [kind.field(i).name for i in range(kind.num_fields)]
        return cls(path, table, adapter, names)

    def evaluation_name(self) -> tuple[str, list[str]] | None:
        """The metric id of a legacy Phoenix SpanEvaluations frame (``label, score, explanation``)
        and the note saying where it comes from: the ``eval_name`` Phoenix saves in the Parquet
        metadata, else the file name less its tool, shape and role words (marked CHECK); None for
        other frames."""
        names, path = self.names, self.path
        frame = "score" in names and not {"annotation_name", "document_position"} & set(names)
        if self.adapter != "phoenix" or not frame or any(c.endswith("_score") for c in names):
            return None
        if path.suffix == ".parquet" and (name := eval_name(path)):
            return snake_metric_id(name), []
        words = snake_metric_id(path.stem).split("_")
        name = "_".join(w for w in words if w not in specs.PHOENIX_FILE_WORDS) or "score"
        note = f"CHECK: the metric id {name} is the evaluation's name as the file name says it"
        return name, [note]

    def values(self, column: str | None, limit: int = 50) -> list[str]:
        """The first ``limit`` distinct non-empty values of ``column``, sorted as text."""
        if column is None or column not in self.table.column_names:
            return []
        seen = {str(v) for v in self.table.column(column).to_pylist() if v is not None} - {""}
        return sorted(seen)[:limit]

    def metrics(self, keys: set[str], telemetry: bool) -> list[MetricGuess]:
        """The numeric columns that are no key, id or known non-metric; for telemetry a tool's
        adapter reads, the metrics it derives from the spans."""
        adapter, table = self.adapter, self.table
        if telemetry and adapter != "generic":  # the adapter derives these from the spans
            why = f"derived by the {adapter} adapter from the spans; lower is better"
            return [
                MetricGuess(m, m, "operational", "lower_is_better", why) for m in DEFAULT_METRICS
            ]
        return [
            MetricGuess.of(adapter, name)
            for name in table.column_names
            if name not in keys | specs.NOT_METRICS
            and not name.lower().endswith("id")
            and looks_numeric_column(table, name)
        ]

    def settings(self, policy_col: str | None) -> dict[str, dict[str, Any]]:
        """The models each policy called (key: the policy column's value, or "" for the file)."""
        table = self.table
        model = _first(table.column_names, specs.MODEL_COLUMNS)
        if model is None or model == policy_col:
            return {}
        named = policy_col in table.column_names
        policies = table.column(policy_col).to_pylist() if named else [""] * table.num_rows
        seen: dict[str, set[str]] = {}
        for policy, name in zip(policies, table.column(model).to_pylist(), strict=True):
            if name is not None:
                seen.setdefault(str(policy or ""), set()).add(str(name))
        return {p: {"model": sorted(names)} for p, names in seen.items()}

    def check_policy_ids(self, column: str | None, display: str) -> None:
        """Refuse a policy value that is no contract id: it would name a file under ``policies/``.

        Raises:
            EvidenceError: ``init-policy-id`` naming the file, the row (1-based, as the adapters
                count) and the column.
        """
        if column is None or column not in self.table.column_names:
            return
        for row, value in enumerate(self.table.column(column).to_pylist(), start=1):
            text = "" if value is None else str(value)
            if text and not re.fullmatch(IDENTIFIER_PATTERN, text):
                raise EvidenceError(
                    "init-policy-id",
                    f"{display} row {row}, column {column!r}: the policy (not shown: it may be "
                    "private) is not a contract policy id (a letter or digit, then letters, "
                    "digits and ._:@/+-)",
                    hint="rename the policy in the export (it is also the stub's file name under "
                    "policies/), then run init again",
                    file=display,
                    row=row,
                    column=column,
                )

    def long_layout(self) -> tuple[str, str] | None:
        """The metric-name and value columns of a generic table in long layout (one row per
        example and metric: a text metric column beside a value column), else None."""
        metric = _first(self.names, specs.METRIC_COLUMNS)
        value = _first(self.names, specs.VALUE_COLUMNS)
        if self.adapter != "generic" or metric is None or value is None:
            return None
        return None if looks_numeric_column(self.table, metric) else (metric, value)


def _describe_json(
    path: Path, display: str, fmt: str, adapter: str, detected: str
) -> ExportSummary:
    """A JSON export: a DeepEval test run's cases (``parse_test_run``: the id in their
    metadata, the run's hyperparameters), or an OTLP document (telemetry, no rows listed)."""
    data = orjson.loads(path.read_bytes())
    cases, run, _ = parse_test_run(data, display) if adapter == "deepeval" else ([], {}, "")
    meta = cases[0].get("metadata") if cases else None
    names = [f"metadata.{k}" for k in meta] if isinstance(meta, dict) else []
    id_col = _first(names, specs.spec_of(adapter).id_columns)
    hyper = run.get("hyperparameters")
    return ExportSummary(
        display, fmt, adapter, detected, len(cases), [], id_col, None, [], None, [], None, [],
        file=path, settings={"": {"hyperparameters": hyper}} if isinstance(hyper, dict) else {},
    )  # fmt: skip


def describe_export(path: Path, display: str | None = None) -> ExportSummary:
    """Detect the tool of one export and list its metrics, keys, policies, slices and splits.

    Raises:
        InputError: the file's suffix is not .csv, .jsonl, .parquet or .json; its name holds
            control characters.
        EvidenceError: the file is empty or not of its format (from the adapters' readers);
            ``init-policy-id`` for a policy value that is no contract id.
    """
    display = display or path.name
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in display):
        raise InputError(
            "init-path",
            f"{visible(display)}: a contract cannot name a file with control characters",
            hint="rename the file (no newline, tab or escape character), then run init again",
        )
    fmt = specs.FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            "init-format",
            f"{display}: cannot tell the format from the suffix {path.suffix!r}",
            hint="use a .csv, .jsonl, .parquet or .json export",
        )
    adapter, detected = _detect(path, fmt, display)
    if fmt == "json":
        return _describe_json(path, display, fmt, adapter, detected)
    t = _Table.read(path, fmt, display, adapter)
    spec, names = specs.spec_of(adapter), t.names
    spans = adapter == "phoenix" and "context.trace_id" in names
    id_col, policy_col = _first(names, spec.id_columns), _first(names, spec.policy_columns)
    slice_col, split_col = _first(names, specs.SLICE_COLUMNS), _first(names, specs.SPLIT_COLUMNS)
    keys = {c for c in (id_col, policy_col, slice_col, split_col) if c is not None}
    t.check_policy_ids(policy_col, display)
    long = t.long_layout()
    metrics = [] if long else t.metrics(keys, adapter == "otel" or spans)
    named = t.evaluation_name()
    if named:  # the frame's one score column is this evaluation
        metrics = [replace(MetricGuess.of(adapter, named[0]), column="score")]
    return ExportSummary(
        path=display, format=fmt, adapter=adapter, detected=detected, rows=t.table.num_rows,
        metrics=metrics, id_column=id_col, policy_column=policy_col,
        policies=t.values(policy_col), slice_column=slice_col,
        slices=t.values(slice_col), split_column=split_col,
        splits=t.values(split_col), file=path, spans_file=spans,
        settings=t.settings(policy_col), notes=named[1] if named else [], long=long,
    )  # fmt: skip


def _policies(exports: Sequence[ExportSummary]) -> list[str]:
    """Every policy seen, the baseline first when one is called ``baseline``."""
    seen = {p for e in exports for p in e.policies}
    seen |= {p for e in exports if (p := e.file_policy)}
    return sorted(seen, key=lambda p: (p != "baseline", p))


def _split_roles(splits: list[str]) -> dict[str, Any]:
    """Guess which split decides (confirm*/test/holdout) and which develops (dev*/train/tune).

    Returns ``{}`` without splits, else ``confirmatory``, ``development`` (None when no value
    looks like one) and ``unused``: the other values, whose rows no role takes.
    """
    if not splits:
        return {}
    confirm = next((s for s in splits if s.lower().startswith(specs.CONFIRM_NAMES)), splits[-1])
    rest = [s for s in splits if s != confirm]
    develop = next((s for s in rest if s.lower().startswith(specs.DEVELOP_NAMES)), None)
    unused = [s for s in rest if s != develop]
    return {"confirmatory": confirm, "development": develop, "unused": unused}


def _missing_note(metric_id: str, exports: Sequence[ExportSummary]) -> str | None:
    """Where ``metric_id`` has no value: ``<file> row(s) ...`` per file, or None."""
    parts = [
        f"{e.path} row{'s' if len(m.missing) > 1 else ''} {', '.join(map(str, m.missing[:10]))}"
        + (f" (+{len(m.missing) - 10} more)" if len(m.missing) > 10 else "")
        for e in exports
        for m in e.metrics
        if m.metric_id == metric_id and m.missing
    ]
    return "; ".join(parts) or None


#: The contract draft's filters: ``q`` a JSON string (a JSON string is YAML; the draft is YAML,
#: not HTML, so nothing is HTML-escaped), ``block`` a mapping indented, ``v`` a value shown in a
#: comment (a newline would end it and start a YAML line).
_DRAFT_FILTERS = (
    ("q", lambda v: orjson.dumps(str(v)).decode()),
    (
        "block",
        lambda value, indent: textwrap.indent(
            yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=100),
            " " * indent,
            bool,
        ).rstrip("\n"),
    ),
    ("v", visible),
)


def draft_contract(exports: Sequence[ExportSummary], contract_id: str = "my-release") -> str:
    """The commented YAML draft of a release contract for ``exports``.

    Policies come from the files' policy columns, or per file from its name (``baseline`` /
    ``candidate`` when the name or folder says so); a policy named ``baseline`` is proposed as
    the baseline, else the first. Each results file is read by its adapter to list its scores.
    Quality metrics carry ``margin_abs: null``: the draft fails validation until each is declared.
    """
    policies = _policies(exports)
    pairs = [e.observe(e.source(exports), policies) for e in exports]
    seen = [e for e, _ in pairs]
    scored = [(e.kind, m) for e in seen for m in e.metrics]
    quality = {m.metric_id: m for kind, m in scored if kind == "results" and m.kind == "quality"}
    operational = {m.metric_id: m for kind, m in scored if kind == "telemetry"}
    draft = template("contract.yaml.j2", _DRAFT_FILTERS)
    return draft.render(
        contract_id=contract_id,
        sources=pairs,
        policies=policies,
        quality=[(m, _missing_note(m.metric_id, seen)) for m in quality.values()],
        operational=list(operational.values()),
        units=specs.UNITS,
        slices=sorted({s for e in exports for s in e.slices}),
        splits=_split_roles(sorted({s for e in exports for s in e.splits})),
    )
