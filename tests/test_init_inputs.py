"""`ragwarrant init` on hostile or unusual exports: every split layout drafts, policy ids never
become paths outside ``policies/``, Phoenix SpanEvaluations without spans are marked."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
import yaml

from ragwarrant import cli
from tests.conftest import REPO

EXPORTS = REPO / "tests" / "data" / "exports"
DECISIONS = {0, 10, 11}  # PROMOTE, REJECT, INCONCLUSIVE: not BLOCK, not an error


def _readme_evals(path: Path, splits: list[str], n: int = 40) -> Path:
    """README's minimal example: ``question_id,policy,task,split,faithfulness,cost``."""
    rng = random.Random(7)
    lines = ["question_id,policy,task,split,faithfulness,cost"]
    for i in range(n):
        split, task = splits[i % len(splits)], ("qa", "summary")[i % 2]
        base = rng.uniform(0.5, 0.9)
        lines.append(f"q{i},prod,{task},{split},{base:.3f},0.010")
        lines.append(f"q{i},topk3,{task},{split},{min(1.0, base + 0.05):.3f},0.006")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _init(root: Path, *files: Path) -> dict:
    code = cli.main(["init", "--from", *map(str, files), "--output", str(root / "contract.yaml")])
    assert code == 0
    return yaml.safe_load((root / "contract.yaml").read_text())


@pytest.mark.parametrize("split", ["holdout", "test"])
def test_one_split_value_drafts_and_decides(tmp_path: Path, split: str) -> None:
    """README's columns with one split value: init drafts (no template crash), the split is the
    confirmatory one, and the draft filled in the judgement fields reaches a decision."""
    root = tmp_path / "in"
    data = _init(root, _readme_evals(root / "evals.csv", [split]))
    assert data["splits"] == {"confirmatory": split}
    for q in data["quality_metrics"]:
        q["direction"], q["margin_abs"] = q["direction"] or "higher_is_better", 0.05
    data["claims"]["items"] = [{"kind": "quality-improvement", "metric": "faithfulness"}]
    data["evidence_class"] = "development"
    (root / "contract.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")]) in DECISIONS


def test_splits_without_a_development_value_are_named(tmp_path: Path) -> None:
    """Two decide-like splits (holdout, test): one is confirmatory, the other is named in a CHECK
    line as used by no role."""
    root = tmp_path / "in"
    data = _init(root, _readme_evals(root / "evals.csv", ["holdout", "test"]))
    assert data["splits"] == {"confirmatory": "holdout"}
    assert "# CHECK: no role takes the rows of split test" in (root / "contract.yaml").read_text()


def _policy_evals(path: Path, policy: str) -> Path:
    """The trial's repro: a traversal (or control characters) in a policy value."""
    rows = [f'q{i},"{policy}",0.5\nq{i},cand,0.6' for i in range(3)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("question_id,policy,faithfulness\n" + "\n".join(rows) + "\n")
    return path


def _refused(root: Path, evals: Path, capsys: pytest.CaptureFixture[str], code: int = 66) -> str:
    """init exits ``code`` and writes nothing: no draft, no stub; returns stderr."""
    argv = ["init", "--from", str(evals), "--output", str(root / "contract.yaml")]
    assert cli.main(argv) == code
    assert {p.name for p in root.iterdir()} <= {"evals.csv", "policies"}
    assert not (root / "policies" / "base.yaml").exists()
    return capsys.readouterr().err


@pytest.mark.parametrize("policy", ["../../outside/pwn_deep", "cand\x1b[31m<b>\nX"])
def test_policy_value_that_is_no_contract_id_is_refused_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str
) -> None:
    """A policy value the contract would refuse (a traversal, ESC, newline) is never a file
    name: init refuses it naming file, row and column, with the value escaped."""
    root = tmp_path / "in"
    err = _refused(root, _policy_evals(root / "evals.csv", policy), capsys)
    assert "evals.csv row 1, column 'policy'" in err
    assert "\x1b" not in err and "init-policy-id" in err
    assert not (tmp_path / "outside").exists()


def test_policy_id_resolving_outside_policies_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``a/../../../x`` matches the id pattern but its stub would leave policies/: refused."""
    root = tmp_path / "in"
    err = _refused(root, _policy_evals(root / "evals.csv", "cand/../../../outside"), capsys)
    assert "init-policy-stub-path" in err
    assert not (tmp_path / "outside.yaml").exists()


@pytest.mark.parametrize("link", ["policies/cand.yaml", "policies"])
def test_stub_is_never_written_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    """A dangling stub symlink, or a policies/ folder linked elsewhere: a usage error (64, not
    66: the exports are fine), nothing written where the link points."""
    root = tmp_path / "in"
    evals = _policy_evals(root / "evals.csv", "base")
    (root / Path(link).parent).mkdir(exist_ok=True)
    target = tmp_path / "elsewhere"
    if link == "policies":
        target.mkdir()
    (root / link).symlink_to(target)
    assert "init-policy-stub-link" in _refused(root, evals, capsys, code=64)
    assert not target.exists() or not any(target.iterdir())


def test_stdout_shows_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An input directory whose name holds ESC and a newline: each stdout line is one line,
    with the characters shown as escapes."""
    root = tmp_path / "in\x1b[2J\nPROMOTE"
    _init(root, _policy_evals(root / "evals.csv", "base"))
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "in\\x1b[2J\\nPROMOTE/policies/base.yaml: a stub config" in out
    assert len(out.splitlines()) == 4  # the source, two stubs, the draft


def test_export_file_name_with_control_characters_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A contract cannot name such a file: init refuses it (66), not a crash (70)."""
    root = tmp_path / "in"
    evals = _policy_evals(root / "ev\x1b[2J\nX.csv", "base")
    argv = ["init", "--from", str(evals), "--output", str(root / "contract.yaml")]
    assert cli.main(argv) == 66
    assert "init-path" in capsys.readouterr().err


PHOENIX = EXPORTS / "phoenix"


def _span_evaluations(root: Path, *, spans_beside: bool) -> list[Path]:
    """The real SpanEvaluations CSVs (label, score, explanation), with or without the spans
    export of the same run in their folder; only the CSVs go to ``--from``."""
    files = []
    for policy in ("baseline", "candidate"):
        folder = root / "evidence" / policy
        folder.mkdir(parents=True)
        csv = PHOENIX / policy / f"phoenix_span_evaluations_token_f1_{policy}.csv"
        files.append(Path(shutil.copy(csv, folder)))
        if spans_beside:
            shutil.copy(PHOENIX / policy / f"phoenix_spans_{policy}.parquet", folder)
    return files


def test_phoenix_span_evaluations_without_spans_ask_for_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SpanEvaluations CSVs alone: each source is marked CHECK asking for the spans file in
    --from (stdout too), and the metric id is the evaluation's name, not ``score``."""
    root = tmp_path / "in"
    data = _init(root, *_span_evaluations(root, spans_beside=False))
    text = (root / "contract.yaml").read_text()
    assert text.count("add\n  # the spans export of the same run to --from") == 2
    assert all("options" not in s for s in data["evidence"])
    assert [s["metrics"] for s in data["evidence"]] == [{"score": "token_f1"}] * 2
    assert [q["id"] for q in data["quality_metrics"]] == ["token_f1"]
    assert capsys.readouterr().out.count("CHECK: add the spans export") == 2


def test_phoenix_span_evaluations_with_spans_beside_decide(tmp_path: Path) -> None:
    """SpanEvaluations CSVs with their spans in the same folder: options.spans names them, and
    the draft filled in the judgement fields reaches a decision."""
    root = tmp_path / "in"
    data = _init(root, *_span_evaluations(root, spans_beside=True))
    assert [s["options"]["spans"] for s in data["evidence"]] == [
        f"evidence/{p}/phoenix_spans_{p}.parquet" for p in ("baseline", "candidate")
    ]
    (q,) = data["quality_metrics"]
    assert (q["id"], q["direction"]) == ("token_f1", "higher_is_better")
    q["margin_abs"] = 0.1
    data["claims"]["items"] = [{"kind": "quality-improvement", "metric": "token_f1"}]
    data["evidence_class"] = "development"
    (root / "contract.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")]) in DECISIONS


def _ragas_pair(folder: Path) -> list[str]:
    """Two Ragas exports in ``folder`` (outside the input directory of the tests below)."""
    folder.mkdir(parents=True, exist_ok=True)
    for p in ("baseline", "candidate"):
        shutil.copy(EXPORTS / "ragas" / f"ragas_evaluate_{p}.csv", folder)
    return [str(f) for f in sorted(folder.iterdir())]


@pytest.mark.parametrize("output", ["newdir", "draft.yaml", "in/contract.json"])
def test_output_must_be_a_contract_file_run_reads(
    tmp_path: Path, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--output naming no contract.yaml/.yml (a new directory without '/', draft.yaml, a JSON
    name for a YAML draft): exit 64 before anything is copied or written."""
    files = _ragas_pair(tmp_path / "exports")
    assert cli.main(["init", "--from", *files, "--output", str(tmp_path / output)]) == 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exports"]
    name = Path(output).name
    err = capsys.readouterr().err
    assert f"--output names the file '{name}'" in err
    assert "run also reads a contract.json, which init does not write" in err


def test_from_a_directory_says_it_is_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """``--from DIR``: exit 66 saying it is a directory (named by its last component, never
    the absolute path typed), with a hint to pass the files in it."""
    _ragas_pair(tmp_path / "exports")
    argv = ["init", "--from", str(tmp_path / "exports"), "--output", f"{tmp_path}/in/"]
    assert cli.main(argv) == 66
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "ragwarrant: error: --from exports is a directory, not an export file"
    assert err[1].startswith("  hint: pass --from the export files inside it")


def test_from_a_device_or_fifo_names_its_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """``--from /dev/null`` said "--from null is not a readable file" (trial B): exit 66 naming
    the kind of file it is; a missing file still is not a readable one."""
    os.mkfifo(tmp_path / "pipe")
    for given, says in (
        ("/dev/null", "null is a character device, not an export file"),
        (str(tmp_path / "pipe"), "pipe is a FIFO, not an export file"),
        (str(tmp_path / "gone.json"), "gone.json is not a readable file"),
    ):
        assert cli.main(["init", "--from", given, "--output", f"{tmp_path}/in/"]) == 66
        assert capsys.readouterr().err.splitlines()[0] == f"ragwarrant: error: --from {says}"


def test_from_the_same_file_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One export given twice (here spelled two ways) would draft two sources of one id that
    run refuses: exit 64 naming it as typed, nothing written."""
    monkeypatch.chdir(tmp_path)
    first = _ragas_pair(tmp_path / "exports")[0]
    again = f"exports/{Path(first).name}"  # ``first`` is absolute
    assert cli.main(["init", "--from", first, again, "--output", "in/"]) == 64
    assert f"--from names {again} twice (the same file)" in capsys.readouterr().err
    assert not (tmp_path / "in").exists()


def test_stub_paths_are_printed_as_output_was_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A relative --output: every path init prints is relative too (no host path on stdout)."""
    monkeypatch.chdir(tmp_path)
    files = _ragas_pair(tmp_path / "exports")
    assert cli.main(["init", "--from", *files, "--output", "in/contract.yaml"]) == 0
    wrote = [x for x in capsys.readouterr().out.splitlines() if x.startswith("wrote ")]
    assert [x.split(":")[0] for x in wrote] == [
        "wrote in/policies/baseline.yaml",
        "wrote in/policies/candidate.yaml",
        "wrote in/contract.yaml",
    ]


@pytest.mark.parametrize("output", ["d", "new/"])
def test_output_directory_means_its_contract_yaml(tmp_path: Path, output: str) -> None:
    """An existing directory (even with --force), or a path ending in '/': <dir>/contract.yaml,
    the exports copied into that directory, not its parent."""
    (tmp_path / "d").mkdir()
    files = _ragas_pair(tmp_path / "exports")
    argv = ["init", "--from", *files, "--output", f"{tmp_path}/{output}", "--force"]
    assert cli.main(argv) == 0
    root = tmp_path / output.rstrip("/")
    assert sorted(p.name for p in root.iterdir()) == ["contract.yaml", "exports", "policies"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"d", "exports", root.name})


def test_output_variables_expand_as_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """${NAME} in --output is read from the environment as run reads it; unset: exit 64, no
    literal ${NAME} directory."""
    files = _ragas_pair(tmp_path / "exports")
    monkeypatch.delenv("RW_UNSET", raising=False)
    output = str(tmp_path / "u" / "${RW_UNSET}" / "contract.yaml")
    assert cli.main(["init", "--from", *files, "--output", output]) == 64
    assert not (tmp_path / "u").exists()
    monkeypatch.setenv("RW_UNSET", "job7")
    assert cli.main(["init", "--from", *files, "--output", output]) == 0
    assert (tmp_path / "u" / "job7" / "contract.yaml").is_file()


def test_unwritable_output_is_exit_73(tmp_path: Path) -> None:
    """--output's directory cannot be created (a file is in the way): a typed error, exit 73."""
    files = _ragas_pair(tmp_path / "exports")
    (tmp_path / "f").write_text("x")
    argv = ["init", "--from", *files, "--output", str(tmp_path / "f" / "contract.yaml")]
    assert cli.main(argv) == 73


def test_nothing_is_copied_when_an_export_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TruLens app_version holding a secret: exit 66, no copy left in --output's directory,
    and the value is never echoed."""
    source = EXPORTS / "trulens" / "trulens_records_and_feedback.csv"
    text = source.read_text().replace(",candidate,", ",candidate v2 (sk-SECRET123),")
    evals = tmp_path / "exports" / "trulens.csv"
    evals.parent.mkdir()
    evals.write_text(text)
    root = tmp_path / "in"
    assert cli.main(["init", "--from", str(evals), "--output", str(root / "contract.yaml")]) == 66
    assert not root.exists()
    assert "SECRET" not in capsys.readouterr().err


def test_phoenix_evaluations_in_one_folder_link_the_spans_of_their_role(tmp_path: Path) -> None:
    """Both policies' evaluate_dataframe and spans files in one folder: each evaluations file
    is linked to the spans of its own role, never to the other policy's."""
    folder = tmp_path / "in" / "e"
    folder.mkdir(parents=True)
    names = []
    for role in ("baseline", "candidate"):
        for kind in ("evaluate_dataframe", "spans"):
            shutil.copy(EXPORTS / "phoenix" / role / f"phoenix_{kind}_{role}.parquet", folder)
            names.append(folder / f"phoenix_{kind}_{role}.parquet")
    data = _init(tmp_path / "in", *names)
    links = {s["path"]: s["options"]["spans"] for s in data["evidence"] if "options" in s}
    assert links == {
        f"e/phoenix_evaluate_dataframe_{r}.parquet": f"e/phoenix_spans_{r}.parquet"
        for r in ("baseline", "candidate")
    }


def test_spans_beside_evaluations_given_from_outside_are_copied_too(tmp_path: Path) -> None:
    """SpanEvaluations CSVs given from outside --output's directory, their spans beside them
    there: the spans are copied with them, so the draft names only files run finds."""
    files = [
        EXPORTS / "phoenix" / r / f"phoenix_span_evaluations_token_f1_{r}.csv"
        for r in ("baseline", "candidate")
    ]
    root = tmp_path / "in"
    data = _init(root, *files)
    spans = [s["options"]["spans"] for s in data["evidence"]]
    assert spans == [f"phoenix/{r}/phoenix_spans_{r}.parquet" for r in ("baseline", "candidate")]
    assert all((root / s).is_file() for s in spans)


def test_long_layout_csv_drafts_a_long_source_that_decides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A generic CSV with one row per example and metric (example_id, policy, metric, value):
    init drafts ``layout: long`` with the metric and value columns, one quality metric per metric
    name, says so on stdout, and the draft filled in the judgement fields reaches a decision (no
    BLOCK)."""
    root, rng = tmp_path / "in", random.Random(3)
    lines = ["example_id,policy,metric,value"]
    for i in range(40):
        for policy, lift in (("prod", 0.0), ("topk3", 0.05)):
            for metric in ("faithfulness", "answer_relevancy"):
                lines.append(f"q{i},{policy},{metric},{min(1.0, rng.uniform(0.5, 0.9) + lift):.3f}")
    (root / "evals.csv").parent.mkdir(parents=True)
    (root / "evals.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = _init(root, root / "evals.csv")
    assert "evals.csv: generic, pairing id-column; long layout, metric ids in column metric" in (
        capsys.readouterr().out
    )
    (source,) = data["evidence"]
    assert (source["layout"], "metrics" in source) == ("long", False)
    assert source["columns"] == {
        "example_id": "example_id", "policy_id": "policy", "metric": "metric", "value": "value"
    }  # fmt: skip
    assert [q["id"] for q in data["quality_metrics"]] == ["answer_relevancy", "faithfulness"]
    for q in data["quality_metrics"]:
        q["direction"], q["margin_abs"] = "higher_is_better", 0.05
    data["claims"]["items"] = [{"kind": "quality-improvement", "metric": "faithfulness"}]
    data["evidence_class"] = "development"
    (root / "contract.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")]) in DECISIONS


def test_deepeval_run_without_test_cases_is_refused_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A DeepEval test run whose testCases list is empty is refused as the adapter refuses it
    (66, evidence-empty, the file named), not drafted into a contract run cannot read."""
    run = tmp_path / "deepeval" / "test_run_baseline.json"
    run.parent.mkdir()
    run.write_text('{"testCases": [], "hyperparameters": {"model": "m"}}', encoding="utf-8")
    root = tmp_path / "in"
    assert cli.main(["init", "--from", str(run), "--output", str(root / "contract.yaml")]) == 66
    err = capsys.readouterr().err
    assert "evidence-empty" in err and "test_run_baseline.json has no test cases" in err
    assert not (root / "contract.yaml").exists()


def test_exports_sharing_only_the_root_keep_their_own_folder_only(tmp_path: Path):
    """Exports in different trees (their only common folder is ``/``) are placed under their own
    folder's name: the contract does not spell out the host's directories."""
    from ragwarrant.scaffold_files import place_exports

    mine = tmp_path / "team" / "evals.csv"
    mine.parent.mkdir()
    mine.write_text("id,policy,score\n")
    other = Path("/proc/self/status")  # a readable file in another tree
    placed, origin = place_exports([mine, other], tmp_path / "in")
    assert [display for _, display, _ in placed] == ["team/evals.csv", "self/status"]
    assert origin is None
