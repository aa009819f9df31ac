"""Tests of scripts/derive_ragtruth_example.py and the committed examples/ragtruth-generators/.

Three groups:
- rules of the derivation (ids, split, labels, tokens, cost), on constructed inputs;
- the committed example on its own (contract valid, evidence consistent, prices consistent);
- re-derivation from ``../shared/data/ragtruth`` (beside the repository clone): the committed bytes
  are what the script writes, and no 8-word run of any RAGTruth text is in any committed file.
  These skip, with the reason, only when that folder is absent.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragwarrant.contract import load_contract

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ragtruth-generators"
EXAMPLES_README = REPO / "examples" / "README.md"
RAGTRUTH_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ragtruth"
SHINGLE_WORDS = 8


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "derive_ragtruth_example", REPO / "scripts" / "derive_ragtruth_example.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


derive = _load_script()

needs_ragtruth = pytest.mark.skipif(
    not (RAGTRUTH_DIR / derive.RESPONSE_FILE).is_file(),
    reason=f"RAGTruth sample not found at {RAGTRUTH_DIR} (clone ../shared beside the repository)",
)


def _committed_files() -> dict[str, bytes]:
    return {
        p.relative_to(EXAMPLE).as_posix(): p.read_bytes()
        for p in sorted(EXAMPLE.rglob("*"))
        if p.is_file()
    }


def _quality_rows() -> list[dict[str, str]]:
    with (EXAMPLE / "evidence" / "quality.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --- rules of the derivation ------------------------------------------------------------------


def test_example_id_is_the_prefixed_sha256_prefix():
    """example_id is the first 16 hex chars of sha256("ragtruth:" + source_id)."""
    expected = hashlib.sha256(b"ragtruth:13601").hexdigest()[:16]
    assert expected == derive.example_id_of("13601")


def test_split_is_the_parity_of_the_split_hash():
    """The split is development exactly when sha256("split:" + id) is even."""
    for sid in ("1", "42", "13601", "15714"):
        even = int(hashlib.sha256(f"split:{sid}".encode()).hexdigest(), 16) % 2 == 0
        assert ("development" if even else "confirmatory") == derive.split_of(sid)


def test_split_rule_gives_both_splits_about_half_each():
    """Over 1000 ids the parity rule puts between 45 % and 55 % in development."""
    dev = sum(derive.split_of(str(i)) == "development" for i in range(1000))
    assert 450 <= dev <= 550


def test_implicit_true_labels_are_not_hallucinations():
    """A response whose labels are all implicit_true counts as hallucination-free."""
    labels = [{"implicit_true": True, "due_to_null": False}] * 2
    assert derive.hallucination_of(labels) == (1.0, 0)


def test_due_to_null_labels_are_hallucinations():
    """A due_to_null label (not implicit_true) counts as a hallucinated span."""
    labels = [
        {"implicit_true": False, "due_to_null": True},
        {"implicit_true": True, "due_to_null": False},
        {"implicit_true": False, "due_to_null": False},
    ]
    assert derive.hallucination_of(labels) == (0.0, 2)


def test_no_labels_is_no_hallucination():
    """A response without labels is hallucination-free with zero spans."""
    assert derive.hallucination_of([]) == (1.0, 0)


def test_token_estimate_is_ceil_of_chars_over_four():
    """tokens_est = ceil(len / 4)."""
    assert [derive.estimate_tokens("x" * n) for n in (0, 1, 4, 5, 9)] == [0, 1, 1, 2, 3]


def test_modeled_cost_uses_the_policy_prices():
    """cost = (in × input price + out × output price) / 1e6, with gpt-4-0613 at $30/$60."""
    assert math.isclose(derive.modeled_cost_usd("gpt-4-0613", 1000, 100), 0.036)


def test_llama_and_mistral_prompts_are_wrapped_in_inst_tags():
    """Llama-2/Mistral prompts carry RAGTruth's [INST] wrapper; OpenAI prompts do not."""
    info = {"question": "q", "passages": "passage 1:p\n\n"}
    llama = derive.build_prompt("QA", info, "llama-2-7b-chat")
    gpt = derive.build_prompt("QA", info, "gpt-4-0613")
    assert (llama.startswith("<s>[INST] "), gpt.startswith("<s>")) == (True, False)
    assert len(llama) == len(gpt) + len("<s>[INST]  [/INST]")


def test_missing_sample_exits_66_and_writes_nothing(tmp_path, capsys):
    """Without the two sample files the script returns 66 (EX_NOINPUT) and writes no file."""
    code = derive.main(["--ragtruth-dir", str(tmp_path), "--output", str(tmp_path / "out")])
    assert (code, (tmp_path / "out").exists()) == (66, False)
    assert "sample_response.jsonl.gz" in capsys.readouterr().err


# --- the committed example on its own -----------------------------------------------------------


def test_committed_contract_is_valid_and_names_the_six_models():
    """contract.yaml loads with load_contract; baseline gpt-4-0613 and the five others."""
    contract = load_contract(EXAMPLE / "contract.yaml")
    expected = ("gpt-4-0613", sorted(m for m in derive.MODELS if m != "gpt-4-0613"))
    assert expected == (
        contract.baseline.policy_id,
        sorted(c.policy_id for c in contract.candidates),
    )


def test_committed_contract_references_resolve_inside_the_example():
    """Every policy config and evidence path in the contract is a committed file."""
    contract = load_contract(EXAMPLE / "contract.yaml")
    paths = [contract.baseline.config, *(c.config for c in contract.candidates)]
    paths += [e.path for e in contract.evidence]
    assert [p for p in paths if not (EXAMPLE / p).is_file()] == []


def test_quality_rows_are_consistent():
    """Ids are 16 hex chars, group = example, one split per example, flag agrees with span count."""
    rows = _quality_rows()
    bad = [
        r
        for r in rows
        if not re.fullmatch(r"[0-9a-f]{16}", r["example_id"])
        or r["source_group"] != r["example_id"]
        or r["no_hallucination"] not in ("0.0", "1.0")
        or (r["no_hallucination"] == "1.0") != (r["hallucinated_spans"] == "0")
    ]
    splits: dict[str, set[str]] = {}
    for r in rows:
        splits.setdefault(r["example_id"], set()).add(r["split"])
    assert (bad, [e for e, s in splits.items() if len(s) != 1]) == ([], [])


def test_quality_has_one_row_per_policy_and_example():
    """No duplicate (policy, example) rows; every policy is one of the six models."""
    rows = _quality_rows()
    keys = [(r["policy_id"], r["example_id"]) for r in rows]
    assert (len(keys), set()) == (len(set(keys)), {k[0] for k in keys} - set(derive.MODELS))


def test_telemetry_matches_quality_and_prices():
    """One request per quality row, same keys; cost_usd = tokens × the contract's prices."""
    contract = load_contract(EXAMPLE / "contract.yaml")
    table = pq.read_table(EXAMPLE / "evidence" / "telemetry.parquet").to_pylist()
    q = {(r["policy_id"], r["example_id"]): r for r in _quality_rows()}
    t = {(r["policy_id"], r["example_id"]): r for r in table}
    mismatched = [
        k
        for k, r in t.items()
        if k not in q
        or q[k]["split"] != r["split"]
        or q[k]["task_type"] != r["task_type"]
        or not math.isclose(
            r["cost_usd"],
            (
                r["input_tokens_est"] * contract.prices[r["policy_id"]]["input_usd_per_1m_tokens"]
                + r["output_tokens_est"]
                * contract.prices[r["policy_id"]]["output_usd_per_1m_tokens"]
            )
            / 1e6,
            rel_tol=1e-12,
        )
    ]
    assert (len(table), set(q), []) == (len(t), set(t), mismatched)


def test_committed_evidence_holds_only_ids_labels_and_numbers():
    """Every string cell of the evidence is a hex id, a model, a task type or a split (no text)."""
    allowed = set(derive.MODELS) | set(derive.TASKS) | set(derive.SPLITS)
    cells = [v for r in _quality_rows() for v in r.values()]
    table = pq.read_table(EXAMPLE / "evidence" / "telemetry.parquet")
    for col in table.columns:
        if pa.types.is_string(col.type):
            cells += col.to_pylist()
    odd = sorted(
        {
            c
            for c in cells
            if c not in allowed
            and not re.fullmatch(r"[0-9a-f]{16}", c)
            and not re.fullmatch(r"\d+(\.\d+)?", c)
        }
    )
    assert odd == []


def test_policy_configs_carry_the_contract_prices():
    """policies/<model>.json prices equal the contract's price table."""
    contract = load_contract(EXAMPLE / "contract.yaml")
    found = {}
    for m in derive.MODELS:
        doc = json.loads((EXAMPLE / "policies" / f"{m}.json").read_text(encoding="utf-8"))
        found[m] = {
            "input_usd_per_1m_tokens": doc["pricing"]["input_usd_per_1m_tokens"],
            "output_usd_per_1m_tokens": doc["pricing"]["output_usd_per_1m_tokens"],
        }
    assert contract.prices == found


def test_readme_table_matches_the_derivation():
    """Each model's rates in examples/README.md equal DERIVATION.json (3 decimals)."""
    per_model = json.loads((EXAMPLE / "DERIVATION.json").read_text(encoding="utf-8"))["per_model"]
    lines = EXAMPLES_README.read_text(encoding="utf-8").splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| model | all | development |"))
    cols = ["all", "development", "confirmatory", "QA", "Summary", "Data2txt"]
    wrong = []
    for m, stats in per_model.items():
        line = next((ln for ln in lines[header:] if ln.startswith(f"| `{m}` |")), None)
        cells = [c.strip() for c in line.strip("|").split("|")][1:] if line else []
        expected = [f"{stats[c]['no_hallucination_rate']:.3f}" for c in cols]
        expected.append(f"{stats['all']['mean_cost_usd']:.5f}")
        if cells[: len(expected)] != expected:
            wrong.append((m, cells, expected))
    assert wrong == []


# --- re-derivation from the RAGTruth sample -----------------------------------------------------


def _parquet_equal(a: bytes, b: bytes) -> bool:
    ta, tb = pq.read_table(pa.BufferReader(a)), pq.read_table(pa.BufferReader(b))
    return ta.equals(tb, check_metadata=True)


@needs_ragtruth
def test_rederived_files_equal_the_committed_files(tmp_path):
    """Re-deriving into a temp dir gives exactly the committed files, byte for byte.

    The Parquet file is compared byte for byte when it was written by the installed pyarrow
    (its footer names the writer version); with another pyarrow, by table content and metadata.
    """
    written = derive.write_example(RAGTRUTH_DIR, tmp_path / "out")
    committed = _committed_files()
    assert sorted(written) == sorted(committed)
    differ = []
    for rel, data in written.items():
        if rel.endswith(".parquet"):
            writer = pq.ParquetFile(pa.BufferReader(committed[rel])).metadata.created_by
            if f"version {pa.__version__}" in writer:
                ok = data == committed[rel]
            else:
                ok = _parquet_equal(data, committed[rel])
        else:
            ok = data == committed[rel]
        if not ok:
            differ.append(rel)
    assert differ == []


@needs_ragtruth
def test_two_derivations_give_identical_bytes():
    """render() is deterministic: two runs give the same bytes for every file."""
    assert derive.render(RAGTRUTH_DIR) == derive.render(RAGTRUTH_DIR)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _shingles(text: str) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i : i + SHINGLE_WORDS]) for i in range(len(w) - SHINGLE_WORDS + 1)}


def _ragtruth_texts() -> list[str]:
    texts: list[str] = []
    for rec in derive._read_jsonl_gz(RAGTRUTH_DIR / derive.RESPONSE_FILE):
        texts.append(rec["response"])
        texts.extend(lab.get("meta") or "" for lab in rec["labels"])
    for src in derive._read_jsonl_gz(RAGTRUTH_DIR / derive.SOURCE_FILE):
        info = src["source_info"]
        if isinstance(info, str):
            texts.append(info)
        elif src["task_type"] == "QA":
            texts += [info["question"], info["passages"]]
        else:
            texts.append(json.dumps(info, ensure_ascii=False))
            texts.extend(r.get("review_text", "") for r in info.get("review_info") or [])
    return texts


def _file_text(path: Path) -> str:
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        parts = [str(table.schema.metadata or {})]
        for col in table.columns:
            if pa.types.is_string(col.type):
                parts.extend(str(v) for v in col.to_pylist())
        return "\n".join(parts)
    return path.read_text(encoding="utf-8")


def _leaks(text: str, shingles: set[tuple[str, ...]]) -> int:
    return len(_shingles(text) & shingles)


@needs_ragtruth
def test_no_ragtruth_text_in_committed_files():
    """No 8-word run of any response, annotator note, question, passage or article is committed.

    A positive control (a sentence made from a real response) must be detected, so the check
    cannot pass by being blind.
    """
    texts = _ragtruth_texts()
    shingles: set[tuple[str, ...]] = set()
    for t in texts:
        shingles |= _shingles(t)
    control = next(t for t in texts if len(_words(t)) > 20)
    files = [p for p in sorted(EXAMPLE.rglob("*")) if p.is_file()] + [EXAMPLES_README]
    found = {p.relative_to(REPO).as_posix(): _leaks(_file_text(p), shingles) for p in files}
    assert (_leaks(control, shingles) > 0, {k: v for k, v in found.items() if v}) == (True, {})


def test_readme_states_the_decision_the_engine_makes(tmp_path):
    """ragwarrant run on the example gives the run class, exit code and per-candidate classes
    that examples/README.md states."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "ragwarrant", "run", "--input", str(EXAMPLE), "--output", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    decision = json.loads((out / "decision.json").read_text(encoding="utf-8"))
    engine = {c["policy_id"]: c["class"] for c in decision["candidates"]}
    lines = EXAMPLES_README.read_text(encoding="utf-8").splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| candidate | decision |"))
    stated = {}
    for ln in lines[header + 2 :]:
        if not ln.startswith("| `"):
            break
        cells = [c.strip() for c in ln.strip("|").split("|")]
        stated[cells[0].strip("`")] = cells[1]
    readme = "\n".join(lines)
    claimed_run = re.search(
        r"run class is \*\*(\w+)\*\* and the exit code is \*\*(\d+)\*\*", readme
    )
    assert claimed_run is not None
    assert (proc.returncode, decision["run_class"], engine) == (
        int(claimed_run.group(2)),
        claimed_run.group(1),
        stated,
    )
