"""Bad inputs a new user makes, each run through ``ragwarrant run`` as a subprocess.

Every case copies a shipped example (``examples/*``) or real exports (``tests/data/exports``) into
a temporary input directory, breaks one thing, runs the CLI and records the exit code, the run
class and the first located message (the failed run gate's reason, the blocked candidate's first
reason, or the error message). A case passes when it ends as expected — a BLOCK (12) or a refusal
(78 contract, 66 input) with a located message, or the original decision for an input that is
valid in a different encoding — and never with 70, a traceback, or a decision on defective
evidence.

Prints a Markdown table; exit status 1 when any case fails.

Usage: ``.venv/bin/python bench/new_user_trial.py [--only WORD ...] [--markdown docs/fuzz.md]``
(``--markdown`` replaces the file's "New-user trial" section, keeping the rest).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
EXPORTS = REPO / "tests" / "data" / "exports"
CLI = [sys.executable, "-m", "ragwarrant"]

Mutate = Callable[[Path, dict[str, Any]], None]


@dataclass(frozen=True)
class Case:
    """One bad input: the example it starts from, what it breaks, the acceptable exit codes."""

    name: str
    example: str
    mutate: Mutate
    accept: tuple[int, ...]


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _write_rows(path: Path, rows: list[list[str]], newline: str = "\n", bom: bool = False) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator=newline).writerows(rows)
    path.write_bytes(("\ufeff" if bom else "").encode() + buf.getvalue().encode())


FAQ = "evidence/results.csv"


def _candidate_is_baseline(root: Path, c: dict[str, Any]) -> None:
    c["candidates"][0]["policy_id"] = c["baseline"]["policy_id"]


def _source_twice(root: Path, c: dict[str, Any]) -> None:
    c["evidence"].append(dict(c["evidence"][0]))


def _same_file_two_ids(root: Path, c: dict[str, Any]) -> None:
    c["evidence"].append({**c["evidence"][0], "id": "faq-eval-again"})


def _two_sources_same_metric(root: Path, c: dict[str, Any]) -> None:
    src = root / "evidence/ragas/ragas_evaluate_baseline.csv"
    shutil.copy(src, root / "evidence/ragas/ragas_rerun_baseline.csv")
    c["evidence"].append(
        {**c["evidence"][0], "id": "ragas-rerun", "path": "evidence/ragas/ragas_rerun_baseline.csv"}
    )


def _protected_slice_absent(root: Path, c: dict[str, Any]) -> None:
    c["protected_slices"].append({"value": "Dialogue", "margin_abs": 0.1, "min_paired_n": 30})


def _metric_trailing_space(root: Path, c: dict[str, Any]) -> None:
    c["quality_metrics"][0]["id"] = "correct "


def _header_only(root: Path, c: dict[str, Any]) -> None:
    _write_rows(root / FAQ, _rows(root / FAQ)[:1])


def _ids_differ_by_case(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    for r in rows[1:]:
        if r[1] == "candidate-small":
            r[0] = r[0].upper()
    _write_rows(root / FAQ, rows)


def _ids_nfc_vs_nfd(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    for r in rows[1:]:
        form = "NFD" if r[1] == "candidate-small" else "NFC"
        r[0] = unicodedata.normalize(form, f"café-{r[0]}")
    _write_rows(root / FAQ, rows)


def _crlf_bom(root: Path, c: dict[str, Any]) -> None:
    _write_rows(root / FAQ, _rows(root / FAQ), newline="\r\n", bom=True)


def _jsonl_trailing_comma(root: Path, c: dict[str, Any]) -> None:
    for policy in ("baseline", "candidate"):
        src = EXPORTS / f"ragas/ragas_evaluate_{policy}.jsonl"
        lines = src.read_text().splitlines()
        if policy == "candidate":
            lines[4] = lines[4].rstrip().rstrip("}") + ", }"
        (root / f"evidence/ragas/ragas_evaluate_{policy}.jsonl").write_text("\n".join(lines) + "\n")
    for s in c["evidence"][:2]:
        s["path"] = s["path"].replace(".csv", ".jsonl")
        s["format"] = "jsonl"


def _parquet_dictionary_floats(root: Path, c: dict[str, Any]) -> None:
    path = root / "evidence/telemetry.parquet"
    t = pq.read_table(path)
    cols = [
        pa.compute.dictionary_encode(col) if pa.types.is_floating(col.type) else col
        for col in t.columns
    ]
    pq.write_table(pa.table(cols, names=t.column_names), path)


def _timestamps_in_future(root: Path, c: dict[str, Any]) -> None:
    path = root / "evidence/otel/otel_genai_telemetry.parquet"
    t = pq.read_table(path)
    shift = 80 * 365 * 24 * 3600 * 10**9
    cols = {}
    for name in t.column_names:
        col = t.column(name)
        if "time" in name and pa.types.is_integer(col.type):
            col = pa.compute.add(col, pa.scalar(shift, col.type))
        cols[name] = col
    pq.write_table(pa.table(cols), path)


def _symlink_outside(root: Path, c: dict[str, Any]) -> None:
    outside = root.parent / "outside.csv"
    shutil.move(root / FAQ, outside)
    os.symlink(outside, root / FAQ)


def _resamples_one(root: Path, c: dict[str, Any]) -> None:
    c["statistics"]["resamples"] = 1


def _alpha_half(root: Path, c: dict[str, Any]) -> None:
    c["statistics"]["alpha"] = 0.5


def _parquet_huge_footer(root: Path, c: dict[str, Any]) -> None:
    path = root / "evidence/telemetry.parquet"
    data = bytearray(path.read_bytes())
    data[-8:-4] = (2**31 - 1).to_bytes(4, "little")
    path.write_bytes(bytes(data))


def _duplicate_quality_metric(root: Path, c: dict[str, Any]) -> None:
    c["quality_metrics"].append(dict(c["quality_metrics"][0]))


def _claim_on_undeclared_metric(root: Path, c: dict[str, Any]) -> None:
    c["claims"]["items"][0]["metric"] = "latency_ms"


def _empty_example_id(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    rows[3][0] = ""
    _write_rows(root / FAQ, rows)


def _seed_bool(root: Path, c: dict[str, Any]) -> None:
    c["statistics"]["seed"] = True


def _latin1_csv(root: Path, c: dict[str, Any]) -> None:
    text = (root / FAQ).read_text(encoding="utf-8").replace("Lumo", "Lümo")
    (root / FAQ).write_bytes(text.encode("latin-1", errors="replace"))


def _phoenix_document_reducer(root: Path, c: dict[str, Any]) -> None:
    for s in c["evidence"]:
        name = (
            s["path"]
            .rsplit("/", 1)[-1]
            .replace("evaluate_dataframe", "document_evaluations_relevance")
        )
        s["path"] = s["path"].rsplit("/", 1)[0] + "/" + name
        s["metrics"] = {"relevance": "relevance"}
        s["options"]["document_reducer"] = "median"


def _phoenix_direction_reversed(root: Path, c: dict[str, Any]) -> None:
    c["quality_metrics"][1]["direction"] = "higher_is_better"


def _header_case_twins(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    rows[0].append("Correct")
    for r in rows[1:]:
        r.append("1")
    _write_rows(root / FAQ, rows)


def _candidate_metric_empty(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    col = rows[0].index("correct")
    for r in rows[1:]:
        if r[1] == "candidate-small":
            r[col] = ""
    _write_rows(root / FAQ, rows)


def _evidence_is_directory(root: Path, c: dict[str, Any]) -> None:
    (root / FAQ).unlink()
    (root / FAQ).mkdir()


def _contract_yaml_and_json(root: Path, c: dict[str, Any]) -> None:
    (root / "contract.json").write_text(json.dumps(c))


def _policy_config_empty(root: Path, c: dict[str, Any]) -> None:
    (root / c["candidates"][0]["config"]).write_text("")


def _row_with_extra_field(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    rows[5].append("surplus")
    _write_rows(root / FAQ, rows)


def _decimal_comma(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    col = rows[0].index("cost_usd")
    rows[7][col] = rows[7][col].replace(".", ",")
    _write_rows(root / FAQ, rows)


def _parquet_declared_csv(root: Path, c: dict[str, Any]) -> None:
    c["evidence"][1]["format"] = "csv"


def _padded_number(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    col = rows[0].index("cost_usd")
    rows[9][col] = f" {rows[9][col]} "
    _write_rows(root / FAQ, rows)


def _overflowing_cost(root: Path, c: dict[str, Any]) -> None:
    rows = _rows(root / FAQ)
    col = rows[0].index("cost_usd")
    rows[11][col] = "1e309"
    _write_rows(root / FAQ, rows)


def _min_paired_n_zero(root: Path, c: dict[str, Any]) -> None:
    c["statistics"]["min_paired_n"] = 0


CASES = [
    Case(
        "candidate id equals the baseline id", "corroboration-demo", _candidate_is_baseline, (78,)
    ),
    Case("evidence source listed twice (same id)", "corroboration-demo", _source_twice, (78,)),
    Case("one file under two source ids", "corroboration-demo", _same_file_two_ids, (12, 78)),
    Case(
        "two sources give one metric for one example",
        "handbook-exports",
        _two_sources_same_metric,
        (12, 78),
    ),
    Case(
        "protected slice that never occurs",
        "ragtruth-generators",
        _protected_slice_absent,
        (12, 78),
    ),
    Case("metric id with a trailing space", "corroboration-demo", _metric_trailing_space, (78,)),
    Case("evidence file with only a header", "corroboration-demo", _header_only, (12,)),
    Case("example ids differ only by case", "corroboration-demo", _ids_differ_by_case, (12,)),
    Case("example ids NFC vs NFD", "corroboration-demo", _ids_nfc_vs_nfd, (12,)),
    Case("CSV with CRLF and a BOM (valid)", "corroboration-demo", _crlf_bom, (11,)),
    Case("JSONL with a trailing comma", "handbook-exports", _jsonl_trailing_comma, (12,)),
    Case(
        "Parquet with dictionary-encoded floats (valid)",
        "ragtruth-generators",
        _parquet_dictionary_floats,
        (0,),
    ),
    Case(
        "telemetry timestamps 80 years ahead", "handbook-exports", _timestamps_in_future, (11, 12)
    ),
    Case(
        "evidence symlink pointing outside the input",
        "corroboration-demo",
        _symlink_outside,
        (12, 66, 78),
    ),
    Case("statistics.resamples: 1", "corroboration-demo", _resamples_one, (78,)),
    Case("statistics.alpha: 0.5", "corroboration-demo", _alpha_half, (78,)),
    Case("Parquet footer claiming 2 GiB", "ragtruth-generators", _parquet_huge_footer, (12,)),
    Case("quality metric declared twice", "corroboration-demo", _duplicate_quality_metric, (78,)),
    Case("claim on an undeclared metric", "corroboration-demo", _claim_on_undeclared_metric, (78,)),
    Case("empty example id in one row", "corroboration-demo", _empty_example_id, (12,)),
    Case("statistics.seed: true", "corroboration-demo", _seed_bool, (78,)),
    Case("Latin-1 CSV", "corroboration-demo", _latin1_csv, (12,)),
    Case("document_reducer: median", "phoenix", _phoenix_document_reducer, (78,)),
    Case("direction against Phoenix's 'minimize'", "phoenix", _phoenix_direction_reversed, (12,)),
    Case("header twins differing in case", "corroboration-demo", _header_case_twins, (12,)),
    Case(
        "candidate's quality column all empty", "corroboration-demo", _candidate_metric_empty, (12,)
    ),
    Case(
        "evidence path is a directory", "corroboration-demo", _evidence_is_directory, (12, 66, 78)
    ),
    Case(
        "contract.yaml and contract.json both",
        "corroboration-demo",
        _contract_yaml_and_json,
        (64, 66, 78),
    ),
    Case("candidate policy config empty", "corroboration-demo", _policy_config_empty, (11, 12, 78)),
    Case("one row with an extra field", "corroboration-demo", _row_with_extra_field, (12,)),
    Case("decimal comma in a cost", "corroboration-demo", _decimal_comma, (12,)),
    Case("Parquet file declared format: csv", "ragtruth-generators", _parquet_declared_csv, (12,)),
    Case("number padded with spaces", "corroboration-demo", _padded_number, (11, 12)),
    Case("cost 1e309 (overflows to inf)", "corroboration-demo", _overflowing_cost, (12,)),
    Case("statistics.min_paired_n: 0", "corroboration-demo", _min_paired_n_zero, (78,)),
]


def _message(out: Path, stderr: str) -> tuple[str, str]:
    """(run class, first located message) of a finished run."""
    path = out / "decision.json"
    if not path.exists():
        return "-", stderr.strip().splitlines()[-1] if stderr.strip() else ""
    d = json.loads(path.read_text())
    failed = [g["reason"] for g in d.get("run_gates") or [] if g["status"] == "fail"]
    if d.get("error"):
        return d["run_class"], str(d["error"].get("message"))
    if failed:
        return d["run_class"], failed[0]
    reasons = [r for c in d.get("candidates") or [] for r in c.get("reasons") or []]
    return d["run_class"], reasons[0] if reasons else ""


def _phoenix_example(root: Path) -> dict[str, Any]:
    """An input directory reading the real Phoenix evaluate_dataframe exports of both policies."""
    shutil.copytree(EXPORTS / "phoenix", root / "evidence/phoenix")
    (root / "policies").mkdir()
    for p in ("baseline", "candidate"):
        (root / f"policies/{p}.json").write_text(json.dumps({"model": p}))
    return {
        "schema_version": "1",
        "id": "phoenix-trial",
        "version": "1",
        "baseline": {"policy_id": "baseline", "config": "policies/baseline.json"},
        "candidates": [{"policy_id": "candidate", "config": "policies/candidate.json"}],
        "evidence": [
            {
                "id": f"phoenix-{p}",
                "path": f"evidence/phoenix/{p}/phoenix_evaluate_dataframe_{p}.parquet",
                "format": "parquet",
                "adapter": "phoenix",
                "policy": p,
                "columns": {"example_id": "question_id"},
                "options": {"spans": f"evidence/phoenix/{p}/phoenix_spans_{p}.parquet"},
                "metrics": {"token_f1": "token_f1", "refusal": "refusal"},
                "evaluator": "phoenix-evals",
                "evaluator_version": "3.9.4",
            }
            for p in ("baseline", "candidate")
        ],
        "quality_metrics": [
            {"id": "token_f1", "scale": [0, 1], "margin_abs": 0.1},
            {"id": "refusal", "direction": "lower_is_better", "scale": [0, 1], "margin_abs": 0.1},
        ],
        "claims": {"join": "any", "items": [{"kind": "quality-improvement", "metric": "token_f1"}]},
        "statistics": {"alpha": 0.05, "resamples": 2000, "seed": 1, "min_paired_n": 10},
        "evidence_class": "frozen-observation",
        "promotion_min_class": "frozen-observation",
    }


def run_case(case: Case, tmp: Path) -> dict[str, Any]:
    """Build the case's input directory, run the CLI and judge the outcome."""
    root = tmp / "in"
    if case.example == "phoenix":
        contract = _phoenix_example(root)
    else:
        shutil.copytree(EXAMPLES / case.example, root, symlinks=True)
        contract = yaml.safe_load((root / "contract.yaml").read_text())
    case.mutate(root, contract)
    (root / "contract.yaml").write_text(
        yaml.safe_dump(contract, sort_keys=False, allow_unicode=True)
    )
    out = tmp / "out"
    proc = subprocess.run(
        [
            *CLI,
            "run",
            "--input",
            str(root),
            "--output",
            str(out),
            "--termination-message-path",
            str(tmp / "termination-log"),  # a regular file, as Kubernetes mounts it
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    run_class, message = _message(out, proc.stderr)
    ok = proc.returncode in case.accept and "Traceback" not in proc.stderr
    return {
        "case": case.name,
        "exit": proc.returncode,
        "class": run_class,
        "message": message,
        "ok": ok,
    }


SECTION = """## New-user trial

`bench/new_user_trial.py` builds each bad input below from a shipped example (`examples/*`) or the
real Phoenix exports (`tests/data/exports/phoenix`, "phoenix"), runs `ragwarrant run` as a
subprocess and records the exit code, the run class and the first message (failed run gate,
blocked candidate's reason, or error). *ok* means the exit is the one expected: 12 (BLOCK) or
78 / 66 with a located message for a defect; the original decision for a valid input in another
encoding (CRLF and BOM, dictionary-encoded Parquet, a number padded with spaces); never 70, never
a traceback, never a decision on defective evidence. A policy config that cannot be parsed is
refused like a contract that cannot (`contract-syntax`, exit 78): a config the job cannot compare
would pass as one without differences.

Found and fixed while writing it (each with a test): a contract direction contradicting the
export's declared one (Phoenix `minimize`) was decided (exit 11 on main; now `hard:contract-
evidence:directions`, BLOCK); an unknown `options.document_reducer` was a read-time BLOCK (now exit
78 at its key and line with "did you mean"); a mapped column with a case twin (`correct`,
`Correct`) was read and decided (exit 11 on main; now `evidence-ambiguous-column`, BLOCK); a CSV
row with an extra field was reported without its row and with an excerpt of its text (now
`evidence-field-count`, row, no text); a metric id with a trailing space said only "should match
pattern" (now names the white space); example ids differing only in case or NFC/NFD gave a bare
pairing-coverage BLOCK (now also an `example-id-spelling` warning naming the first pair).

Reproduce: `.venv/bin/python bench/new_user_trial.py --markdown docs/fuzz.md`

"""


def _write_section(path: Path, table: str) -> None:
    """Replace (or append) the file's "New-user trial" section with the table."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    start = old.find("## New-user trial")
    head = old[:start] if start >= 0 else old.rstrip("\n") + "\n\n"
    end = old.find("\n## ", start + 1) if start >= 0 else -1
    tail = old[end:] if end >= 0 else ""
    path.write_text(head + SECTION + table + "\n" + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run every case; print (and optionally write) the Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="replace this file's New-user trial section")
    parser.add_argument("--only", nargs="*", default=None, help="run the cases naming these words")
    args = parser.parse_args(argv)
    rows = []
    cases = [c for c in CASES if args.only is None or any(w in c.name for w in args.only)]
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(run_case(case, Path(tmp)))
    lines = [
        "| # | bad input | exit | class | first message | ok |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, r in enumerate(rows, start=1):
        msg = r["message"].replace("|", "\\|")
        msg = msg if len(msg) <= 200 else msg[:197] + "..."
        ok = "yes" if r["ok"] else "NO"
        lines.append(f"| {i} | {r['case']} | {r['exit']} | {r['class']} | {msg} | {ok} |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        _write_section(args.markdown, table)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
