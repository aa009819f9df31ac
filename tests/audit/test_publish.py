"""Tests of publishing: render, scan, BLOCK on hygiene findings (an ERROR stays ERROR), write."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from ragwarrant.audit.hygiene import scan_outputs
from ragwarrant.audit.manifest import WITHHELD_INPUT_PREFIX
from ragwarrant.audit.publish import Publication, publish_outputs, render_outputs
from ragwarrant.audit.verify import verify_output_dir
from ragwarrant.errors import UsageError
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.inputs import check_output_dir, is_inside
from ragwarrant.outputs import (
    DECISION_FILE,
    OUTPUT_FILES,
    VALIDATION_REPORT_FILE,
    Decision,
    ErrorRecord,
    ValidationReport,
)
from ragwarrant.pipeline import run_job

from .conftest import Run
from .test_hygiene import HOME_PATH, PRIVATE_CONTEXT


def _real_models(run: Run) -> tuple[Decision, ValidationReport]:
    decision = Decision.model_validate_json((run.output_dir / "decision.json").read_bytes())
    report = ValidationReport.model_validate_json(
        (run.output_dir / "validation_report.json").read_bytes()
    )
    return decision, report


def test_publish_clean_outputs_unchanged(real_run: Run) -> None:
    """Clean outputs are published as rendered, with the decision unchanged."""
    decision, report = _real_models(real_run)
    publication = publish_outputs(decision, report, lambda: [PRIVATE_CONTEXT])
    assert publication.findings == [] and publication.withheld == []
    assert publication.decision == decision
    assert (
        publication.files["decision.json"] == (real_run.output_dir / "decision.json").read_bytes()
    )
    assert set(publication.files) == set(OUTPUT_FILES) - {"manifest.json"}


def test_clean_publication_is_what_its_final_models_render(real_run: Run) -> None:
    """Every published file equals a fresh rendering of the published decision and report."""
    decision, report = _real_models(real_run)
    publication = publish_outputs(decision, report, lambda: [PRIVATE_CONTEXT])
    final_report = ValidationReport.model_validate_json(publication.files[VALIDATION_REPORT_FILE])
    assert len(final_report.checks) == len(report.checks) + 1  # the clean scan's check
    assert publication.files == render_outputs(publication.decision, final_report)


def test_publish_blocks_and_withholds_copied_text(real_run: Run) -> None:
    """Copied evidence text BLOCKs the run, withholds report.md and redacts decision.json."""
    decision, report = _real_models(real_run)
    tested = next(i for i, c in enumerate(decision.candidates) if c.gates)
    cand = decision.candidates[tested]
    leaky_gate = cand.gates[0].model_copy(update={"reason": f"judge said: {PRIVATE_CONTEXT}"})
    cand = cand.model_copy(update={"gates": [leaky_gate, *cand.gates[1:]]})
    candidates = [*decision.candidates]
    candidates[tested] = cand
    decision = decision.model_copy(update={"candidates": candidates})

    publication = publish_outputs(decision, report, lambda: iter([PRIVATE_CONTEXT]))
    assert publication.withheld == ["report.md"]
    assert publication.redacted == ["decision.json"]
    assert publication.files["report.md"].startswith(b"# report.md withheld")
    published = Decision.model_validate_json(publication.files["decision.json"])
    assert published.run_class.value == "BLOCK" and published.exit_code == 12
    assert published.selected_policy is None
    assert all(c.decision_class.value in ("BLOCK", "NOT_SELECTED") for c in published.candidates)
    gate = published.run_gates[-1]
    assert (gate.id, gate.status.value) == ("hard:publication-hygiene", "fail")
    assert gate.details["withheld"] == "report.md"
    assert published.candidates[tested].gates[0].reason == "[withheld: copied-text]"
    checks = ValidationReport.model_validate_json(
        publication.files["validation_report.json"]
    ).checks
    assert ("hygiene:copied-text", "decision.json") in {(c.id, c.file) for c in checks}
    assert scan_outputs(publication.files, [PRIVATE_CONTEXT]) == []


def _hygiene_checks(publication: Publication) -> list[tuple[str, str, str | None]]:
    files = publication.files
    checks = ValidationReport.model_validate_json(files[VALIDATION_REPORT_FILE]).checks
    return [(c.status, c.message, c.expected) for c in checks if c.id == "publication-hygiene"]


def test_publication_hygiene_check_records_the_allowed_kinds(real_run: Run) -> None:
    """The publication-hygiene check says what was scanned (pass) or, beside a failed scan's
    checks, which kinds the contract allows (info); ``expected`` records the allowed kinds."""
    decision, report = _real_models(real_run)
    kept = [c for c in report.checks if c.id != "publication-hygiene"]  # the run's own scan
    report = report.model_copy(update={"checks": kept})
    scanned = (
        "decision.json, validation_report.json, report.md, report.html and junit.xml were "
        "scanned: no credentials, host paths, e-mail addresses or copied evidence text"
    )
    clean = publish_outputs(decision, report)
    assert _hygiene_checks(clean) == [("pass", scanned, None)]
    allowed = frozenset({"phone-number", "ip-address"})
    clean = publish_outputs(decision, report, allowed_kinds=allowed)
    note = "allowed: ip-address,phone-number"
    expected = scanned + " (published as the contract allows: ip-address, phone-number)"
    assert _hygiene_checks(clean) == [("pass", expected, note)]
    leaky = decision.model_copy(update={"summary": f"{decision.summary} {HOME_PATH}"})
    failed = publish_outputs(leaky, report, allowed_kinds=allowed)
    info = "the contract allows these finding kinds to be published: ip-address, phone-number"
    assert _hygiene_checks(failed) == [("info", info, note)]
    assert _hygiene_checks(publish_outputs(leaky, report)) == []


def test_publish_error_record_keeps_its_class(real_run: Run) -> None:
    """An ERROR record naming a host path stays ERROR, redacted, with every output present."""
    decision, report = _real_models(real_run)
    error = ErrorRecord(
        type="InputError",
        code="input-missing",
        message=f"input directory {HOME_PATH} is missing",
        hint="",
        fault="user",
        exit_code=66,
    )
    decision = decision.model_copy(
        update={"run_class": DecisionClass.ERROR, "exit_code": 66, "error": error, "candidates": []}
    )
    publication = publish_outputs(decision, report)
    published = Decision.model_validate_json(publication.files["decision.json"])
    assert (published.run_class.value, published.exit_code) == ("ERROR", 66)
    assert published.error is not None and published.error.message == "[withheld: absolute-path]"
    assert published.run_gates[-1].id == "hard:publication-hygiene"
    assert set(publication.files) == set(OUTPUT_FILES) - {"manifest.json"}
    assert scan_outputs(publication.files) == []
    # The page and the JUnit file are rendered from the redacted record, not withheld.
    assert b"[withheld: absolute-path]" in publication.files["junit.xml"]
    assert b"[withheld: absolute-path]" in publication.files["report.html"]


def test_render_outputs_names_every_file_but_the_manifest(real_run: Run) -> None:
    """The rendered outputs are exactly the output files but the manifest, as the run wrote them."""
    decision, report = _real_models(real_run)
    rendered = render_outputs(decision, report)
    assert (*rendered, "manifest.json") == OUTPUT_FILES
    assert rendered[DECISION_FILE] == (real_run.output_dir / DECISION_FILE).read_bytes()


def test_output_inside_input_is_refused_before_anything_is_created(tmp_path) -> None:
    """An output directory inside the input is a usage error, and is not created."""
    inside = tmp_path / "in" / "out"
    (tmp_path / "in").mkdir()
    with pytest.raises(UsageError) as err:
        check_output_dir(inside, tmp_path / "in")
    assert err.value.code == "output-inside-input" and not inside.exists()
    assert is_inside(inside, tmp_path / "in") and not is_inside(tmp_path / "x", tmp_path / "in")
    check_output_dir(tmp_path / "out" / "deep", tmp_path / "in")
    assert (tmp_path / "out" / "deep").is_dir()


@pytest.mark.parametrize(
    "secret_path",
    [
        "evidence/ghp_" + "A1b2" * 9 + ".parquet",  # a token as a file name
        "evidence/alice.liddell@example.com/telemetry.parquet",  # an address as a directory
    ],
)
def test_a_secret_in_an_input_file_name_blocks_and_is_never_published(
    pristine_run: Run, tmp_path: Path, secret_path: str
) -> None:
    """Input paths reach manifest.json and the attestation's subjects: a name with a finding
    BLOCKs the run, is published as a placeholder only, and the directory still verifies."""
    input_dir = tmp_path / "in"
    shutil.copytree(pristine_run.input_dir, input_dir)
    target = input_dir / secret_path
    target.parent.mkdir(parents=True, exist_ok=True)
    (input_dir / "evidence" / "telemetry.parquet").rename(target)
    contract = input_dir / "contract.yaml"
    contract.write_text(contract.read_text().replace("evidence/telemetry.parquet", secret_path))
    out = tmp_path / "out"
    run_job(input_dir, out, on_stage=lambda event, **fields: None)
    decision = orjson.loads((out / "decision.json").read_bytes())
    assert decision["run_class"] == "BLOCK"
    secret = secret_path.split("/")[1].encode()
    for f in out.iterdir():
        if f.is_file():
            assert secret not in f.read_bytes(), f.name
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert any(d["path"].startswith(WITHHELD_INPUT_PREFIX) for d in manifest["inputs"])
    report = orjson.loads((out / "validation_report.json").read_bytes())
    assert any(
        c["id"].startswith("hygiene:") and "manifest.json:inputs[" in c["message"]
        for c in report["checks"]
    ), [c["id"] for c in report["checks"]]
    assert verify_output_dir(out).ok
    assert verify_output_dir(out, input_dir=input_dir).ok  # the withheld name matches by sha256


def test_the_foreign_file_walk_stops_at_the_first_and_reads_no_further(tmp_path, monkeypatch):
    """``run --output /`` listed the whole file system and died (exit 70) on an OSError under
    /proc: the walk stops at the first foreign entry (a symlink or FIFO is one, as for
    ``verify``), and a directory it cannot list is itself foreign, never an OSError."""
    import os

    from ragwarrant.audit.publish import first_foreign_file

    real = os.scandir
    unreadable = tmp_path / "z_unreadable"

    def scandir(path="."):
        if Path(path) == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    unreadable.mkdir()
    (tmp_path / ".ragwarrant.lock").write_text("")
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "old.json").write_text("{}")
    assert first_foreign_file(tmp_path) == "z_unreadable"
    (tmp_path / "b_link").symlink_to(tmp_path / "history")
    assert first_foreign_file(tmp_path) == "b_link"
    os.mkfifo(tmp_path / "a_fifo")
    assert first_foreign_file(tmp_path) == "a_fifo"
