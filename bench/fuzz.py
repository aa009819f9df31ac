"""Fuzz the evidence boundary: seeded mutations of real exports, read by the in-process loader.

Seeds are every evidence source of the shipped examples (``examples/*/contract.yaml``) and the
real exports of ``tests/data/exports`` (each with the source declaration the adapter tests use).
Each input is one seed file changed by one seeded mutator (byte flips, truncation, column renames
and duplication, cell type swaps, NaN / inf / negative values, millisecond timestamps, encoding
changes), read with ``ragwarrant.adapters.load_source``. Every outcome is one of:

- ``read``: the adapter returned evidence (the mutation was harmless or not a defect);
- ``blocked``: an ``EvidenceError`` (the run BLOCKs, naming file and place);
- ``crash``: any other exception (the job would exit 70 with a traceback);
- ``accepted-defect``: the adapter returned evidence although the mutation is a defect the
  boundary must refuse (a negative, non-finite or all-zero operational value, a duplicated
  column name, a header with invisible white space).

Prints one row per mutator and the distinct crash causes; exit status 1 when any input crashed
or an accepted defect was found. ``--markdown FILE`` also writes the table.

Usage: ``.venv/bin/python bench/fuzz.py [--n 10000] [--seed 0] [--markdown docs/fuzz.md]``
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ragwarrant.adapters import load_source
from ragwarrant.contract import EvidenceSource, ReleaseContract, load_contract
from ragwarrant.digests import sha256_file
from ragwarrant.errors import EvidenceError

REPO = Path(__file__).resolve().parents[1]
EXPORTS = REPO / "tests" / "data" / "exports"
PRICES = {
    "llama-3.1-8b-instruct": {"input_usd_per_1m_tokens": 0.18, "output_usd_per_1m_tokens": 0.18},
    "llama-3.1-70b-instruct": {"input_usd_per_1m_tokens": 0.88, "output_usd_per_1m_tokens": 0.88},
}

#: tests/data/exports seeds: (path, source fields), as the adapter tests declare them.
EXPORT_SEEDS: list[tuple[str, dict[str, Any]]] = [
    ("ragas/ragas_evaluate_baseline.csv", {"adapter": "ragas", "policy": "baseline"}),
    ("ragas/ragas_evaluate_candidate.jsonl", {"adapter": "ragas", "policy": "candidate"}),
    (
        "deepeval/baseline/test_run_20261129_205103.json",
        {"adapter": "deepeval", "policy": "baseline"},
    ),
    ("langsmith/langsmith_experiment_baseline.csv", {"adapter": "langsmith", "policy": "baseline"}),
    (
        "langsmith/langsmith_experiment_candidate_rows_raw.jsonl",
        {"adapter": "langsmith", "policy": "candidate", "options": {"include_operational": True}},
    ),
    (
        "phoenix/baseline/phoenix_spans_baseline.parquet",
        {"adapter": "phoenix", "policy": "baseline", "columns": {"example_id": "question_id"}},
    ),
    (
        "phoenix/baseline/phoenix_evaluate_dataframe_baseline.parquet",
        {
            "adapter": "phoenix",
            "policy": "baseline",
            "columns": {"example_id": "question_id"},
            "options": {"spans": "phoenix/baseline/phoenix_spans_baseline.parquet"},
        },
    ),
    (
        "phoenix/baseline/phoenix_span_evaluations_token_f1_baseline.csv",
        {
            "adapter": "phoenix",
            "policy": "baseline",
            "columns": {"example_id": "question_id"},
            "metrics": {"score": "token_f1"},
            "options": {"spans": "phoenix/baseline/phoenix_spans_baseline.parquet"},
        },
    ),
    (
        "trulens/trulens_records_and_feedback.csv",
        {"adapter": "trulens", "options": {"include_operational": True}},
    ),
    ("otel/otel_genai_telemetry.parquet", {"adapter": "otel", "kind": "telemetry"}),
    ("ragas/ragas_evaluate_candidate.csv", {"adapter": "auto", "policy": "candidate"}),
]

#: Columns whose values are operational (cost, latency, tokens): a defect there must BLOCK.
OPERATIONAL_HINTS = ("cost", "latency", "tokens", "token_count", "time_unix_nano")


@dataclass(frozen=True)
class Seed:
    """One readable evidence file and everything needed to read it again after a mutation."""

    name: str
    root: Path  # the input directory (copied whole, so sibling files such as spans resolve)
    source: EvidenceSource
    contract: ReleaseContract


@dataclass
class Mutation:
    """What a mutator did: ``header`` when it broke a header (a defect in every file),
    ``defect`` when it broke an operational value (a defect where the source reads them)."""

    what: str
    defect: bool = False
    header: bool = False


@dataclass
class Tally:
    """Outcomes of one mutator."""

    inputs: int = 0
    read: int = 0
    blocked: int = 0
    crash: int = 0
    accepted_defect: int = 0
    causes: Counter[str] = field(default_factory=Counter)


def _export_contract(rel: str, fields: dict[str, Any]) -> ReleaseContract:
    fmt = rel.rsplit(".", 1)[1]
    src = {"id": "src", "path": rel, "format": fmt, **fields}
    return ReleaseContract.model_validate(
        {
            "id": "fuzz",
            "version": "1",
            "baseline": {"policy_id": "baseline", "config": "policies/baseline.yaml"},
            "candidates": [{"policy_id": "candidate", "config": "policies/candidate.yaml"}],
            "evidence": [src],
            "quality_metrics": [{"id": "token_f1", "margin_abs": 0.05}],
            "claims": {"items": [{"kind": "quality-improvement", "metric": "token_f1"}]},
            "evidence_class": "development",
            "prices": PRICES,
        }
    )


def seeds() -> list[Seed]:
    """Every seed: each evidence source of each shipped example, then the test exports."""
    out = []
    for contract_path in sorted((REPO / "examples").glob("*/contract.yaml")):
        contract = load_contract(contract_path)
        for source in contract.evidence:
            name = f"{contract_path.parent.name}/{source.id}"
            out.append(Seed(name, contract_path.parent, source, contract))
    for rel, fields in EXPORT_SEEDS:
        contract = _export_contract(rel, fields)
        out.append(Seed(f"exports/{rel}", EXPORTS, contract.evidence[0], contract))
    return out


# --- mutators: bytes → bytes (with what they did) ------------------------------------------------


def _flip_bytes(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    b = bytearray(data)
    k = rng.randint(1, 8)
    for _ in range(k):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b), Mutation(f"{k} bit flips")


def _truncate(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    cut = rng.randrange(len(data))
    return data[:cut], Mutation(f"truncated at {cut}")


def _splice(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    i, j = sorted(rng.randrange(len(data)) for _ in range(2))
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(0, 16)))
    return data[:i] + junk + data[j:], Mutation("range replaced with junk")


def _reencode(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    if fmt == "parquet":
        return data, Mutation("unchanged (binary)")
    text = data.decode("utf-8", "replace")
    enc = rng.choice(["utf-16", "utf-16-le", "latin-1", "cp1252", "utf-8-sig", "utf-32"])
    if enc in ("latin-1", "cp1252"):
        text = text.replace("e", "é", 3)
    return text.encode(enc, "replace"), Mutation(f"re-encoded as {enc}")


# values a cell may be swapped to; the flag says whether it is a defect in an operational column
_SWAPS: list[tuple[object, bool]] = [
    ("abc", True),
    ("0.20_857", True),
    ("０.５", True),
    ("NaN", True),
    ("inf", True),
    ("-inf", True),
    (-1.5, True),
    (-1, True),
    ("", False),
    (None, False),
    (1e309, True),
    ("1e309", True),
    ([1, 2], True),
    ({"a": 1}, True),
    (True, False),
    ("291.0", False),
    (0, False),
]


def _table_of(data: bytes, fmt: str) -> tuple[list[str], list[list[Any]]] | None:
    """A seed's header and rows (CSV or JSON lines of flat objects), or None."""
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(data.decode("utf-8", "replace"))))
        return (rows[0], rows[1:]) if rows else None
    return None


def _csv_bytes(header: list[str], rows: list[list[Any]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _csv_mutation(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    table = _table_of(data, fmt)
    if table is None or not table[1]:
        return _flip_bytes(data, rng, fmt)
    header, rows = table
    j = rng.randrange(len(header))
    col = header[j]
    kind = rng.choice(["rename", "space", "duplicate", "drop", "cell", "column", "row-dup"])
    if kind == "rename":
        header[j] = rng.choice([col.upper(), col + "_x", "\u200b" + col, col.replace("_", "-")])
        invisible = header[j].startswith("\u200b")
        return _csv_bytes(header, rows), Mutation(f"column {j} renamed", header=invisible)
    if kind == "space":
        header[j] = col + rng.choice([" ", "\u00a0", "\t"])
        return _csv_bytes(header, rows), Mutation(f"column {j} with trailing space", header=True)
    if kind == "duplicate":
        header.append(col)
        for r in rows:
            r.append(r[j] if j < len(r) else "")
        return _csv_bytes(header, rows), Mutation(f"column {col!r} duplicated", header=True)
    if kind == "drop":
        return _csv_bytes(header[:j] + header[j + 1 :], [r[:j] + r[j + 1 :] for r in rows]), (
            Mutation(f"column {j} dropped")
        )
    if kind == "row-dup":
        rows.insert(rng.randrange(len(rows) + 1), list(rng.choice(rows)))
        return _csv_bytes(header, rows), Mutation("a row duplicated")
    value, bad = rng.choice(_SWAPS)
    cells = [rng.randrange(len(rows))] if kind == "cell" else range(len(rows))
    for i in cells:
        if j < len(rows[i]):
            rows[i][j] = (
                "" if value is None else json.dumps(value) if not isinstance(value, str) else value
            )
    operational = any(h in col.lower() for h in OPERATIONAL_HINTS)
    return _csv_bytes(header, rows), Mutation(
        f"{kind} {col!r} := {value!r}", defect=bad and operational and kind == "column"
    )


def _walk(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a leaf or container inside a JSON value."""
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _walk(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _walk(v, (*path, i))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = obj
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return obj


def _json_mutation(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    try:
        if fmt == "jsonl":
            docs = [json.loads(line) for line in data.splitlines() if line.strip()]
        else:
            docs = [json.loads(data)]
    except ValueError:
        return _flip_bytes(data, rng, fmt)
    if not docs:
        return _flip_bytes(data, rng, fmt)
    d = rng.randrange(len(docs))
    paths = _walk(docs[d])
    path = rng.choice(paths)
    kind = rng.choice(["swap", "swap", "drop", "rename"])
    parent = docs[d]
    for p in path[:-1]:
        parent = parent[p]
    if kind in ("drop", "rename") and path and isinstance(parent, dict):
        value = parent.pop(path[-1])
        if kind == "rename":
            parent[str(path[-1]) + rng.choice([" ", "_X", "\u200b"])] = value
        what = f"key {'/'.join(map(str, path))} {kind}"
    else:
        value, _ = rng.choice(_SWAPS)
        docs[d] = _set(docs[d], path, value)
        what = f"/{'/'.join(map(str, path))} := {value!r}"
    if fmt == "jsonl":
        out = "\n".join(json.dumps(doc) for doc in docs) + "\n"
    else:
        out = json.dumps(docs[0])
    return out.encode("utf-8"), Mutation(what)


def _parquet_mutation(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError):
        return _flip_bytes(data, rng, fmt)
    j = rng.randrange(table.num_columns)
    name = table.schema.names[j]
    col = table.column(j)
    kind = rng.choice(["rename", "duplicate", "strings", "nan", "negative", "ms", "zero", "flip"])
    defect = header = False
    if kind == "rename":
        table = table.rename_columns(
            [n + " " if i == j else n for i, n in enumerate(table.schema.names)]
        )
        header = True
    elif kind == "duplicate":
        table = table.append_column(name, col)
        header = True
    elif kind == "strings":
        try:
            table = table.set_column(j, name, col.cast(pa.string()))
        except (pa.ArrowException, ValueError):
            return data, Mutation("unchanged (not castable)")
    elif kind in ("nan", "negative", "zero") and pa.types.is_floating(col.type):
        vals = col.to_pylist()
        fill = {"nan": float("nan"), "negative": -abs(vals[0] or 1.0), "zero": 0.0}[kind]
        table = table.set_column(j, name, pa.array([fill] * len(vals), col.type))
        # NaN is a missing value (reported downstream), not a boundary defect; an arm whose
        # every cost is 0 was not instrumented
        hints = ("cost",) if kind == "zero" else OPERATIONAL_HINTS
        defect = kind != "nan" and any(h in name.lower() for h in hints)
    elif kind == "ms" and pa.types.is_integer(col.type) and "time" in name:
        vals = col.to_pylist()
        i = rng.randrange(len(vals))
        vals[i] = (vals[i] or 0) // 1_000_000
        table = table.set_column(j, name, pa.array(vals, col.type))
        defect = True
    elif kind == "flip":
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, write_page_checksum=True, compression="none")
        b = bytearray(sink.getvalue().to_pybytes())
        i = rng.randrange(4, max(5, len(b) - 8))
        b[i] ^= 1 << rng.randrange(8)
        return bytes(b), Mutation("bit flip in a checksummed file")
    else:
        return _flip_bytes(data, rng, fmt)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes(), Mutation(f"{kind} {name!r}", defect, header)


def _structured(data: bytes, rng: random.Random, fmt: str) -> tuple[bytes, Mutation]:
    if fmt == "parquet":
        return _parquet_mutation(data, rng, fmt)
    if fmt == "csv":
        return _csv_mutation(data, rng, fmt)
    return _json_mutation(data, rng, fmt)


Mutator = Callable[[bytes, random.Random, str], tuple[bytes, Mutation]]

MUTATORS: dict[str, Mutator] = {
    "bit-flips": _flip_bytes,
    "truncation": _truncate,
    "splice": _splice,
    "encoding": _reencode,
    "structure": _structured,
}
#: how often each mutator is drawn (structure-aware changes find the semantic defects)
WEIGHTS = {"bit-flips": 2, "truncation": 1, "splice": 1, "encoding": 1, "structure": 5}


# --- running -----------------------------------------------------------------------------------


def _reads_operational(seed: Seed) -> bool:
    """Whether the seed's source reads operational values (so their defects must BLOCK)."""
    return seed.source.kind == "telemetry" or bool(seed.source.options.get("include_operational"))


def run_one(seed: Seed, work: Path, data: bytes) -> tuple[str, str]:
    """Read ``data`` as the seed's file; return ``(outcome, cause)``."""
    path = work / seed.source.path
    path.write_bytes(data)
    try:
        load_source(seed.source, path, sha256_file(path), seed.contract)
    except EvidenceError as exc:
        return "blocked", exc.code
    except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
        if os.environ.get("FUZZ_TRACE"):
            traceback.print_exc()
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return "crash", f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
    return "read", ""


def fuzz(n: int, seed: int, log: Callable[[str], None] = print) -> dict[str, Tally]:
    """Run ``n`` mutated inputs drawn with ``random.Random(seed)``; return the tallies."""
    rng = random.Random(seed)
    pool = seeds()
    tallies = {name: Tally() for name in MUTATORS}
    names = list(MUTATORS)
    weights = [WEIGHTS[m] for m in names]
    with tempfile.TemporaryDirectory(prefix="rwfuzz-") as tmp:
        works: dict[Path, Path] = {}
        for s in pool:
            if s.root not in works:
                works[s.root] = Path(tmp) / str(len(works))
                shutil.copytree(s.root, works[s.root])
        for k in range(n):
            s = pool[k % len(pool)]
            work = works[s.root]
            original = (s.root / s.source.path).read_bytes()
            mname = rng.choices(names, weights)[0]
            data, mutation = MUTATORS[mname](original, rng, s.source.format)
            outcome, cause = run_one(s, work, data)
            (work / s.source.path).write_bytes(original)
            t = tallies[mname]
            t.inputs += 1
            defect = mutation.header or (mutation.defect and _reads_operational(s))
            if outcome == "read" and defect:
                outcome, cause = "accepted-defect", f"{s.name}: {mutation.what}"
            setattr(t, outcome.replace("-", "_"), getattr(t, outcome.replace("-", "_")) + 1)
            if outcome in ("crash", "accepted-defect"):
                t.causes[cause] += 1
                log(f"{outcome}: {s.name} [{mname}: {mutation.what}] {cause}")
    return tallies


#: The preamble of docs/fuzz.md (what is measured and how to reproduce it).
DOC_HEADER = """# Fuzzing the evidence boundary

`bench/fuzz.py` mutates the shipped examples' evidence and `tests/data/exports/` with a seeded
mutator (bit flips, truncation, spliced junk, re-encoding, and structure-aware changes: column
renames with white space, duplicated columns, dropped columns, cell and column type swaps, NaN,
inf, negative and zero values, millisecond timestamps, JSON keys renamed or retyped, bit flips in
checksummed Parquet) and reads each input with `ragwarrant.adapters.load_source`. A *crash* is any
exception other than `EvidenceError` (exit 70 in the job); an *accepted defect* is an input read
without error although the mutation is one the boundary must refuse (a duplicated header or one
with white space or invisible characters, in any file; a negative, non-finite or all-zero cost,
latency or token value, or a millisecond span time, in a source that reads telemetry).

Reproduce: `.venv/bin/python bench/fuzz.py --n 10000 --seed 0 --markdown docs/fuzz.md`
(the tests run 200 inputs). Reference, same harness on the code before issue 11 (commit 42f7515,
2,000 inputs of seed 0): 193 crashes and 110 accepted defects (crashes mostly OSError from damaged
Parquet, KeyError from duplicated columns, UnicodeDecodeError from other encodings).

"""


def markdown(tallies: dict[str, Tally], n: int, seed: int, seconds: float) -> str:
    """The results as a Markdown table, with the distinct crash causes."""
    lines = [
        "| mutator | inputs | read | blocked | crash | accepted defect |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    total = Tally()
    for name, t in tallies.items():
        lines.append(
            f"| {name} | {t.inputs} | {t.read} | {t.blocked} | {t.crash} | {t.accepted_defect} |"
        )
        for attr in ("inputs", "read", "blocked", "crash", "accepted_defect"):
            setattr(total, attr, getattr(total, attr) + getattr(t, attr))
        total.causes.update(t.causes)
    lines.append(
        f"| **all** | {total.inputs} | {total.read} | {total.blocked} | {total.crash} "
        f"| {total.accepted_defect} |"
    )
    head = f"{n} inputs, seed {seed}, {len(seeds())} seed files, {seconds:.0f} s"
    causes = [f"- {c}: {k}" for c, k in total.causes.most_common(20)] or ["- none"]
    return "\n".join([head, "", *lines, "", "Crash and accepted-defect causes:", "", *causes, ""])


def main(argv: list[str] | None = None) -> int:
    """Run the fuzzer from the command line; exit 1 when anything crashed or slipped through."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="mutated inputs to try")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    ap.add_argument("--quiet", action="store_true", help="do not print each crash")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    tallies = fuzz(args.n, args.seed, log=(lambda _: None) if args.quiet else print)
    text = markdown(tallies, args.n, args.seed, time.perf_counter() - t0)
    print(text)
    if args.markdown:  # keep the sections other scripts write (bench/new_user_trial.py)
        old = args.markdown.read_text(encoding="utf-8") if args.markdown.exists() else ""
        rest = old[old.find("\n## ") :] if "\n## " in old else ""
        args.markdown.write_text(DOC_HEADER + text + rest, encoding="utf-8")
    bad = sum(t.crash + t.accepted_defect for t in tallies.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
