"""The README runs as documented: its minimal contract, its set-up, its links to docs/."""

from __future__ import annotations

import re

import numpy as np
import orjson
import yaml

from ragwarrant import cli
from ragwarrant.contract import ReleaseContract
from tests.conftest import REPO


def _minimal_contract() -> str:
    text = (REPO / "README.md").read_text()
    block = text.split("A minimal contract", 1)[1]
    return re.search(r"```yaml\n(.*?)```", block, flags=re.S).group(1)


def test_minimal_contract_validates_and_runs(tmp_path):
    """The README's minimal contract, with a CSV of the columns it names, gives a decision."""
    contract = yaml.safe_load(_minimal_contract())
    ReleaseContract.model_validate(contract)
    inp = tmp_path / "in"
    (inp / "policies").mkdir(parents=True)
    for name in ("prod", "topk3"):
        (inp / "policies" / f"{name}.json").write_bytes(
            orjson.dumps({"top_k": 5 if name == "prod" else 3})
        )
    (inp / "contract.yaml").write_text(_minimal_contract())
    rng = np.random.default_rng(0)
    lines = ["question_id,policy,task,split,faithfulness,cost"]
    for i in range(300):
        base = rng.random()
        split = "holdout" if i % 3 else "dev"
        lines.append(f"q{i},prod,t{i % 2},{split},{base:.4f},{0.01 + rng.random() / 100:.5f}")
        lines.append(f"q{i},topk3,t{i % 2},{split},{min(1.0, base + 0.01):.4f},{0.005:.5f}")
    (inp / "evals.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 0
    d = orjson.loads((out / "decision.json").read_bytes())
    assert d["candidates"][0]["tested_on"] == "holdout" and d["candidates"][0]["paired_n"] == 200


def test_repeated_runs_of_an_example_block_as_the_readme_says(make_input, tmp_path):
    """Runs of one example under one id BLOCK (``hard:duplicate-rows``), as README states;
    README no longer claims repeated example ids are resampled as clusters."""
    inp = make_input()
    csv = inp / "evidence" / "results.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([*lines, *lines[1:]]) + "\n")  # every example run twice
    out = tmp_path / "out"
    cli.main(["run", "--input", str(inp), "--output", str(out)])
    decision = orjson.loads((out / "decision.json").read_bytes())
    failed = [g["id"] for c in decision["candidates"] for g in c["gates"] if g["status"] == "fail"]
    assert decision["run_class"] == "BLOCK"
    assert "hard:duplicate-rows" in failed
    for page in ("README.md", "docs/decision.md"):
        assert "or repeated example ids)" not in " ".join((REPO / page).read_text().split())
    decision_page = " ".join((REPO / "docs" / "decision.md").read_text().split())
    paragraph = decision_page.split("**Repeated measurements.**", 1)[1].split("**", 1)[0]
    assert "`hard:duplicate-rows`" in paragraph and "group key" in paragraph


REFERENCE_PAGES = (
    "contract.md",
    "formats.md",
    "decision.md",
    "outputs.md",
    "corroboration.md",
    "scheduling.md",
    "audit.md",
)


def test_readme_links_every_reference_page():
    """Each docs/ page that holds the README's former reference sections is linked from it."""
    readme = (REPO / "README.md").read_text()
    for page in REFERENCE_PAGES:
        assert (REPO / "docs" / page).is_file()
        assert f"](docs/{page})" in readme, f"README does not link docs/{page}"


def test_readme_set_up_is_two_make_targets():
    """The README's set-up block holds `make demo` and `make test`, both Makefile targets."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Set-up: two commands", 1)[1].split("```sh\n", 1)[1].split("```")[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, flags=re.M) and re.search(r"^test:", makefile, flags=re.M)


def test_readme_demo_output_is_what_the_demo_prints(tmp_path, capsys):
    """Every line of README's "What `make demo` printed" block (but the elided ones) is printed by
    the demo's two commands, `run` then `summary`, on the shipped example."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## What `make demo` printed", 1)[1].split("```text\n", 1)[1]
    expected = [line for line in block.split("```", 1)[0].splitlines() if "..." not in line]
    out = tmp_path / "demo"
    code = cli.main(
        ["run", "--input", str(REPO / "examples" / "ragtruth-generators"), "--output", str(out)]
    )
    assert cli.main(["summary", str(out)]) == code
    printed = capsys.readouterr().out.splitlines() + [f"exit code: {code}"]
    for line in expected:
        assert line in printed, f"README shows {line!r}, the demo does not print it"
