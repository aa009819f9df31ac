"""End to end: the CLI on temp dirs, every exit code, outputs that validate against contracts/."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import orjson

from ragwarrant import cli
from ragwarrant.outputs import MANIFEST_FILE, OUTPUT_FILES
from ragwarrant.version import __version__
from tests.conftest import REPO, simulate

CONTRACTS = REPO / "contracts"


def run(args: list[str]) -> int:
    return cli.main(args)


def load(out: Path, name: str = "decision.json") -> dict:
    return orjson.loads((out / name).read_bytes())


def assert_outputs_valid(out: Path) -> None:
    for name, schema in (
        ("decision.json", "decision.schema.json"),
        ("validation_report.json", "validation_report.schema.json"),
        ("manifest.json", "manifest.schema.json"),
    ):
        text = (out / name).read_text()
        assert "NaN" not in text and "Infinity" not in text
        jsonschema.validate(json.loads(text), json.loads((CONTRACTS / schema).read_text()))
    manifest = load(out, "manifest.json")
    assert sorted(o["path"] for o in manifest["outputs"]) == sorted(
        name for name in OUTPUT_FILES if name != MANIFEST_FILE
    )


def test_promote_exit_0(make_input, tmp_path):
    """A noninferior, cheaper candidate is promoted with exit 0."""
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input()), "--output", str(out)]) == 0
    d = load(out)
    assert d["run_class"] == "PROMOTE" and d["selected_policy"] == "cand"
    assert_outputs_valid(out)


def test_reject_exit_10_quality_loss(make_input, tmp_path):
    """A cheaper candidate whose quality loss exceeds the margin is rejected with exit 10."""
    out = tmp_path / "out"
    inp = make_input(data=simulate(400, quality_delta=-0.25))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 10
    c = load(out)["candidates"][0]
    assert c["class"] == "REJECT" and c["reasons"][0].startswith("noninferiority-loss")
    assert_outputs_valid(out)


def test_reject_no_benefit(make_input, tmp_path):
    """A candidate that is clearly not cheaper is rejected with reason no-benefit."""
    out = tmp_path / "out"
    inp = make_input(data=simulate(200, cost_ratio=1.5))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 10
    assert load(out)["candidates"][0]["reasons"][0].startswith("no-benefit")


def test_inconclusive_exit_11(make_input, tmp_path):
    """An interval straddling the margin gives INCONCLUSIVE with a sample-size hint."""
    out = tmp_path / "out"
    inp = make_input(data=simulate(60, quality_delta=-0.05, seed=3))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 11
    c = load(out)["candidates"][0]
    ni = next(g for g in c["gates"] if g["id"] == "noninferiority:correct")
    assert ni["status"] == "inconclusive"
    assert ni["lower_bound"] < -0.05 <= ni["upper_bound"]
    assert "What would change this INCONCLUSIVE" in (out / "report.md").read_text()


def test_block_exit_12_duplicates(make_input, tmp_path):
    """Duplicated (policy, example) rows BLOCK with exit 12, naming the example."""
    out = tmp_path / "out"
    inp = make_input()
    csv = inp / "evidence" / "results.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines + [lines[1]]) + "\n")
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    c = load(out)["candidates"][0]
    gate = next(g for g in c["gates"] if g["id"] == "hard:duplicate-rows")
    assert gate["status"] == "fail" and "ex00000" in gate["reason"]
    assert_outputs_valid(out)


def test_duplicate_in_another_candidate_blocks_the_run(make_input, tmp_path):
    """A duplicated row of any declared policy BLOCKs, even when another candidate would PROMOTE."""
    data = simulate(400)
    data["cand2"] = {k: v.copy() for k, v in data["cand"].items()}

    def two_candidates(c):
        c["candidates"].append({"policy_id": "cand2", "config": "policies/cand2.json"})

    inp = make_input(data=data, mutate=two_candidates)
    csv = inp / "evidence" / "results.csv"
    lines = csv.read_text().splitlines()
    dup = next(line for line in lines if ",cand2," in line)
    csv.write_text("\n".join([*lines, dup]) + "\n")
    out = tmp_path / "out"
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    for c in load(out)["candidates"]:
        gate = next(g for g in c["gates"] if g["id"] == "hard:duplicate-rows")
        assert gate["status"] == "fail" and "policy cand2" in gate["reason"]


def test_usage_exit_64(tmp_path):
    """An unknown option is a usage error (64)."""
    assert run(["run", "--bogus"]) == 64
    assert run([]) == 64


def test_input_missing_exit_66_writes_error_record(tmp_path):
    """A missing input directory exits 66 and still writes an ERROR decision."""
    out = tmp_path / "out"
    assert run(["run", "--input", str(tmp_path / "nope"), "--output", str(out)]) == 66
    d = load(out)
    assert (
        d["run_class"] == "ERROR" and d["error"]["code"] == "input-missing" and d["exit_code"] == 66
    )
    assert_outputs_valid(out)


def test_a_missing_input_directory_is_named_as_typed(tmp_path, capsys, monkeypatch):
    """``--input`` names the path as typed when relative, by its last component when absolute:
    a host's absolute path would have the record withhold the whole message."""
    monkeypatch.chdir(tmp_path)
    for given, shown in (("in/nope", "in/nope"), (str(tmp_path / "nope"), "nope")):
        assert run(["run", "--input", given, "--output", str(tmp_path / "out")]) == 66
        line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("ragwarrant: "))
        expected = f"--input {shown} does not exist"
        assert line == f"ragwarrant: error: {expected}"
        assert load(tmp_path / "out")["error"]["message"] == expected


def test_internal_error_exit_70(make_input, tmp_path, monkeypatch):
    """An unexpected exception becomes exit 70 with an ERROR record, never a decision."""
    import ragwarrant.pipeline as pipeline

    def boom(*a, **k):
        raise RuntimeError("planted bug")

    monkeypatch.setattr(pipeline, "build_index", boom)
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input()), "--output", str(out)]) == 70
    d = load(out)
    assert (
        d["run_class"] == "ERROR"
        and d["error"]["code"] == "internal-error"
        and "planted bug" in d["error"]["message"]
    )


def test_output_not_writable_exit_73(make_input, tmp_path):
    """An output directory that cannot be created exits 73 (ERROR cannot be written there)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert run(["run", "--input", str(make_input()), "--output", str(blocker / "out")]) == 73


def _world_readable_copy(inp: Path) -> tuple[Path, Path]:
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="rw-unpriv-"))
    os.chmod(root, 0o755)
    dst = root / "in"
    shutil.copytree(inp, dst)
    for p in [dst, *dst.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return root, dst


def test_output_read_only_dir_as_unprivileged_user(make_input, tmp_path):
    """As a non-root user, a read-only output directory exits 73 (checked in a subprocess)."""
    root, inp = _world_readable_copy(make_input())
    out = root / "ro"
    out.mkdir()
    if os.geteuid() == 0:
        os.chmod(out, 0o555)
        cmd = [
            "setpriv",
            "--reuid=65532",
            "--regid=65532",
            "--clear-groups",
            sys.executable,
            "-m",
            "ragwarrant",
            "run",
            "--input",
            str(inp),
            "--output",
            str(out),
        ]
    else:
        os.chmod(out, stat.S_IRUSR | stat.S_IXUSR)
        cmd = [sys.executable, "-m", "ragwarrant", "run", "--input", str(inp), "--output", str(out)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "job"), HOME=str(root))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(root))
    assert proc.returncode == 73, proc.stderr
    assert "not writable" in proc.stderr
    assert not (out / "decision.json").exists()


def test_malformed_contract_exit_78(make_input, tmp_path):
    """A contract with an unknown field exits 78, names the field, and writes an ERROR record."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c.update({"surprise": 1}))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    d = load(out)
    assert d["error"]["code"] == "contract-invalid" and "surprise" in d["error"]["message"]


def test_contract_yaml_syntax_error_exit_78(make_input, tmp_path):
    """A YAML syntax error exits 78 with the line number."""
    out = tmp_path / "out"
    inp = make_input()
    (inp / "contract.yaml").write_text("id: [unclosed\n")
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    assert "line" in load(out)["error"]["message"]


def test_contract_path_escape_exit_78(make_input, tmp_path):
    """An evidence path with '..' is refused as an invalid contract."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c["evidence"][0].update({"path": "../secret.csv"}))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    assert "'..'" in load(out)["error"]["message"]


def test_symlink_out_of_input_exit_78(make_input, tmp_path):
    """An evidence file that is a symlink leading outside the input directory is refused."""
    out = tmp_path / "out"
    inp = make_input()
    outside = tmp_path / "outside.csv"
    (inp / "evidence" / "results.csv").rename(outside)
    (inp / "evidence" / "results.csv").symlink_to(outside)
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    assert load(out)["error"]["code"] == "path-escapes-input"


def test_json_contract_accepted(make_input, tmp_path):
    """contract.json works like contract.yaml."""
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input(fmt="json")), "--output", str(out)]) == 0


def test_same_inputs_same_decision(make_input, tmp_path):
    """Two runs on the same inputs give the same decision.json apart from time fields."""
    inp = make_input()
    a, b = tmp_path / "a", tmp_path / "b"
    assert run(["run", "--input", str(inp), "--output", str(a)]) == 0
    assert run(["run", "--input", str(inp), "--output", str(b)]) == 0
    da, db = load(a), load(b)
    for d in (da, db):
        for k in ("run_id", "started_at", "finished_at"):
            d.pop(k)
    assert da == db


def test_input_directory_not_written(make_input, tmp_path):
    """The job never writes into the input directory."""
    inp = make_input()
    before = sorted((p.relative_to(inp), p.stat().st_mtime_ns) for p in inp.rglob("*"))
    run(["run", "--input", str(inp), "--output", str(tmp_path / "out")])
    after = sorted((p.relative_to(inp), p.stat().st_mtime_ns) for p in inp.rglob("*"))
    assert before == after


def test_manifest_hashes_match_files(make_input, tmp_path):
    """manifest.json lists the sha256 of every input and output file, and is written last."""
    import hashlib

    inp = make_input()
    out = tmp_path / "out"
    run(["run", "--input", str(inp), "--output", str(out)])
    m = load(out, "manifest.json")
    for entry in m["outputs"]:
        assert hashlib.sha256((out / entry["path"]).read_bytes()).hexdigest() == entry["sha256"]
    for entry in m["inputs"]:
        assert hashlib.sha256((inp / entry["path"]).read_bytes()).hexdigest() == entry["sha256"]
    assert {e["path"] for e in m["inputs"]} == {
        "contract.yaml",
        "policies/base.json",
        "policies/cand.json",
        "evidence/results.csv",
    }
    assert m["seed"] == 7
    assert (out / "manifest.json").stat().st_mtime_ns >= (out / "decision.json").stat().st_mtime_ns


def test_config_differences_shown(make_input, tmp_path):
    """The decision shows what differs between candidate and baseline configs."""
    out = tmp_path / "out"
    inp = make_input(
        configs={
            "base": {"retrieval": {"top_k": 5}, "model": "m"},
            "cand": {"retrieval": {"top_k": 3}, "model": "m"},
        }
    )
    run(["run", "--input", str(inp), "--output", str(out)])
    diffs = load(out)["candidates"][0]["config_differences"]
    assert diffs == [{"path": "retrieval.top_k", "baseline": 5, "candidate": 3}]


def test_logs_are_json_lines_with_final_summary(make_input, tmp_path):
    """Off a TTY, stderr carries JSON log lines ending with the run summary; stdout the decision."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "job"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragwarrant",
            "run",
            "--input",
            str(make_input()),
            "--output",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    events = [json.loads(line)["event"] for line in proc.stderr.splitlines()]
    assert proc.returncode == 0
    assert "inputs_read" in events and events[-1] == "run_finished"
    assert events.index("source_read") < events.index("inputs_read")
    assert events.index("inputs_read") < events.index("candidate_evaluated")
    assert proc.stdout.startswith("PROMOTE (exit 0): cand=PROMOTE — next: ")
    assert proc.stdout.count("\n") == 1


def test_termination_message_written(make_input, tmp_path):
    """--termination-message-path receives a one-line decision summary."""
    msg = tmp_path / "termination-log"
    run(
        [
            "run",
            "--input",
            str(make_input()),
            "--output",
            str(tmp_path / "o"),
            "--termination-message-path",
            str(msg),
        ]
    )
    text = msg.read_text()
    assert text.startswith("PROMOTE: cand=PROMOTE") and text.count("\n") == 1


def test_no_nan_reaches_json(make_input, tmp_path):
    """NaN values in the evidence are counted, never serialised."""
    data = simulate(200)
    data["cand"]["correct"][:3] = np.nan
    out = tmp_path / "out"
    inp = make_input(
        data=data, mutate=lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"})
    )
    run(["run", "--input", str(inp), "--output", str(out)])
    assert_outputs_valid(out)
    mv = load(out, "validation_report.json")["missing_values"]
    assert {"policy_id": "cand", "metric": "correct", "reason": "null", "count": 3} in mv


def _two_candidates(make_input, splits: bool):
    data = simulate(240, seed=5)
    bad = simulate(240, seed=5, quality_delta=-0.3)["cand"]
    rng = np.random.default_rng(0)
    split = np.where(rng.random(240) < 0.5, "dev", "conf")
    for cols in (data["base"], data["cand"], bad):
        cols["doc"] = np.array(
            [f"{s}:{i}" for i, s in enumerate(split)]
        )  # group key carries the split here
    data = {"base": data["base"], "good": data["cand"], "bad": bad}

    def mutate(c):
        c["candidates"] = [
            {"policy_id": "bad", "config": "policies/bad.json"},
            {"policy_id": "good", "config": "policies/good.json"},
        ]
        if splits:
            c["evidence"][0]["columns"]["split"] = "split"
            c["splits"] = {"development": "dev", "confirmatory": "conf"}
        c["statistics"]["min_paired_n"] = 30

    inp = make_input(data=data, mutate=mutate)
    if splits:
        csv = inp / "evidence" / "results.csv"
        lines = csv.read_text().splitlines()
        out = [lines[0] + ",split"]
        for line in lines[1:]:
            i = int(line.split(",")[0][2:])
            out.append(f"{line},{split[i]}")
        csv.write_text("\n".join(out) + "\n")
    return inp


def test_several_candidates_selected_on_development_split(make_input, tmp_path):
    """With a development split, its best candidate is chosen; only it is tested on confirmatory."""
    out = tmp_path / "out"
    assert (
        run(["run", "--input", str(_two_candidates(make_input, True)), "--output", str(out)]) == 0
    )
    d = load(out)
    classes = {c["policy_id"]: c["class"] for c in d["candidates"]}
    assert classes == {"bad": "NOT_SELECTED", "good": "PROMOTE"}
    assert d["selection"]["method"] == "development-split" and d["selected_policy"] == "good"
    assert d["selection"]["quality_only_pick"] == "good"
    good = next(c for c in d["candidates"] if c["policy_id"] == "good")
    assert good["tested_on"] == "conf" and 90 < good["paired_n"] < 150


def test_several_candidates_holm_without_development_split(make_input, tmp_path):
    """Without a development split every candidate is tested, with Holm across candidates."""
    out = tmp_path / "out"
    assert (
        run(["run", "--input", str(_two_candidates(make_input, False)), "--output", str(out)]) == 0
    )
    d = load(out)
    classes = {c["policy_id"]: c["class"] for c in d["candidates"]}
    assert classes == {"bad": "REJECT", "good": "PROMOTE"}
    good = next(c for c in d["candidates"] if c["policy_id"] == "good")
    holm = next(g for g in good["gates"] if g["id"] == "multiplicity:holm-across-candidates")
    assert holm["status"] == "pass" and holm["alpha"] in (0.025, 0.05)
    assert d["selection"]["method"] == "holm-across-candidates"


def test_unreadable_evidence_blocks_with_location(make_input, tmp_path):
    """A wrong-typed cell BLOCKs the run and the validation report names file, row and column."""
    out = tmp_path / "out"
    inp = make_input()
    csv = inp / "evidence" / "results.csv"
    lines = csv.read_text().splitlines()
    parts = lines[5].split(",")
    parts[4] = "yes-ish"
    lines[5] = ",".join(parts)
    csv.write_text("\n".join(lines) + "\n")
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    check = next(
        c
        for c in load(out, "validation_report.json")["checks"]
        if c["id"] == "evidence-readable:results"
    )
    assert (check["file"], check["row"], check["column"], check["status"]) == (
        "evidence/results.csv",
        5,
        "correct",
        "fail",
    )
    assert check["found"] == "7 characters starting with 'y'"  # never the (private) cell
    assert load(out)["run_gates"][1]["id"] == "hard:evidence-readable:results"


def test_missing_evidence_file_blocks(make_input, tmp_path):
    """A contract reference that does not resolve BLOCKs every candidate."""
    out = tmp_path / "out"
    inp = make_input()
    (inp / "evidence" / "results.csv").unlink()
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    d = load(out)
    assert (
        d["run_gates"][0]["id"] == "hard:contract-references"
        and d["run_gates"][0]["status"] == "fail"
    )
    assert d["candidates"][0]["class"] == "BLOCK"


def test_init_is_registered(tmp_path, capsys):
    """`ragwarrant init` is a command: an unreadable export is an input error (66), not usage."""
    target = tmp_path / "contract.yaml"
    assert run(["init", "--from", str(tmp_path / "missing.csv"), "--output", str(target)]) == 66
    assert not target.exists()


HEAVY_PACKAGES = ("numpy", "scipy", "pyarrow", "pydantic")


def _heavy_packages_loaded_by(
    args: list[str], packages: tuple[str, ...] = HEAVY_PACKAGES
) -> list[str]:
    """The ``packages`` a fresh interpreter has imported after ``ragwarrant ARGS`` returns."""
    probe = (
        "import sys\nfrom ragwarrant.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({packages!r})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=str(REPO), check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_version_and_help_import_no_numpy_scipy_pyarrow_or_pydantic() -> None:
    """``--version`` and ``--help`` (every command registered) load none of the heavy packages."""
    assert _heavy_packages_loaded_by(["--version"]) == []
    assert _heavy_packages_loaded_by(["--help"]) == []
    assert _heavy_packages_loaded_by(["run", "--help"]) == []


def test_version_and_help_import_no_logging_yaml_or_report_packages() -> None:
    """``--version`` and ``--help`` exit in the parser: no structlog, PyYAML, jinja2 (issue 13)."""
    light = ("structlog", "yaml", "orjson", "jinja2", "drawsvg", "cryptography", "threadpoolctl")
    assert _heavy_packages_loaded_by(["--version"], light) == []
    assert _heavy_packages_loaded_by(["--help"], light) == []
    assert _heavy_packages_loaded_by(["k8s", "render", "--help"], light) == []


def test_the_engine_imports_no_scipy_stats_until_a_method_needs_it() -> None:
    """Importing the pipeline (every gate, adapter and renderer) leaves ``scipy.stats`` unloaded."""
    probe = "import sys\nimport ragwarrant.pipeline\nprint('scipy.stats' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=str(REPO), check=True
    )
    assert proc.stdout.strip() == "False"


def test_the_example_run_imports_neither_scipy_stats_nor_scipy_optimize(tmp_path) -> None:
    """Deciding the shipped example needs scipy.special's kernels only (issue 13)."""
    probe = (
        "import sys\nfrom ragwarrant.cli import main\n"
        f"code = main(['run', '--input', 'examples/ragtruth-generators', '--output', "
        f"{str(tmp_path / 'out')!r}])\n"
        "scipy = [m for m in sys.modules if m.count('.') == 1 and m.startswith('scipy.')]\n"
        "print(code, sorted(scipy))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=str(REPO), check=True
    )
    code, _, loaded = proc.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0"
    assert "'scipy.special'" in loaded  # the probe sees what the run loads
    assert "'scipy.stats'" not in loaded and "'scipy.optimize'" not in loaded


def test_summary_checks_for_planted_files_without_importing_verify(tmp_path) -> None:
    """``ragwarrant summary`` (which still refuses a planted file) never loads ``audit.verify``."""
    out = tmp_path / "out"
    assert cli.main(["run", "--input", "examples/ragtruth-generators", "--output", str(out)]) == 0
    probe = (
        "import sys\nfrom ragwarrant.cli import main\n"
        f"code = main(['summary', {str(out)!r}])\n"
        "print(code, 'ragwarrant.audit.verify' in sys.modules)"
    )

    def summary_run() -> str:
        proc = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, cwd=str(REPO)
        )
        return proc.stdout.strip().splitlines()[-1]

    assert summary_run() == "0 False"
    (out / "planted.txt").write_text("x")
    assert summary_run().split()[1] == "False"  # the planted file is found by writer's check
    assert summary_run().split()[0] != "0"


def test_summary_and_verify_of_a_run_stay_lean(tmp_path) -> None:
    """``summary`` loads no numpy, scipy, pyarrow or Jinja2; ``verify`` no scipy (issue 13)."""
    out = tmp_path / "out"
    assert cli.main(["run", "--input", "examples/ragtruth-generators", "--output", str(out)]) == 0
    summary = _heavy_packages_loaded_by(
        ["summary", str(out)], ("numpy", "scipy", "pyarrow", "jinja2", "drawsvg", "yaml")
    )
    assert summary == []
    assert _heavy_packages_loaded_by(["verify", str(out)], ("scipy", "pydantic")) == ["pydantic"]


def test_the_probe_sees_a_heavy_import() -> None:
    """The sys.modules probe does report a heavy package when a command loads one."""
    assert "pydantic" in _heavy_packages_loaded_by(["schemas"])


def test_secret_in_the_contract_id_never_reaches_stdout_or_stderr(make_input, tmp_path, capfd):
    """A token in the contract id is withheld from every log line and error message."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

    def secret_id(c):
        c["id"] = token

    inp = make_input(mutate=secret_id)
    cli.main(["run", "--input", str(inp), "--output", str(tmp_path / "out")])
    out, err = capfd.readouterr()
    assert token not in out and token not in err
    assert "[withheld: " in out + err


def test_secret_in_a_policy_id_stays_out_of_the_printed_decision(make_input, tmp_path, capfd):
    """The one-line decision on stdout is the published (redacted) one, not the raw policy id."""
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    data = simulate(200)
    data[token] = data.pop("cand")

    def secret_policy(c):
        c["candidates"][0]["policy_id"] = token

    inp = make_input(data=data, mutate=secret_policy)
    cli.main(["run", "--input", str(inp), "--output", str(tmp_path / "out")])
    out, err = capfd.readouterr()
    assert out.strip() and token not in out and token not in err


def _on_a_terminal(args: list[str]) -> tuple[int, list[str]]:
    """Run ``python -m ragwarrant ARGS`` with stdout and stderr on one pseudo-terminal.

    Returns the exit code and the terminal's lines in the order written (escapes removed).
    """
    import pty
    import re

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragwarrant", *args], stdout=slave, stderr=slave, stdin=slave
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    text = re.sub(r"\r|\x1b\[K", "", b"".join(chunks).decode())
    return proc.wait(), [line for line in text.splitlines() if line.strip()]


def test_on_a_terminal_the_error_message_comes_before_the_log_record(make_input, tmp_path):
    """A bad contract on a terminal: the first line is the human error, then its hint; the
    structured ``run_failed`` record still follows."""
    inp = make_input(mutate=lambda c: c.update({"statistics": {"alpha": "high"}}))
    code, lines = _on_a_terminal(["run", "--input", str(inp), "--output", str(tmp_path / "o")])
    assert code == 78
    assert lines[0].startswith("ragwarrant: error: contract.yaml is not a valid release contract")
    assert lines[1].startswith("  hint: statistics.alpha (line ")
    assert any("run_failed" in line for line in lines[2:])


def test_off_a_terminal_the_error_message_precedes_the_json_record(make_input, tmp_path, capsys):
    """Off a terminal stderr holds the human error first, then the JSON ``run_failed`` line."""
    inp = make_input(mutate=lambda c: c.update({"statistics": {"alpha": "high"}}))
    assert run(["run", "--input", str(inp), "--output", str(tmp_path / "o")]) == 78
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("ragwarrant: error: ") and err[1].startswith("  hint: ")
    record = json.loads(next(line for line in err if '"run_failed"' in line))
    assert (record["code"], record["exit_code"]) == ("contract-invalid", 78)


def test_input_naming_the_contract_file_names_its_directory(
    make_input, tmp_path, capsys, monkeypatch
):
    """``--input DIR/contract.yaml`` exits 66 naming the option, the file and DIR to pass, as
    typed or by last component: never a host's absolute path (the record withheld the message
    whole), and the decision record keeps it."""
    inp = make_input()
    monkeypatch.chdir(inp.parent)
    hint = "pass --input the directory holding contract.yaml, not the file"
    for given, shown in (
        (f"{inp.name}/contract.yaml", f"{inp.name}/contract.yaml is a file; pass its directory"),
        (str(inp / "contract.yaml"), "contract.yaml is a file; pass its directory"),
    ):
        assert run(["run", "--input", given, "--output", str(tmp_path / "o")]) == 66
        expected = f"--input {shown} ({inp.name})"
        err = capsys.readouterr().err.splitlines()
        assert err[:2] == [f"ragwarrant: error: {expected}", f"  hint: {hint}"]
        error = load(tmp_path / "o")["error"]
        assert (error["code"], error["message"], error["hint"]) == (
            "input-not-directory",
            expected,
            hint,
        )


def test_summary_verify_init_given_a_file_or_nothing_name_it_by_last_component(
    make_input, tmp_path, capsys
):
    """``summary``/``verify`` given a file for OUTDIR or ``--input``, ``verify`` and ``summary``
    a missing OUTDIR, ``init --from`` a directory: exit 66 naming the option and the path's last
    component, never the absolute path typed; so does ``init --output`` that exists (64)."""
    inp, out = make_input(), tmp_path / "out"
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 0
    capsys.readouterr()
    decision, contract, missing = out / "decision.json", inp / "contract.yaml", tmp_path / "gone"
    for argv, message in (
        (["summary", str(decision)], "OUTDIR decision.json is a file; pass its directory (out)"),
        (
            ["summary", "--all", str(decision)],
            "OUTDIR decision.json is a file; pass its directory (out)",
        ),
        (["verify", str(decision)], "OUTDIR decision.json is a file; pass its directory (out)"),
        (
            ["verify", str(out), "--input", str(contract)],
            f"--input contract.yaml is a file; pass its directory ({inp.name})",
        ),
        (["verify", str(missing)], "OUTDIR gone does not exist or is not a directory"),
        (["summary", str(missing)], "cannot read gone/decision.json: No such file or directory"),
        (["init", "--from", str(inp)], f"--from {inp.name} is a directory, not an export file"),
    ):
        assert run(argv) == 66, argv
        first = capsys.readouterr().err.splitlines()[0]
        assert first == f"ragwarrant: error: {message}", argv
    assert run(["init", "--from", str(contract), "--output", str(contract)]) == 64
    first = capsys.readouterr().err.splitlines()[0]
    assert first == "ragwarrant: error: --output contract.yaml exists; not overwritten"


def test_output_naming_a_file_exits_73_naming_it(make_input, tmp_path, capsys):
    """``--output FILE`` is refused as a file (73, ``output-not-directory``), not as a directory
    that cannot be created."""
    inp, target = make_input(), tmp_path / "taken"
    target.write_text("x")
    assert run(["run", "--input", str(inp), "--output", str(target)]) == 73
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "ragwarrant: error: --output taken is a file, not a directory"
    assert target.read_text() == "x"


def test_the_console_script_exits_without_the_interpreter_teardown(tmp_path) -> None:
    """``entry`` prints all output, runs exit handlers, keeps the code, and skips the teardown."""
    probe = (
        "import atexit, sys\n"
        "class Teardown:\n"
        "    def __del__(self):\n"
        "        print('teardown', flush=True)\n"
        "keep = Teardown()\n"
        "atexit.register(lambda: print('handler', flush=True))\n"
        "from ragwarrant.cli import entry\n"
        "sys.argv = ['ragwarrant', *sys.argv[1:]]\n"
        "entry()\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=str(REPO)
        )

    version = run("--version")  # exits in the parser: the usual exit
    assert version.returncode == 0 and __version__ in version.stdout
    assert "handler" in version.stdout and "teardown" in version.stdout
    out = tmp_path / "out"
    decided = run("run", "--input", "examples/ragtruth-generators", "--output", str(out))
    assert decided.returncode == 0 and decided.stdout.startswith("PROMOTE (exit 0)")
    assert "handler" in decided.stdout and "teardown" not in decided.stdout
    assert (out / "manifest.json").exists()
    summary = run("summary", str(out))
    assert summary.returncode == 0 and summary.stdout.startswith("decision: PROMOTE")
    assert summary.stdout.endswith("handler\n")  # buffered output flushed before it ends
    assert run("summary", str(tmp_path / "missing")).returncode == 66


def test_every_run_error_prints_its_one_line_on_stdout(make_input, tmp_path, capsys):
    """`run ... | tail -1` shows the error too: one `ERROR (exit N): code — next: hint` line."""
    root = make_input()
    (root / "contract.yaml").write_text("schema_version: [")
    cases = [
        (["--input", str(root), "--output", str(tmp_path / "o78")], 78),
        (["--input", str(root / "contract.yaml"), "--output", str(tmp_path / "o66")], 66),
        (["--input", str(root), "--output", str(root / "out")], 64),
    ]
    for args, code in cases:
        capsys.readouterr()
        assert run(["run", *args]) == code
        lines = capsys.readouterr().out.splitlines()
        assert lines and lines[-1].startswith(f"ERROR (exit {code}): "), (code, lines)
        assert " — next: " in lines[-1]


def test_side_file_options_are_named_with_the_path_by_its_last_component(make_input, tmp_path):
    """``--ledger`` inside ``--input`` and ``--summary-json`` naming a directory exit 64 naming
    the option and the path's last component: the ERROR record keeps the message whole."""
    inp, out, elsewhere = make_input(), tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    for option, given, expected in (
        ("--ledger", inp / "ledger.jsonl", "--ledger ledger.jsonl is inside the input directory"),
        (
            "--summary-json",
            elsewhere,
            "--summary-json elsewhere is a directory, not a regular file",
        ),
    ):
        argv = ["run", "--input", str(inp), "--output", str(out), option, str(given)]
        assert run(argv) == 64, option
        assert load(out)["error"]["message"] == expected
