"""DeepEval: test-run JSON, in the three shapes DeepEval writes.

- the results-folder file ``test_run_<YYYYMMDD_HHMMSS>.json``: one TestRun, camelCase,
  ``testCases[]`` each with ``metricsData[]``;
- ``.deepeval/.latest_test_run.json``: the same TestRun wrapped in ``{"testRunData": ...}``;
- ``EvaluationResult.model_dump()``: snake_case, ``test_results[]`` each with ``metrics_data[]``.

Fields are absent rather than null when unset. Metric display names ("Answer Relevancy") become
snake_case ids (``answer_relevancy``). A metric with ``error`` set has no score (reason
``error``); a metric missing from a test case that others have is reason ``absent``.

Judge cost (``evaluationCost`` of each metric, what the evaluator's LLM cost) is summed per test
case into ``judge_cost_usd``, never into the application's cost. The application's own
``tokenCost`` / ``completionTime`` (seconds) / token counts are read as ``cost_usd``,
``latency_ms``, ``input_tokens``, ``output_tokens`` only when ``options.include_operational``
is true (telemetry is usually the better source for them).

Errors name the test case (``row``, counting from 1) and the JSON pointer of the offending value
(``column``, e.g. ``test_run.json#/testCases/2/metricsData/0/score``).

Example id (``pairing: id-column``): ``columns.example_id`` as a path into the test case
(``name``, or ``metadata.<key>``); by default ``metadata.example_id`` if present, else the test
case ``name`` unless it is DeepEval's positional default ``test_case_<n>``, in which case the
hash of the normalized ``input`` (``question-hash``). Policy: the source's ``policy``, checked
against ``metadata.<columns.policy_id or policy>`` and ``hyperparameters.policy``.
Tested against deepeval 4.3.1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, FileShape, ToolFormat
from ragwarrant.adapters._cells import float_cell, given_twice, parse_list_literal
from ragwarrant.adapters._columns import select_metrics, snake_metric_id
from ragwarrant.adapters._common import (
    Record,
    dotted,
    metadata_policies,
    record_ids,
    records_evidence,
    resolve_policies,
    span_join_unsupported,
    tool_result,
)
from ragwarrant.adapters._integrity import json_ref
from ragwarrant.adapters._rows import check_unique_keys, make_texts
from ragwarrant.adapters._tables import invalid_json
from ragwarrant.adapters._telemetry import JUDGE_COST_METRIC
from ragwarrant.errors import EvidenceError

_POSITIONAL_NAME = re.compile(r"^test_case_\d+$")
_RUN_KEYS = ("testRunData", "testCases", "test_results")
#: Keys of a test-case list; an object holding two of them is refused (which one holds?).
_CASE_LISTS = ("testCases", "test_cases", "test_results")
#: A test case's camelCase key → its snake_case name in ``EvaluationResult.model_dump()``.
_SNAKE = {
    "metadata": "additional_metadata",
    "actualOutput": "actual_output",
    "retrievalContext": "retrieval_context",
    "metricsData": "metrics_data",
    "evaluationCost": "evaluation_cost",
}


def _signature(shape: FileShape) -> str | None:
    if shape.format != "json" or shape.document != "dict":
        return None
    key = next((k for k in _RUN_KEYS if k in shape.names), None)
    return f"JSON object with {key!r} (DeepEval test run)" if key else None


FORMAT = ToolFormat(
    "deepeval",
    "deepeval",
    "DeepEval",
    "a DeepEval test run: a JSON object with testCases (or testRunData / test_results)",
    lambda s: s.has_any(*_RUN_KEYS),
    signature=_signature,
)

# application-side fields of a test case: camelCase, snake_case, canonical id, unit scale
_OPERATIONAL = (
    ("tokenCost", "token_cost", "cost_usd", 1.0),
    ("completionTime", "completion_time", "latency_ms", 1000.0),
    ("inputTokenCount", "input_token_count", "input_tokens", 1.0),
    ("outputTokenCount", "output_token_count", "output_tokens", 1.0),
)


def parse_test_run(data: object, display: str) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """Find the test cases in any of DeepEval's three shapes.

    Returns:
        ``(test_cases, run_level, shape)`` where ``run_level`` holds run fields such as
        ``hyperparameters`` and ``shape`` names which shape was found.

    Raises:
        EvidenceError: ``evidence-duplicate-metric`` when an object holds two test-case
            lists (``testCases``, ``test_cases``, ``test_results``);
            ``evidence-missing-column`` when no test-case list is found,
            ``evidence-empty`` when it is empty, ``evidence-wrong-type`` when it is not a list of
            objects.
    """
    if not isinstance(data, dict):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} holds a JSON {type(data).__name__}, not a DeepEval test run",
            file=display,
            expected="a JSON object with testCases or test_results",
            found=type(data).__name__,
        )
    if "testRunData" in data and isinstance(data["testRunData"], dict):
        run, shape, key = data["testRunData"], "latest_test_run (testRunData)", "testCases"
    elif "test_results" in data:
        run, shape, key = data, "EvaluationResult.model_dump", "test_results"
    else:
        run, shape, key = data, "test_run (results folder)", "testCases"
    lists = [k for k in _CASE_LISTS if k in run]
    if len(lists) > 1:
        at = "/testRunData" if run is not data else ""
        raise given_twice(
            display, None, f"{at}/{lists[1]}", f"{at}/{lists[0]}", "the test-case list"
        )
    if key not in run:
        raise EvidenceError(
            "evidence-missing-column",
            f"{display} has no {key!r} list",
            hint="give DeepEval's test_run_*.json, .latest_test_run.json or "
            "EvaluationResult.model_dump()",
            file=display,
            column=key,
            expected=f"a {key!r} list",
            found=f"keys: {', '.join(list(run)[:15])}",
        )
    cases = run[key]
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display}: {key!r} is not a list of objects",
            file=display,
            column=key,
            expected="a list of test cases",
            found=type(cases).__name__,
        )
    if not cases:
        raise EvidenceError(
            "evidence-empty",
            f"{display} has no test cases ({key!r} is empty)",
            file=display,
            column=key,
            expected="at least one test case",
            found="0 test cases",
        )
    return cases, run, shape


@dataclass(frozen=True)
class _TestRun:
    """A DeepEval test run being read: the request, its test cases, the run-level fields
    (``hyperparameters``) and which of the three shapes it has (``parse_test_run``)."""

    request: AdapterRequest
    cases: list[dict[str, Any]]
    run: dict[str, Any]
    shape: str

    @classmethod
    def read(cls, request: AdapterRequest) -> _TestRun:
        """Read the source's JSON (NaN and Infinity too, as Python's ``json`` writes them).

        Raises:
            EvidenceError: ``evidence-empty`` for an empty file, ``invalid_json`` when it does
                not parse, then as ``parse_test_run``.
        """
        display = request.display_path
        raw = request.path.read_bytes()
        if not raw.strip():
            raise EvidenceError(
                "evidence-empty",
                f"{display} is empty",
                file=display,
                expected="a DeepEval test run",
                found="no bytes",
            )
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            try:  # Python's json module writes NaN / Infinity, which orjson refuses
                data = json.loads(raw)
            except ValueError:
                raise invalid_json(display, exc) from exc
        return cls(request, *parse_test_run(data, display))

    def id_path(self) -> str:
        """The path of the example id in every test case, or "" when there is none."""
        source = self.request.source
        if "example_id" in source.columns.model_fields_set:
            return source.columns.example_id
        if all(dotted(c, "metadata.example_id", _SNAKE) is not None for c in self.cases):
            return "metadata.example_id"
        names = [c.get("name") for c in self.cases]
        if all(isinstance(n, str) and not _POSITIONAL_NAME.match(n) for n in names):
            return "name"
        return ""

    def example_ids(self) -> tuple[list[str], str, str]:
        """The example ids, the pairing method and the id path (``pairing``, see the module)."""
        display = self.request.display_path
        if self.request.source.pairing == "span-join":
            raise span_join_unsupported(display, "DeepEval test runs cannot be span-joined")
        if self.request.source.pairing != "question-hash":
            path = self.id_path()
            if path:
                ids = record_ids(
                    [dotted(c, path, _SNAKE) for c in self.cases],
                    display,
                    "test case",
                    path,
                    "every test case needs its example id; set columns.example_id to its path",
                )
                return ids, "id-column", path
            if self.request.source.pairing == "id-column":
                raise EvidenceError(
                    "evidence-missing-column",
                    f"{display}: no id for id-column pairing "
                    "(names are DeepEval's positional defaults)",
                    hint="set columns.example_id to e.g. metadata.question_id",
                    file=display,
                    column="name",
                    expected="named test cases",
                    found="test_case_<n>",
                )
        questions = [c.get("input") for c in self.cases]
        ids = record_ids(questions, display, "test case", "input", questions=True)
        return ids, "question-hash", "input"

    def policies(self) -> list[str]:
        """Each test case's policy: the source's, or ``metadata.<columns.policy_id or policy>``,
        else the run's ``hyperparameters.policy``."""
        key = self.request.source.columns.policy_id or "policy"
        hyper = self.run.get("hyperparameters") or {}
        run_policy = hyper.get("policy") if isinstance(hyper, dict) else None
        metas = (dotted(c, "metadata", _SNAKE) for c in self.cases)
        named = metadata_policies(metas, key, run_policy)
        rows = list(range(1, len(self.cases) + 1))
        return resolve_policies(self.request, named, rows, f"metadata.{key}")

    def texts(self, policies: list[str], examples: list[str]) -> pa.Table:
        """The private texts: input, actualOutput and retrievalContext of each test case."""
        cases, display = self.cases, self.request.display_path
        questions = [c.get("input") if isinstance(c.get("input"), str) else None for c in cases]
        responses = [dotted(c, "actualOutput", _SNAKE) for c in cases]
        contexts = [
            parse_list_literal(
                dotted(c, "retrievalContext", _SNAKE), display, i, "retrievalContext"
            )
            for i, c in enumerate(cases, start=1)
        ]
        return make_texts(policies, examples, questions, responses, contexts, display=display)

    def available(self, read: list[_Case]) -> tuple[dict[str, str], dict[str, str]]:
        """``(metrics, everything)``: metric name → id in first-seen order in the test cases'
        metric results (``read``); plus judge cost when present and, with
        ``options.include_operational``, the operational fields present."""
        available: dict[str, str] = {}
        judge_cost_seen = False
        for c in read:
            for name, (_, m) in c.metrics.items():
                available.setdefault(name, snake_metric_id(name))
                judge_cost_seen = judge_cost_seen or dotted(m, "evaluationCost", _SNAKE) is not None
        ops_available = {}
        if self.request.source.options.get("include_operational", False):
            for camel, snake, metric, _ in _OPERATIONAL:
                if any(camel in c or snake in c for c in self.cases):
                    ops_available[camel] = metric
        judge = {"evaluationCost": JUDGE_COST_METRIC} if judge_cost_seen else {}
        return available, {**available, **ops_available, **judge}


Cell = tuple[float | None, str | None]


#: Where each shape keeps its test cases, as a JSON pointer.
_CASES_POINTER = {
    "latest_test_run (testRunData)": "/testRunData/testCases",
    "EvaluationResult.model_dump": "/test_results",
    "test_run (results folder)": "/testCases",
}


@dataclass(frozen=True)
class _Case:
    """One test case being read: the case, its metric results by name (each with its index in
    ``metricsData``), the file, the case's 1-based number and its JSON pointer."""

    case: dict[str, Any]
    metrics: dict[str, tuple[int, dict[str, Any]]]
    display: str
    i: int
    pointer: str

    @classmethod
    def of(cls, case: dict[str, Any], i: int, display: str, base: str) -> _Case:
        """Index the ``i``-th test case's metric results (``base``: the cases' JSON pointer).

        Raises:
            EvidenceError: ``evidence-wrong-type`` when metricsData is not a list;
                ``evidence-missing-column`` for a metric result without a name;
                ``evidence-duplicate-metric`` for a second result of one metric, or both
                ``metricsData`` and ``metrics_data`` in the case.
        """
        here = f"{base}/{i - 1}"
        if "metricsData" in case and "metrics_data" in case:
            raise given_twice(
                display, i, f"{here}/metrics_data", f"{here}/metricsData", "the metric-result list"
            )
        key = "metricsData" if "metricsData" in case else "metrics_data"
        mlist = case.get(key) or []
        if not isinstance(mlist, list):
            raise EvidenceError(
                "evidence-wrong-type",
                f"{display} test case {i}: metricsData is not a list",
                file=display,
                row=i,
                column="metricsData",
                expected="a list",
                found=type(mlist).__name__,
            )
        by_name: dict[str, tuple[int, dict[str, Any]]] = {}
        for j, m in enumerate(mlist):
            name = m.get("name") if isinstance(m, dict) else None
            if not isinstance(name, str) or not name:
                raise EvidenceError(
                    "evidence-missing-column",
                    f"{display} test case {i}: metricsData[{j}] has no name",
                    file=display,
                    row=i,
                    column=f"metricsData[{j}].name",
                    expected="a metric name",
                    found=repr(m)[:40],
                )
            if name in by_name:
                first = f"{here}/{key}/{by_name[name][0]}"
                raise given_twice(display, i, f"{here}/{key}/{j}", first, f"metric {name!r}")
            by_name[name] = (j, m)
        return cls(case, by_name, display, i, here)

    def _float(self, value: Any, j: int, field: str) -> Cell:
        """``float_cell`` of the ``j``-th metric result's ``field``, located by JSON pointer."""
        key = "metricsData" if "metricsData" in self.case else "metrics_data"
        ref = json_ref(self.display, f"{self.pointer}/{key}/{j}/{field}")
        return float_cell(value, self.display, self.i, ref)

    def metric(self, name: str) -> Cell:
        """The score of metric ``name`` (reason ``absent`` / ``error`` without one)."""
        if name not in self.metrics:
            return None, "absent"
        j, m = self.metrics[name]
        if m.get("error") not in (None, ""):
            return None, "error"
        if "score" not in m:
            return None, "absent"
        return self._float(m["score"], j, "score")

    def judge_cost(self) -> Cell:
        """The sum of the metric results' ``evaluationCost`` (missing if any is not a number)."""
        parsed = []
        for j, m in self.metrics.values():
            field = "evaluationCost" if "evaluationCost" in m else "evaluation_cost"
            if m.get(field) is not None:
                parsed.append(self._float(m[field], j, field))
        if not parsed:
            return None, "absent"
        bad = next((r for v, r in parsed if v is None), None)
        if bad is not None:
            return None, bad
        return sum(v for v, _ in parsed if v is not None), None

    def operational(self, name: str) -> Cell:
        """The application's field ``name`` (camelCase, or its snake_case twin), in our unit."""
        camel, snake, _, scale = next(o for o in _OPERATIONAL if o[0] == name)
        if camel not in self.case and snake not in self.case:
            return None, "absent"
        field = camel if camel in self.case else snake
        ref = json_ref(self.display, f"{self.pointer}/{field}")
        v, r = float_cell(self.case[field], self.display, self.i, ref)
        return (v * scale if v is not None else None), r


def load(request: AdapterRequest) -> AdapterResult:
    """Read a DeepEval test run into canonical evidence and private texts.

    Returns:
        Evidence with one row per (test case, metric), plus ``judge_cost_usd`` when the file has
        ``evaluationCost``; texts (input, actualOutput, retrievalContext).

    Raises:
        EvidenceError: not JSON; no test cases; a score that is not a number; a missing or
            duplicated example id; rows of another policy; a wanted metric the file lacks.
    """
    source, display = request.source, request.display_path
    test_run = _TestRun.read(request)
    cases, shape = test_run.cases, test_run.shape
    examples, pairing, key_path = test_run.example_ids()
    policies = test_run.policies()
    rows = list(range(1, len(cases) + 1))
    check_unique_keys(policies, examples, rows, display, key_path)
    base = _CASES_POINTER[shape]
    read = [_Case.of(case, i, display, base) for i, case in enumerate(cases, start=1)]
    available, available_all = test_run.available(read)
    chosen = select_metrics(available_all, source.metrics, display)

    records: list[Record] = []
    errors = 0
    for c, p, e in zip(read, policies, examples, strict=True):
        for name, metric in chosen.items():
            if name in available:
                cell = c.metric(name)
                errors += cell[1] == "error"
            elif name == "evaluationCost":
                cell = c.judge_cost()
            else:
                cell = c.operational(name)
            records.append((p, e, metric, *cell, c.i))
    notes = [f"file shape: {shape}"]
    if errors:
        notes.append(
            f"{errors} metric result(s) carry an error and count as missing (reason 'error')"
        )
    if "evaluationCost" in chosen:
        notes.append(
            "judge cost: sum of metricsData[].evaluationCost per test case → "
            f"{chosen['evaluationCost']}"
        )
    if pairing == "question-hash":
        notes.append("example ids are qh:<sha256 prefix> of the normalized 'input' text")
    return tool_result(
        request,
        FORMAT,
        evidence=records_evidence(request, FORMAT, records),
        metric_names=chosen,
        pairing_method=pairing,
        rows_read=len(cases),
        notes=notes,
        texts=test_run.texts(policies, examples),
    )
