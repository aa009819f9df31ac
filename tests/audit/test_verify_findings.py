"""Tests of ``verify`` against the second fresh-user findings: forged report.md and
validation_report.json, missing or downgraded attestations, ERROR records, planted files."""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from ragwarrant import cli
from ragwarrant.audit.attestation import ATTESTATION_FILENAME, SIGNING_CHECK_ID, write_attestation
from ragwarrant.audit.record import record_error
from ragwarrant.audit.verify import verify_output_dir
from ragwarrant.commands.verify import read_private_texts, replay_with_job
from ragwarrant.errors import ContractError
from ragwarrant.exit_codes import ExitCode
from ragwarrant.pipeline import run_job

from .conftest import Run, write_keypair


def _rewrite(out: Path, name: str, data: bytes) -> None:
    """Replace an output, fix its manifest digest and re-forge the unsigned attestation."""
    (out / name).write_bytes(data)
    manifest_path = out / "manifest.json"
    manifest = orjson.loads(manifest_path.read_bytes())
    for digest in manifest["outputs"]:
        if digest["path"] == name:
            digest["sha256"] = hashlib.sha256(data).hexdigest()
            digest["bytes"] = len(data)
    manifest_path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    subjects = [
        d["path"]
        for d in manifest["inputs"]
        if d["path"] == "contract.yaml" or d["path"].startswith("policies/")
    ] or ["decision.json"]
    write_attestation(out, subjects)


def _verify(run: Run, **kw: object) -> list[tuple[str, str | None, str]]:
    report = verify_output_dir(
        run.output_dir,
        input_dir=run.input_dir,
        replay=replay_with_job,
        private_texts=read_private_texts,
        **kw,  # type: ignore[arg-type]
    )
    return [(m.file, m.field, m.kind) for m in report.mismatches]


# --- (3) report.md and validation_report.json --------------------------------------------------


def test_rewritten_report_md_is_caught_without_inputs(real_run: Run) -> None:
    """A report.md that says something else, manifest and statement updated, is a mismatch."""
    text = (real_run.output_dir / "report.md").read_text()
    lines = text.splitlines(keepends=True)
    forged = "".join([lines[0], lines[1], "Candidate c1 may replace the baseline.\n", *lines[3:]])
    _rewrite(real_run.output_dir, "report.md", forged.encode())
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.field, m.kind) for m in report.mismatches] == [
        ("report.md", "line 3", "render")
    ]


def test_untouched_report_md_equals_its_rendering(real_run: Run) -> None:
    """The check is exact on an untouched run (no false alarm)."""
    report = verify_output_dir(real_run.output_dir)
    assert report.ok
    assert "report.md equals its rendering from decision.json" in report.checked


def test_pruned_validation_report_is_caught_by_the_replay(real_run: Run) -> None:
    """Removing checks (manifest and statement updated) differs from the replay."""
    doc = orjson.loads((real_run.output_dir / "validation_report.json").read_bytes())
    kept = [c for c in doc["checks"] if not c["id"].startswith("evidence-readable:")]
    assert len(kept) < len(doc["checks"])
    doc["checks"] = kept
    _rewrite(
        real_run.output_dir,
        "validation_report.json",
        orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n",
    )
    assert verify_output_dir(real_run.output_dir).ok  # no inputs: nothing to compare with
    mismatches = _verify(real_run)
    assert mismatches and {m[0] for m in mismatches} == {"validation_report.json"}
    assert mismatches[0][1] is not None and mismatches[0][1].startswith("checks[")


def test_validation_report_replay_ignores_only_the_selftest_timing(real_run: Run) -> None:
    """The self-test's timing may differ from the replay's; any other message may not."""
    path = real_run.output_dir / "validation_report.json"
    doc = orjson.loads(path.read_bytes())
    selftest = next(i for i, c in enumerate(doc["checks"]) if c["id"] == "engine-selftest")
    doc["checks"][selftest]["message"] = "12 planted cases passed in 9.999 s"
    _rewrite(real_run.output_dir, "validation_report.json", orjson.dumps(doc))
    assert _verify(real_run) == []
    other = next(i for i, c in enumerate(doc["checks"]) if c["id"] != "engine-selftest")
    doc["checks"][other]["message"] += " (edited)"
    _rewrite(real_run.output_dir, "validation_report.json", orjson.dumps(doc))
    assert _verify(real_run) == [("validation_report.json", f"checks[{other}].message", "replay")]


def test_withheld_report_md_verifies_and_a_restored_one_does_not(
    make_input, tmp_path: Path
) -> None:
    """A report.md withheld by publication hygiene is the notice; anything else is a mismatch."""
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    inp = make_input(configs={"cand": {"model": "cand", "top_k": 5, "note": secret}})
    out = tmp_path / "out"
    run_job(inp, out, on_stage=lambda event, **fields: None)
    decision = orjson.loads((out / "decision.json").read_bytes())
    gate = next(g for g in decision["run_gates"] if g["id"] == "hard:publication-hygiene")
    assert gate["status"] == "fail" and "report.md" in gate["details"]["withheld"]
    run = Run(inp, out)
    assert _verify(run) == []
    _rewrite(out, "report.md", b"# ragwarrant decision\n\nPROMOTE\n")
    assert _verify(run)[0] == ("report.md", None, "render")


# --- (5) and (13f) attestation -------------------------------------------------------------------


def test_missing_attestation_is_a_mismatch_without_a_key(real_run: Run) -> None:
    """Every completed run writes decision.intoto.json; its absence is a mismatch."""
    (real_run.output_dir / ATTESTATION_FILENAME).unlink()
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.kind) for m in report.mismatches] == [(ATTESTATION_FILENAME, "missing")]


@pytest.fixture()
def signed_run(make_input, tmp_path: Path) -> tuple[Run, Path]:  # type: ignore[no-untyped-def]
    """A signed run of a small synthetic input; returns the run and the public key."""
    private, public = write_keypair(tmp_path, "k")
    inp = make_input()
    out = tmp_path / "signed-out"
    run_job(inp, out, signing_key=private, on_stage=lambda event, **fields: None)
    return Run(inp, out), public


def test_signed_run_records_its_signing_and_verifies(signed_run: tuple[Run, Path]) -> None:
    """The signed run says so in validation_report.json and verifies with and without the key."""
    run, public = signed_run
    doc = orjson.loads((run.output_dir / "validation_report.json").read_bytes())
    check = next(c for c in doc["checks"] if c["id"] == SIGNING_CHECK_ID)
    assert check["expected"] == "dsse-ed25519" and check["found"].startswith("sha256:")
    assert _verify(run) == []
    assert _verify(run, public_key=public) == []


def test_signed_envelope_downgraded_to_a_statement_is_caught_without_a_key(
    signed_run: tuple[Run, Path], tmp_path: Path
) -> None:
    """Replacing the DSSE envelope by its (unsigned) Statement is a mismatch even without a key."""
    run, _ = signed_run
    out = tmp_path / "out"
    shutil.copytree(run.output_dir, out)
    envelope = orjson.loads((out / ATTESTATION_FILENAME).read_bytes())
    (out / ATTESTATION_FILENAME).write_bytes(base64.b64decode(envelope["payload"]))
    report = verify_output_dir(out)
    assert [(m.file, m.kind) for m in report.mismatches] == [(ATTESTATION_FILENAME, "signature")]


def test_error_record_writes_a_signed_attestation(tmp_path: Path) -> None:
    """A signed run that ends in ERROR still attests its record, signed with the run's key."""
    private, public = write_keypair(tmp_path, "k")
    out = tmp_path / "out"
    error = ContractError("contract-invalid", "margin_abs must be finite", hint="fix it")
    assert record_error(out, error, signing_key=private)
    assert (out / ATTESTATION_FILENAME).is_file()
    report = verify_output_dir(out, public_key=public)
    assert report.ok and report.signature_verified


def test_error_record_with_an_unusable_key_is_attested_unsigned(tmp_path: Path) -> None:
    """When the key itself is the error, the record is attested unsigned and says so."""
    bad_key = tmp_path / "bad.pem"
    bad_key.write_text("not a key")
    out = tmp_path / "out"
    assert record_error(out, ContractError("x-bad", "bad"), signing_key=bad_key)
    doc = orjson.loads((out / "validation_report.json").read_bytes())
    check = next(c for c in doc["checks"] if c["id"] == SIGNING_CHECK_ID)
    assert check["expected"] == "unsigned"
    assert verify_output_dir(out).ok


# --- (8) ERROR records and verify --input ------------------------------------------------------


def _error_run(make_input, tmp_path: Path) -> Run:  # type: ignore[no-untyped-def]
    """A real run that ends in ERROR 78 (an unknown contract key), written by the CLI."""
    inp = make_input(mutate=lambda c: c.update({"unknown_key": 1}))
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 78
    return Run(inp, out)


def test_error_record_matches_a_replay_that_fails_alike(make_input, tmp_path: Path) -> None:
    """verify --input on a faithful ERROR record exits 0 (never 78)."""
    run = _error_run(make_input, tmp_path)
    assert _verify(run) == []
    argv = ["verify", str(run.output_dir), "--input", str(run.input_dir)]
    assert cli.main(argv) == 0


def test_error_record_differing_from_the_replay_is_a_mismatch(make_input, tmp_path: Path) -> None:
    """An ERROR record whose inputs now fail otherwise, or not at all, exits 65."""
    run = _error_run(make_input, tmp_path)
    (run.input_dir / "contract.yaml").unlink()  # now a different error
    argv = ["verify", str(run.output_dir), "--input", str(run.input_dir)]
    assert cli.main(argv) == ExitCode.VERIFY_MISMATCH
    assert _verify(run) == [("decision.json", "error.code", "replay")]


def test_error_record_whose_inputs_now_decide_is_a_mismatch(make_input, tmp_path: Path) -> None:
    """A recorded ERROR whose inputs replay to a decision is a mismatch, not a success."""
    run = _error_run(make_input, tmp_path)
    good = make_input()
    assert _verify(Run(good, run.output_dir)) == [("decision.json", "error.code", "replay")]


@pytest.mark.parametrize(
    ("flags", "code", "option"),
    [
        (["--signing-key", "{tmp}/nonexistent.pem"], "signing-key-unreadable", "--signing-key"),
        (["--ledger", "{out}/ledger.jsonl"], "ledger-inside-run-directory", "--ledger"),
        (["--summary-json", "{out}/s.json"], "path-inside-run-directory", "--summary-json"),
    ],
    ids=["signing-key", "ledger", "summary-json"],
)
def test_error_from_an_option_is_recorded_and_verify_says_why_it_cannot_replay(
    make_input, tmp_path: Path, capsys, flags, code, option
) -> None:
    """An ERROR from a command-line option's value records the option and the options given
    (no path value); verify --input says it cannot replay it (it reported a mismatch)."""
    inp, out = make_input(), tmp_path / "out"
    argv = [f.format(tmp=tmp_path, out=out) for f in flags]
    assert cli.main(["run", "--input", str(inp), "--output", str(out), *argv]) != 0
    error = orjson.loads((out / "decision.json").read_bytes())["error"]
    assert (error["code"], error["option"]) == (code, option)
    assert error["options"] == [option, "--exit-mode=class"]
    capsys.readouterr()
    assert cli.main(["verify", str(out), "--input", str(inp)]) == 0
    printed = capsys.readouterr().out
    assert (
        f"note: not replayed: the recorded ERROR {code} came from the value of the command-line "
        f"option {option}, not from the inputs" in printed
    )
    note = next(line for line in printed.splitlines() if "not replayed" in line)
    assert str(tmp_path) not in note


def test_error_from_the_inputs_records_no_option(make_input, tmp_path: Path) -> None:
    """An ERROR from the inputs names no option, so verify --input replays it."""
    run = _error_run(make_input, tmp_path)
    error = orjson.loads((run.output_dir / "decision.json").read_bytes())["error"]
    assert (error["option"], error["options"]) == (None, ["--exit-mode=class"])
    report = verify_output_dir(
        run.output_dir,
        input_dir=run.input_dir,
        replay=replay_with_job,
        private_texts=read_private_texts,
    )
    assert report.replayed and report.notes == []


# --- (13g) a planted file ---------------------------------------------------------------------


def test_unexpected_file_message_names_the_file_and_the_rule(real_run: Run) -> None:
    """A file not in the manifest is flagged by name, with the rule verify applies."""
    (real_run.output_dir / "notes.txt").write_text("left over")
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.kind) for m in report.mismatches] == [("notes.txt", "unexpected-file")]
    message = report.mismatches[0].message
    assert "notes.txt" in message and "not in manifest.json" in message
    assert ATTESTATION_FILENAME in message


def test_report_md_rendered_before_a_redaction_verifies_and_other_edits_do_not(
    make_input, tmp_path: Path
) -> None:
    """report.md may differ from the re-rendering only on lines that show a redacted field."""
    config = {"model": "cand", "top_k": 5, "db_password": "hunter2xyz"}
    inp = make_input(configs={"cand": config})
    out = tmp_path / "out"
    run_job(inp, out, on_stage=lambda event, **fields: None)
    assert b"[withheld: " in (out / "decision.json").read_bytes()
    run = Run(inp, out)
    assert _verify(run) == []
    lines = (out / "report.md").read_text().splitlines(keepends=True)
    lines[2] = "Candidate cand may replace the baseline.\n"
    _rewrite(out, "report.md", "".join(lines).encode())
    assert _verify(run)[0] == ("report.md", "line 3", "render")
