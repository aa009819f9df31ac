"""A corpus of hostile inputs, built on demand in a temporary directory (nothing large committed).

Each case starts from a valid input directory (``tests.conftest``: one candidate that PROMOTEs)
inside a sandbox ``<root>/{in,out,outside}`` and breaks one thing: a symlink or special file in
the input, a limit passed, a number that is not a plain decimal, an output directory holding a
link. ``outside/`` holds a valid evidence file and a secret, the targets of the links.
``test_corpus.py`` runs every case through the CLI and checks its documented exit code, that a
decision record names the expected error code, and that nothing outside ``out/`` changed.

Write the corpus to a directory to look at it: ``python -m tests.hostile.corpus DIR``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from ragwarrant.limits import (
    MAX_CANDIDATES,
    MAX_CONFIG_BYTES,
    MAX_CONTRACT_BYTES,
    MAX_CSV_FIELD_CHARS,
    MAX_JSON_DEPTH,
    MAX_PROTECTED_SLICES,
    MAX_YAML_NODES,
)
from ragwarrant.outputs import OUTPUT_FILES
from tests.conftest import base_contract, simulate, write_results_csv

Contract = dict[str, Any]

RESULTS = "evidence/results.csv"


@dataclass(frozen=True)
class Case:
    """One hostile input: how to break the valid sandbox, and how the run must end.

    ``build`` receives the sandbox root (``in/`` already holds a valid input, ``outside/`` its
    targets) and may change anything in it; ``runs`` is how many times the job is run on it (a
    second run moves the first aside into ``out/history``); ``code`` is the error code that
    ``decision.json`` (an ERROR) or ``validation_report.json`` (a BLOCK) must name, and ``says``
    a phrase of its message (the reason: a case must not pass for another one).
    """

    name: str
    build: Callable[[Path], None]
    exit_code: int
    code: str
    says: str
    runs: int = 1


def write_contract(root: Path, contract: Contract) -> None:
    (root / "in" / "contract.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))


def read_contract(root: Path) -> Contract:
    return yaml.safe_load((root / "in" / "contract.yaml").read_text())  # type: ignore[no-any-return]


def edit_contract(root: Path, change: Callable[[Contract], None]) -> None:
    contract = read_contract(root)
    change(contract)
    write_contract(root, contract)


def build_sandbox(root: Path) -> None:
    """A valid input (PROMOTE) in ``root/in``; a valid evidence file and a secret in
    ``root/outside``."""
    inp = root / "in"
    (inp / "policies").mkdir(parents=True)
    contract = base_contract()
    write_results_csv(inp / RESULTS, simulate(200))
    for policy in (contract["baseline"], *contract["candidates"]):
        config = {"model": policy["policy_id"], "top_k": 5}
        (inp / policy["config"]).write_bytes(orjson.dumps(config))
    write_contract(root, contract)
    (root / "outside").mkdir()
    write_results_csv(root / "outside" / "results.csv", simulate(200))
    (root / "outside" / "secret.txt").write_text("not for the job\n")


def as_dataset(root: Path) -> Path:
    """Turn the evidence file into a dataset directory ``evidence/results.csv/`` of one part."""
    evidence = root / "in" / RESULTS
    data = evidence.read_bytes()
    evidence.unlink()
    evidence.mkdir()
    (evidence / "part-0.csv").write_bytes(data)
    return evidence


def _part_links_outside(root: Path) -> None:
    dataset = as_dataset(root)
    (dataset / "part-0.csv").unlink()
    (dataset / "part-0.csv").symlink_to(root / "outside" / "results.csv")


def _part_links_to_secret(root: Path) -> None:
    dataset = as_dataset(root)
    (dataset / "part-1.csv").symlink_to(root / "outside" / "secret.txt")


def _subdirectory_loop(root: Path) -> None:
    (as_dataset(root) / "k=v").symlink_to(".")


def _subdirectory_links_outside(root: Path) -> None:
    (as_dataset(root) / "k=v").symlink_to(root / "outside")


def make_fifo(path: Path) -> None:
    """A FIFO whose reader, if any, gets end-of-file instead of waiting forever: a daemon
    thread opens it for writing and closes it (so a job that wrongly reads it fails, not hangs)."""
    os.mkfifo(path)

    def release() -> None:
        os.close(os.open(path, os.O_WRONLY))

    threading.Thread(target=release, daemon=True).start()


def _fifo_part(root: Path) -> None:
    make_fifo(as_dataset(root) / "part-1.csv")


def _fifo_evidence(root: Path) -> None:
    (root / "in" / RESULTS).unlink()
    make_fifo(root / "in" / RESULTS)


def _evidence_link_loop(root: Path) -> None:
    evidence = root / "in" / RESULTS
    evidence.unlink()
    evidence.symlink_to(evidence.name)


def _evidence_path_nul(root: Path) -> None:
    edit_contract(root, lambda c: c["evidence"][0].update(path="evidence/res\x00ults.csv"))


def _seed_past_64_bits(root: Path) -> None:
    edit_contract(root, lambda c: c["statistics"].update(seed=2**64 + 1))


def _integer_of_5000_digits(root: Path) -> None:
    text = (root / "in" / "contract.yaml").read_text()
    (root / "in" / "contract.yaml").write_text(text.replace("seed: 7", "seed: " + "9" * 5000))


def _contract_nested_deep(root: Path) -> None:
    text = (root / "in" / "contract.yaml").read_text()
    (root / "in" / "contract.yaml").write_text(text + "x: " + "[" * 10_000 + "]" * 10_000)


def _contract_too_large(root: Path) -> None:
    text = (root / "in" / "contract.yaml").read_text()
    padding = "#" + " " * 100 + "\n"
    (root / "in" / "contract.yaml").write_text(text + padding * (MAX_CONTRACT_BYTES // 100))


def _laughs(levels: int) -> str:
    """A "billion laughs" YAML document: 9**levels strings once its aliases are expanded."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _config_laughs(root: Path) -> None:
    levels = next(k for k in range(1, 30) if 9**k > MAX_YAML_NODES)
    (root / "in" / "policies" / "cand.yaml").write_text(_laughs(levels + 2))
    edit_contract(root, lambda c: c["candidates"][0].update(config="policies/cand.yaml"))


def _config_unparseable(root: Path) -> None:
    (root / "in" / "policies" / "cand.json").write_bytes(b'{"model": "cand", "top_k": 5')


def _config_too_large(root: Path) -> None:
    with (root / "in" / "policies" / "cand.json").open("wb") as fh:
        fh.write(b'{"model": "cand", "pad": "')
        fh.truncate(MAX_CONFIG_BYTES + 1)  # sparse: no disk written for the padding


def _too_many_candidates(root: Path) -> None:
    def more(c: Contract) -> None:
        c["candidates"] = [
            {"policy_id": f"c{i}", "config": f"policies/c{i}.json"}
            for i in range(MAX_CANDIDATES + 1)
        ]

    edit_contract(root, more)


def _candidates_past_contract_size(root: Path) -> None:
    contract = read_contract(root)
    contract["candidates"] = [
        {"policy_id": f"c{i}", "config": f"policies/c{i}.json"} for i in range(100_000)
    ]
    (root / "in" / "contract.yaml").unlink()
    (root / "in" / "contract.json").write_bytes(orjson.dumps(contract))  # JSON: quick to write


def _too_many_protected_slices(root: Path) -> None:
    slices = [{"value": f"s{i}"} for i in range(MAX_PROTECTED_SLICES + 1)]
    edit_contract(root, lambda c: c.update(protected_slices=slices))


def _as_jsonl(root: Path, extra_line: bytes) -> None:
    """Rewrite the evidence as JSON lines, after one more line."""
    csv = root / "in" / RESULTS
    header, *rows = csv.read_text().splitlines()
    names = header.split(",")
    lines = [orjson.dumps(dict(zip(names, row.split(","), strict=True))) for row in rows]
    jsonl = csv.with_suffix(".jsonl")
    jsonl.write_bytes(b"\n".join([extra_line, *lines]) + b"\n")  # the first line: parsed first
    csv.unlink()
    edit_contract(
        root, lambda c: c["evidence"][0].update(path="evidence/results.jsonl", format="jsonl")
    )


def _jsonl_nested_deep(root: Path) -> None:
    depth = 100_000
    _as_jsonl(root, b'{"example_id": ' + b"[" * depth + b"]" * depth + b"}")


def _jsonl_part_nested_deep(root: Path) -> None:
    """A dataset directory of JSON-lines parts (read by Arrow's JSON reader), one line deep."""
    depth = 100_000
    _as_jsonl(root, b'{"example_id": ' + b"[" * depth + b"]" * depth + b"}")
    jsonl = root / "in" / "evidence" / "results.jsonl"
    data = jsonl.read_bytes()
    jsonl.unlink()
    jsonl.mkdir()
    (jsonl / "part-0.jsonl").write_bytes(data)


def _jsonl_nested_past_limit(root: Path) -> None:
    depth = MAX_JSON_DEPTH + 1
    _as_jsonl(root, b'{"example_id": ' + b"[" * depth + b"]" * depth + b"}")


def _csv_header_field_huge(root: Path) -> None:
    csv = root / "in" / RESULTS
    text = csv.read_text()
    field = "h" * (MAX_CSV_FIELD_CHARS + 1)
    csv.write_text(text.replace("cost_usd\n", f"cost_usd,{field}\n", 1))


def _quality_cell(value: str) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        csv = root / "in" / RESULTS
        header, first, *rest = csv.read_text().splitlines()
        cells = first.split(",")
        cells[header.split(",").index("correct")] = value
        csv.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")

    return build


def _history_links_outside(root: Path) -> None:
    (root / "out").mkdir()
    (root / "out" / "history").symlink_to(root / "outside")


def _outputs_link_outside(root: Path) -> None:
    """Every output file name already in ``out/`` as a link to the outside secret."""
    (root / "out").mkdir()
    for name in OUTPUT_FILES:
        (root / "out" / name).symlink_to(root / "outside" / "secret.txt")


def _lock_links_outside(root: Path) -> None:
    (root / "out").mkdir()
    (root / "out" / ".ragwarrant.lock").symlink_to(root / "outside" / "secret.txt")


CASES: tuple[Case, ...] = (
    Case(
        "dataset part links outside",
        _part_links_outside,
        78,
        "path-escapes-input",
        "symlink that does not lead to a file inside",
    ),
    Case(
        "dataset part links to a secret",
        _part_links_to_secret,
        78,
        "path-escapes-input",
        "symlink that does not lead to a file inside",
    ),
    Case(
        "dataset subdirectory loop (k=v -> .)",
        _subdirectory_loop,
        78,
        "path-escapes-input",
        "is a symlink to a directory",
    ),
    Case(
        "dataset subdirectory links out",
        _subdirectory_links_outside,
        78,
        "path-escapes-input",
        "is a symlink to a directory",
    ),
    Case(
        "dataset part is a FIFO",
        _fifo_part,
        78,
        "path-special-file",
        "not a regular file",
    ),
    Case(
        "evidence file is a FIFO",
        _fifo_evidence,
        78,
        "path-special-file",
        "not a regular file",
    ),
    Case(
        "evidence symlink loop",
        _evidence_link_loop,
        78,
        "path-unresolvable",
        "symlink loop",
    ),
    Case(
        "NUL byte in an evidence path",
        _evidence_path_nul,
        78,
        "contract-invalid",
        "control characters",
    ),
    Case(
        "seed 2^64+1",
        _seed_past_64_bits,
        78,
        "contract-invalid",
        "statistics.seed",
    ),
    Case(
        "YAML integer of 5,000 digits",
        _integer_of_5000_digits,
        78,
        "contract-limit",
        "integer of 5,000 digits; the limit is 40",
    ),
    Case(
        "contract nested 10^4 deep",
        _contract_nested_deep,
        78,
        "contract-limit",
        "the limit of 200 levels",
    ),
    Case(
        "contract past its size limit",
        _contract_too_large,
        78,
        "contract-limit",
        "bytes; the limit is 524,288 bytes",
    ),
    Case(
        "billion-laughs policy config",
        _config_laughs,
        78,
        "contract-limit",
        "nodes; the limit is 1,000,000",
    ),
    Case(
        "unparseable policy config",
        _config_unparseable,
        78,
        "contract-syntax",
        "is not valid JSON",
    ),
    Case(
        "policy config past its size limit",
        _config_too_large,
        78,
        "contract-limit",
        "bytes; the limit is 1,048,576 bytes",
    ),
    Case(
        "candidates past the limit",
        _too_many_candidates,
        78,
        "contract-invalid",
        "65 candidates, past the limit of 64",
    ),
    Case(
        "10^5 candidates",
        _candidates_past_contract_size,
        78,
        "contract-limit",
        "bytes; the limit is 524,288 bytes",
    ),
    Case(
        "protected slices past the limit",
        _too_many_protected_slices,
        78,
        "contract-invalid",
        "257 protected slices, past the limit of 256",
    ),
    Case(
        "JSONL line nested 10^5 deep",
        _jsonl_nested_deep,
        12,
        "evidence-limit",
        "levels deep; the limit is 128",
    ),
    Case(
        "JSONL part nested 10^5 deep",
        _jsonl_part_nested_deep,
        12,
        "evidence-limit",
        "levels deep; the limit is 128",
    ),
    Case(
        "JSONL line nested past the limit",
        _jsonl_nested_past_limit,
        12,
        "evidence-limit",
        "nested 130 levels deep; the limit is 128",
    ),
    Case(
        "CSV header field past the limit",
        _csv_header_field_huge,
        12,
        "evidence-limit",
        "limit of 131,072 characters",
    ),
    Case(
        "boolean in a quality cell",
        _quality_cell("True"),
        12,
        "evidence-wrong-type",
        "a boolean",
    ),
    Case(
        "no-break space after a number",
        _quality_cell("1.0\u00a0"),
        12,
        "evidence-wrong-type",
        "plain ASCII digits only",
    ),
    Case(
        "out/history links outside",
        _history_links_outside,
        73,
        "output-link",
        "history in the output directory is a symlink",
        runs=2,
    ),
    Case(
        "out/ files link outside (replaced, never written through)",
        _outputs_link_outside,
        0,
        "PROMOTE",
        "every gate passed",
        runs=2,
    ),
    Case(
        "out lock file links outside",
        _lock_links_outside,
        73,
        "output-link",
        ".ragwarrant.lock in the output directory is a symlink",
    ),
)


def main(argv: list[str]) -> int:
    """Write every case's sandbox under ``argv[0]`` (one directory per case)."""
    if len(argv) != 1:
        print("usage: python -m tests.hostile.corpus DIR", file=sys.stderr)
        return 64
    for i, case in enumerate(CASES):
        root = Path(argv[0]) / f"{i:02d}"
        build_sandbox(root)
        case.build(root)
        print(f"{root}: {case.name} (exit {case.exit_code}, {case.code})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
