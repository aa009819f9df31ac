"""Tests of ``ragwarrant verify``: every kind of tampering with a real run is detected."""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
from pathlib import Path

import orjson
import pytest

from ragwarrant.audit.attestation import ATTESTATION_FILENAME, load_private_key, write_attestation
from ragwarrant.audit.ledger import append_entry, verify_chain
from ragwarrant.audit.ledger_history import record_run
from ragwarrant.audit.publish import render_decision_views
from ragwarrant.audit.report import render_report
from ragwarrant.audit.verify import diff_json, verify_output_dir
from ragwarrant.audit.writer import HISTORY_DIR, LOCK_FILE
from ragwarrant.commands import ledger as ledger_command
from ragwarrant.commands import verify as verify_command
from ragwarrant.commands.verify import read_private_texts, replay_with_job
from ragwarrant.errors import InputError
from ragwarrant.exit_codes import ExitCode
from ragwarrant.outputs import Decision

from .conftest import Run, write_keypair

OUTPUTS = ("decision.json", "validation_report.json", "report.md", "report.html", "junit.xml")


def _flip_one_byte(path: Path) -> None:
    """Change one letter inside the file (keeps JSON parseable: letters only occur in strings)."""
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data)):
        if chr(data[i]).isalpha() and chr(data[i]).islower():
            data[i] = ord("x") if data[i] != ord("x") else ord("y")
            break
    path.write_bytes(bytes(data))


def _rewrite_consistently(
    run: Run, name: str, data: bytes, *, forge_attestation: bool = True
) -> None:
    """Replace an output and update its manifest digest, as a careful forger would.

    An unsigned attestation, if the run has one, is forged too (anyone can write one); pass
    ``forge_attestation=False`` to leave it as the run wrote it.
    """
    (run.output_dir / name).write_bytes(data)
    manifest_path = run.output_dir / "manifest.json"
    manifest = orjson.loads(manifest_path.read_bytes())
    for digest in manifest["outputs"]:
        if digest["path"] == name:
            digest["sha256"] = hashlib.sha256(data).hexdigest()
            digest["bytes"] = len(data)
    manifest_path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    if forge_attestation and (run.output_dir / ATTESTATION_FILENAME).exists():
        write_attestation(run.output_dir, _subjects(run))


def _subjects(run: Run) -> list[str]:
    manifest = orjson.loads((run.output_dir / "manifest.json").read_bytes())
    return [
        d["path"]
        for d in manifest["inputs"]
        if d["path"] == "contract.yaml" or d["path"].startswith("policies/")
    ]


def test_untouched_run_verifies_with_replay(real_run: Run) -> None:
    """A run verifies against its manifest, schemas and a replay from its inputs."""
    report = verify_output_dir(
        real_run.output_dir, input_dir=real_run.input_dir, replay=replay_with_job
    )
    assert report.mismatches == []
    assert report.replayed
    assert report.exit_code == 0


@pytest.mark.parametrize("name", OUTPUTS)
def test_one_changed_byte_in_an_output_is_named(real_run: Run, name: str) -> None:
    """One changed byte in any output is reported first, as a sha256 mismatch of that file."""
    _flip_one_byte(real_run.output_dir / name)
    report = verify_output_dir(real_run.output_dir)
    first = report.mismatches[0]
    assert (first.file, first.kind) == (name, "sha256")
    assert report.exit_code == ExitCode.VERIFY_MISMATCH


def test_one_changed_byte_in_the_manifest_is_named(real_run: Run) -> None:
    """A changed digest in manifest.json is reported against the output it describes."""
    path = real_run.output_dir / "manifest.json"
    manifest = orjson.loads(path.read_bytes())
    target = manifest["outputs"][0]
    text = path.read_bytes()
    sha = target["sha256"].encode()
    forged = sha[:-1] + (b"0" if sha[-1:] != b"0" else b"1")
    path.write_bytes(text.replace(sha, forged))
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.kind) == (target["path"], "sha256")


def test_deleted_output_is_named(real_run: Run) -> None:
    """A deleted output is reported as missing."""
    (real_run.output_dir / "validation_report.json").unlink()
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.kind) == ("validation_report.json", "missing")


def test_deleted_manifest_is_named(real_run: Run) -> None:
    """Without manifest.json nothing can be verified, and that is a mismatch."""
    (real_run.output_dir / "manifest.json").unlink()
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.kind) == ("manifest.json", "missing")


def test_unexpected_file_is_named(real_run: Run) -> None:
    """A file the manifest does not list is reported."""
    (real_run.output_dir / "extra.json").write_text("{}")
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.kind) for m in report.mismatches] == [("extra.json", "unexpected-file")]


def test_a_planted_fifo_is_an_unexpected_file_never_opened(real_run: Run) -> None:
    """A FIFO the manifest does not list is reported like a planted file (opening it would
    block verify until a writer came), and so is a FIFO in the lock file's place."""
    os.mkfifo(real_run.output_dir / "decision.override.json")
    report = verify_output_dir(real_run.output_dir)
    planted = [("decision.override.json", "unexpected-file")]
    assert [(m.file, m.kind) for m in report.mismatches] == planted
    (real_run.output_dir / "decision.override.json").unlink()
    lock = real_run.output_dir / LOCK_FILE
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.kind) for m in report.mismatches] == [(LOCK_FILE, "unexpected-file")]


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_a_history_that_is_no_directory_is_an_unexpected_file(
    real_run: Run, tmp_path: Path, plant: str
) -> None:
    """``history`` as a FIFO or a symlink (to a directory elsewhere) passed verify (trial B):
    only a real ``history/`` directory holds earlier runs; anything else there is planted."""
    history = real_run.output_dir / HISTORY_DIR
    shutil.rmtree(history, ignore_errors=True)
    if plant == "fifo":
        os.mkfifo(history)
    else:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "passwd").write_text("x\n")
        history.symlink_to(tmp_path / "elsewhere")
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.kind) for m in report.mismatches] == [(HISTORY_DIR, "unexpected-file")]


def test_altered_input_is_named_and_not_replayed(real_run: Run) -> None:
    """A changed input file is reported by name; the replay is skipped."""
    _flip_one_byte(real_run.input_dir / "policies" / "gpt-4-0613.json")
    report = verify_output_dir(
        real_run.output_dir, input_dir=real_run.input_dir, replay=replay_with_job
    )
    first = report.mismatches[0]
    assert (first.file, first.kind) == ("input:policies/gpt-4-0613.json", "input-sha256")
    assert not report.replayed


def test_deleted_input_is_named(real_run: Run) -> None:
    """A missing input file is reported by name."""
    (real_run.input_dir / "evidence" / "quality.csv").unlink()
    first = verify_output_dir(real_run.output_dir, input_dir=real_run.input_dir).mismatches[0]
    assert (first.file, first.kind) == ("input:evidence/quality.csv", "input-missing")


def test_planted_secret_is_found_even_with_consistent_hashes(real_run: Run) -> None:
    """A secret planted in report.md (manifest updated to match) is caught by the hygiene rescan."""
    report_md = (real_run.output_dir / "report.md").read_bytes()
    planted = report_md + b"\nkey: " + b"sk-" + b"live0123456789abcdefghijklmnop" + b"\n"
    _rewrite_consistently(real_run, "report.md", planted)
    report = verify_output_dir(real_run.output_dir)
    hygiene = [m for m in report.mismatches if m.kind == "hygiene"]
    assert [(m.file, m.message) for m in hygiene] == [("report.md", "api-token")]
    last_line = len(planted.splitlines())
    assert hygiene[0].field == f"line {last_line}"
    # The re-rendering check catches the same edit independently.
    assert [(m.file, m.kind) for m in report.mismatches if m.kind != "hygiene"] == [
        ("report.md", "render")
    ]


@pytest.mark.parametrize("name", ["report.html", "junit.xml"])
def test_edited_decision_view_is_named_despite_consistent_hashes(real_run: Run, name: str) -> None:
    """An edited report.html or junit.xml (manifest updated to match) differs from its rendering."""
    data = (real_run.output_dir / name).read_bytes()
    _rewrite_consistently(real_run, name, data.replace(b"PROMOTE", b"PR0MOTE"))
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.kind) for m in report.mismatches] == [(name, "render")]


def test_schema_violation_is_named_by_field(real_run: Run) -> None:
    """An output that no longer matches its schema is reported with the offending field."""
    decision = orjson.loads((real_run.output_dir / "decision.json").read_bytes())
    decision["candidates"][0]["gates"][0]["status"] = "maybe"
    _rewrite_consistently(
        real_run, "decision.json", orjson.dumps(decision, option=orjson.OPT_INDENT_2)
    )
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.field, first.kind) == (
        "decision.json",
        "candidates[0].gates[0].status",
        "schema",
    )


def test_forged_decision_is_caught_by_the_replay(real_run: Run) -> None:
    """A re-hashed decision with one changed bound differs from its replay at that field."""
    decision = orjson.loads((real_run.output_dir / "decision.json").read_bytes())
    cand = next(i for i, c in enumerate(decision["candidates"]) if c["gates"])
    gate = next(
        i
        for i, g in enumerate(decision["candidates"][cand]["gates"])
        if g.get("lower_bound") is not None
    )
    decision["candidates"][cand]["gates"][gate]["lower_bound"] += 0.5
    forged = orjson.dumps(decision, option=orjson.OPT_INDENT_2) + b"\n"
    _rewrite_consistently(real_run, "decision.json", forged)
    # A careful forger re-renders report.md, report.html and junit.xml from the forged decision.
    _rewrite_consistently(
        real_run, "report.md", render_report(Decision.model_validate_json(forged)).encode()
    )
    for name, data in render_decision_views(Decision.model_validate_json(forged)).items():
        _rewrite_consistently(real_run, name, data)
    assert verify_output_dir(real_run.output_dir).ok  # hashes, schema and rendering cannot tell
    report = verify_output_dir(
        real_run.output_dir, input_dir=real_run.input_dir, replay=replay_with_job
    )
    assert [(m.file, m.field, m.kind) for m in report.mismatches] == [
        ("decision.json", f"candidates[{cand}].gates[{gate}].lower_bound", "replay")
    ]


def test_diff_json_ignores_time_fields_only() -> None:
    """run_id, started_at and finished_at are ignored; everything else is compared in order."""
    a = {"run_id": "1", "started_at": "t1", "x": [1, {"y": 2.0}], "z": True}
    b = {"run_id": "2", "started_at": "t2", "x": [1, {"y": 2.5}], "z": True, "w": None}
    ignore = frozenset({"run_id", "started_at", "finished_at"})
    assert [p for p, _ in diff_json(a, b, ignore=ignore)] == ["x[1].y", "w"]
    assert list(diff_json(a, {**a, "run_id": "9"}, ignore=ignore)) == []


def test_signed_attestation_verifies_and_tampering_fails(real_run: Run, tmp_path: Path) -> None:
    """A signed attestation verifies; a changed manifest or another key is a mismatch."""
    private, public = write_keypair(tmp_path, "k")
    write_attestation(real_run.output_dir, _subjects(real_run), load_private_key(private))
    report = verify_output_dir(real_run.output_dir, public_key=public)
    assert report.ok and report.signature_verified

    other_dir = tmp_path / "other"
    other_dir.mkdir()
    _, other_public = write_keypair(other_dir, "k")
    first = verify_output_dir(real_run.output_dir, public_key=other_public).mismatches[0]
    assert (first.file, first.kind) == (ATTESTATION_FILENAME, "signature")

    _rewrite_consistently(
        real_run,
        "report.md",
        (real_run.output_dir / "report.md").read_bytes() + b"\n",
        forge_attestation=False,
    )
    report = verify_output_dir(real_run.output_dir, public_key=public)
    last = len((real_run.output_dir / "report.md").read_bytes().splitlines())
    assert [(m.file, m.field) for m in report.mismatches] == [
        ("report.md", f"line {last}"),
        (ATTESTATION_FILENAME, "predicate.manifest.digest.sha256"),
    ]


def test_changed_attestation_byte_fails_the_signature(real_run: Run, tmp_path: Path) -> None:
    """One changed byte of the signed payload is a signature mismatch."""
    private, public = write_keypair(tmp_path, "k")
    write_attestation(real_run.output_dir, _subjects(real_run), load_private_key(private))
    path = real_run.output_dir / ATTESTATION_FILENAME
    envelope = orjson.loads(path.read_bytes())
    payload = envelope["payload"]
    envelope["payload"] = payload[:40] + ("A" if payload[40] != "A" else "B") + payload[41:]
    path.write_bytes(orjson.dumps(envelope))
    first = verify_output_dir(real_run.output_dir, public_key=public).mismatches[0]
    assert (first.file, first.kind) == (ATTESTATION_FILENAME, "signature")


def test_public_key_without_attestation_is_a_mismatch(real_run: Run, tmp_path: Path) -> None:
    """Asking for a signature where there is none fails."""
    _, public = write_keypair(tmp_path, "k")
    first = verify_output_dir(real_run.output_dir, public_key=public).mismatches[0]
    assert (first.file, first.kind) == (ATTESTATION_FILENAME, "signature")


def test_unsigned_attestation_subjects_are_checked(real_run: Run) -> None:
    """An unsigned Statement is still checked against the manifest's input digests."""
    write_attestation(real_run.output_dir, _subjects(real_run))
    assert verify_output_dir(real_run.output_dir).ok
    path = real_run.output_dir / ATTESTATION_FILENAME
    statement = orjson.loads(path.read_bytes())
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    path.write_bytes(orjson.dumps(statement))
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.field) == (ATTESTATION_FILENAME, "subject[0].digest.sha256")


def test_missing_output_dir_is_an_input_error(tmp_path: Path) -> None:
    """A missing OUTDIR is a typed input error (exit 66), not a mismatch."""
    with pytest.raises(InputError) as err:
        verify_output_dir(tmp_path / "nope")
    assert err.value.code == "verify-output-missing"


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ragwarrant")
    sub = parser.add_subparsers(dest="command", required=True)
    verify_command.register(sub)
    ledger_command.register(sub)
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_verify_command_exit_codes_and_message(
    real_run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ragwarrant verify` exits 0 on a clean run, else 65 naming the first file and field."""
    assert _cli(["verify", str(real_run.output_dir), "--input", str(real_run.input_dir)]) == 0
    assert "verified:" in capsys.readouterr().out
    decision = orjson.loads((real_run.output_dir / "decision.json").read_bytes())
    decision["summary"] = "forged"
    _rewrite_consistently(
        real_run, "decision.json", orjson.dumps(decision, option=orjson.OPT_INDENT_2) + b"\n"
    )
    assert (
        _cli(["verify", str(real_run.output_dir), "--input", str(real_run.input_dir)])
        == ExitCode.VERIFY_MISMATCH
    )
    out = capsys.readouterr().out
    assert out.startswith('MISMATCH: decision.json:summary: replay: recorded "forged"')


def test_ledger_commands(real_run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ledger verify`: 0 when intact, else 65 naming the broken line; `show` prints history."""
    ledger = tmp_path / "ledger.jsonl"
    record_run(ledger, real_run.output_dir)
    append_entry(
        ledger,
        {
            "run_id": "later",
            "contract": {"id": "ragtruth-generators"},
            "run_class": "REJECT",
            "candidates": [],
        },
    )
    assert verify_chain(ledger) == []
    assert _cli(["ledger", "verify", str(ledger)]) == 0
    assert "ledger intact: 2 entries" in capsys.readouterr().out
    assert _cli(["ledger", "show", str(ledger), "--contract", "ragtruth-generators"]) == 0
    shown = capsys.readouterr().out
    assert "contract ragtruth-generators (2 runs)" in shown
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(lines[0].replace(b"PROMOTE", b"REJECT", 1) + lines[1])
    assert _cli(["ledger", "verify", str(ledger)]) == ExitCode.VERIFY_MISMATCH
    assert capsys.readouterr().out.startswith(
        "LEDGER BROKEN: first broken entry at line 1: entry-hash"
    )


def test_copied_evidence_text_is_found_with_inputs(text_run: Run) -> None:
    """A response copied into report.md (manifest updated) is found once the inputs are given."""
    texts = [t for t in read_private_texts(text_run.input_dir) if len(t.split()) >= 20]
    assert texts
    copied = " ".join(texts[0].split()[:14])
    # validation_report.json is not rendered into report.md, so only the copy scan can tell.
    doc = orjson.loads((text_run.output_dir / "validation_report.json").read_bytes())
    doc["checks"].append({"id": "note", "target": "outputs", "status": "pass", "message": copied})
    _rewrite_consistently(
        text_run, "validation_report.json", orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    )
    assert verify_output_dir(text_run.output_dir).ok  # without the evidence nothing to compare to
    report = verify_output_dir(
        text_run.output_dir, input_dir=text_run.input_dir, private_texts=read_private_texts
    )
    last = len(doc["checks"]) - 1
    assert [(m.file, m.field, m.kind, m.message) for m in report.mismatches] == [
        ("validation_report.json", f"checks[{last}].message", "hygiene", "copied-text")
    ]


def test_text_run_verifies_with_copy_scan_and_replay(text_run: Run) -> None:
    """The untouched corroboration demo verifies with the copy scan and the replay."""
    report = verify_output_dir(
        text_run.output_dir,
        input_dir=text_run.input_dir,
        replay=replay_with_job,
        private_texts=read_private_texts,
    )
    assert report.mismatches == [] and report.replayed


def _leaf_paths(node: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every scalar (leaf) of a JSON document, as a tuple of keys and indices."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaf_paths(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaf_paths(v, (*path, i))]
    return [path]


def _edited(value: object) -> object:
    """A different value of the same JSON type (null becomes a string)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("x" if not value.endswith("x") else "y") if value else "x"
    return "x"


def _statement_leaves(pristine_run: Run) -> list[tuple[object, ...]]:
    statement = orjson.loads((pristine_run.output_dir / ATTESTATION_FILENAME).read_bytes())
    return _leaf_paths(statement)


def test_every_single_field_edit_of_the_attestation_is_a_mismatch(real_run: Run) -> None:
    """Each field of the unsigned Statement, edited alone and re-rendered canonically, fails."""
    from ragwarrant.audit.attestation import render_document

    path = real_run.output_dir / ATTESTATION_FILENAME
    original = path.read_bytes()
    passing = []
    for leaf in _leaf_paths(orjson.loads(original)):
        statement = orjson.loads(original)
        node = statement
        for part in leaf[:-1]:
            node = node[part]
        node[leaf[-1]] = _edited(node[leaf[-1]])
        path.write_bytes(render_document(statement))
        report = verify_output_dir(real_run.output_dir)
        if report.ok or report.mismatches[0].file != ATTESTATION_FILENAME:
            passing.append(leaf)
    path.write_bytes(original)
    assert passing == []
    assert verify_output_dir(real_run.output_dir).ok


@pytest.mark.parametrize("field", ["selected_policy", "evidence_class", "claim_scope"])
def test_predicate_field_edit_is_named(real_run: Run, field: str) -> None:
    """An edited predicate field is named by its path, not only as a byte difference."""
    from ragwarrant.audit.attestation import render_document

    path = real_run.output_dir / ATTESTATION_FILENAME
    statement = orjson.loads(path.read_bytes())
    statement["predicate"][field] = "forged"
    path.write_bytes(render_document(statement))
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.field, first.kind) == (
        ATTESTATION_FILENAME,
        f"predicate.{field}",
        "attestation",
    )


def test_every_byte_of_the_attestation_matters(real_run: Run) -> None:
    """Same JSON, other bytes (an extra space, no final newline) is a mismatch."""
    path = real_run.output_dir / ATTESTATION_FILENAME
    original = path.read_bytes()
    path.write_bytes(original.replace(b'": "', b'":  "', 1))
    assert orjson.loads(path.read_bytes()) == orjson.loads(original)
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.field) == (ATTESTATION_FILENAME, None)
    path.write_bytes(original.rstrip(b"\n"))
    assert not verify_output_dir(real_run.output_dir).ok


def test_attestation_subjects_must_be_contract_then_configs(real_run: Run) -> None:
    """A consistent Statement naming an evidence file instead of a policy config fails."""
    manifest = orjson.loads((real_run.output_dir / "manifest.json").read_bytes())
    evidence = next(d["path"] for d in manifest["inputs"] if d["path"].startswith("evidence/"))
    write_attestation(real_run.output_dir, ["contract.yaml", evidence])
    report = verify_output_dir(real_run.output_dir)
    assert [(m.file, m.field) for m in report.mismatches][:1] == [(ATTESTATION_FILENAME, "subject")]


def test_signed_envelope_with_extra_member_is_a_mismatch(real_run: Run, tmp_path: Path) -> None:
    """Without a key, a signed envelope must still be canonical: an added member fails."""
    private, _ = write_keypair(tmp_path, "k")
    write_attestation(real_run.output_dir, _subjects(real_run), load_private_key(private))
    from ragwarrant.audit.attestation import render_document

    path = real_run.output_dir / ATTESTATION_FILENAME
    envelope = orjson.loads(path.read_bytes())
    envelope["note"] = "x"
    path.write_bytes(render_document(envelope))
    assert any(
        m.file == ATTESTATION_FILENAME for m in verify_output_dir(real_run.output_dir).mismatches
    )


def test_dropped_policy_subject_is_caught_by_the_replay(real_run: Run) -> None:
    """A Statement that leaves out the baseline's config passes alone but not with a replay."""
    subjects = [s for s in _subjects(real_run) if s != "policies/gpt-4-0613.json"]  # the baseline
    write_attestation(real_run.output_dir, subjects)
    assert verify_output_dir(real_run.output_dir).ok
    report = verify_output_dir(
        real_run.output_dir, input_dir=real_run.input_dir, replay=replay_with_job
    )
    assert [(m.file, m.field) for m in report.mismatches] == [(ATTESTATION_FILENAME, "subject")]


def test_verify_rescans_with_the_kinds_the_run_allowed(real_run: Run) -> None:
    """An IP address is a hygiene mismatch unless the run recorded that its contract allows it."""
    decision = orjson.loads((real_run.output_dir / "decision.json").read_bytes())
    decision["summary"] += " (served from 10.20.30.40)"
    data = orjson.dumps(decision, option=orjson.OPT_INDENT_2) + b"\n"
    _rewrite_consistently(real_run, "decision.json", data)
    report_md = render_report(Decision.model_validate_json(data)).encode()
    _rewrite_consistently(real_run, "report.md", report_md)
    first = verify_output_dir(real_run.output_dir).mismatches[0]
    assert (first.file, first.field, first.kind, first.message) == (
        "decision.json",
        "summary",
        "hygiene",
        "ip-address",
    )
    validation = orjson.loads((real_run.output_dir / "validation_report.json").read_bytes())
    check = next(c for c in validation["checks"] if c["id"] == "publication-hygiene")
    check["expected"] = "allowed: ip-address"
    _rewrite_consistently(
        real_run,
        "validation_report.json",
        orjson.dumps(validation, option=orjson.OPT_INDENT_2) + b"\n",
    )
    assert verify_output_dir(real_run.output_dir).ok


def test_unsigned_verify_says_what_it_does_not_prove(
    real_run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --public-key the command says the files could all have been rewritten."""
    assert _cli(["verify", str(real_run.output_dir), "--no-replay"]) == 0
    out = capsys.readouterr().out
    assert "what it does not prove: who wrote them" in out
    assert "rewrite every file consistently" in out
