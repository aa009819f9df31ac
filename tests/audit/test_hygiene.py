"""Tests of the publication-hygiene scan: one planted finding of each kind, and no false alarms."""

from __future__ import annotations

import orjson
import pytest

from ragwarrant.audit.hygiene import (
    Finding,
    files_to_withhold,
    findings_to_checks,
    scan_outputs,
    withhold,
)
from ragwarrant.gates.run import gate_publication_hygiene
from ragwarrant.outputs import Decision, ValidationCheck

from .conftest import Run

# Planted values are assembled at run time so that this file itself holds no credential-shaped
# literal that a repository secret scanner would flag.
AWS_KEY = "AKIA" + "Z7QX2M4NB6RT8WYE"
AWS_SECRET = "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
OPENAI = "sk-" + "proj-" + "Q8x7L2m9N4b6V1c3Z5k8J0h2"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = "-----BEGIN " + "PRIVATE KEY-----"
BEARER = "Authorization: Bearer " + "eyJhbGciOiJIUzI1NiJ9abcdef0123"
URL_PASSWORD = "postgres://svc:" + "Tr0ub4dor" + "@db.internal.example.com:5432/evals"
SECRET_ASSIGN = "password=" + "hunter2hunter2"
HOME_PATH = "/home/alice/evals/run.csv"
WIN_PATH = "C:\\Users\\bob\\evals\\run.csv"
TMP_PATH = "/tmp/pytest-of-ci/evidence.csv"
EMAIL = "alice.smith@example.org"

PLANTED = [
    ("aws-access-key", AWS_KEY),
    ("aws-access-key", AWS_SECRET),
    ("api-token", OPENAI),
    ("github-token", GITHUB),
    ("private-key", PEM),
    ("bearer-token", BEARER),
    ("password-in-url", URL_PASSWORD),
    ("secret-assignment", SECRET_ASSIGN),
    ("absolute-path", HOME_PATH),
    ("absolute-path", WIN_PATH),
    ("absolute-path", TMP_PATH),
    ("email-address", EMAIL),
]

PRIVATE_CONTEXT = (
    "The Riverside council approved a new budget on Tuesday, allocating four million dollars to "
    "repair the old stone bridge and expand the public library's evening hours for students."
)


def _decision_json(note: str) -> bytes:
    doc = {
        "run_id": "r1",
        "contract": {"id": "c", "path": "contract.yaml"},
        "candidates": [
            {
                "policy_id": "p",
                "gates": [{"id": "g", "reason": "fine"}, {"id": "h", "reason": note}],
            }
        ],
    }
    return orjson.dumps(doc)


def _kinds(findings: list[Finding]) -> set[str]:
    return {f.kind for f in findings}


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_planted_finding_in_json_is_located(kind: str, secret: str) -> None:
    """A planted value is found at its JSON field path with its kind, and never repeated."""
    findings = scan_outputs({"decision.json": _decision_json(f"see {secret} here")})
    assert kind in _kinds(findings)
    hit = next(f for f in findings if f.kind == kind)
    assert (hit.file, hit.field, hit.line) == (
        "decision.json",
        "candidates[0].gates[1].reason",
        None,
    )
    rendered = repr(findings) + orjson.dumps(findings_to_checks(findings)).decode()
    rendered += gate_publication_hygiene(findings).model_dump_json()
    assert secret not in rendered


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_planted_finding_in_markdown_is_located(kind: str, secret: str) -> None:
    """A planted value in report.md is found at its line."""
    report = f"# Decision\n\nAll good.\n\n| gate | reason |\n|---|---|\n| g | {secret} |\n".encode()
    findings = scan_outputs({"report.md": report})
    hit = next(f for f in findings if f.kind == kind)
    assert (hit.file, hit.field, hit.line) == ("report.md", None, 7)


def test_secret_named_member_and_config_difference() -> None:
    """A member named like a secret, or a config difference at such a path, is a finding."""
    doc = {
        "config_differences": [
            {"path": "llm.api_key", "baseline": "abc123def456", "candidate": "zzz999yyy888"},
            {"path": "llm.temperature", "baseline": 0.1, "candidate": 0.2},
        ],
        "details": {"client_secret": "s3cr3tvalue"},
        "refs": {"api_key": "${OPENAI_API_KEY}", "credentials": "default", "pass": "yes"},
    }
    findings = scan_outputs({"decision.json": orjson.dumps(doc)})
    assert [(f.kind, f.field) for f in findings] == [
        ("secret-assignment", "config_differences[0].baseline"),
        ("secret-assignment", "config_differences[0].candidate"),
        ("secret-assignment", "details.client_secret"),
    ]


def test_finding_in_a_member_name() -> None:
    """A secret used as a JSON member name is reported as such."""
    findings = scan_outputs({"decision.json": orjson.dumps({"details": {EMAIL: 1}})})
    assert [(f.kind, f.field, f.key_of) for f in findings] == [
        ("email-address", f'details["{EMAIL}"]', True)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "evidence/quality.csv and policies/gpt-4-0613.json",
        "mounted at /in and written to /out",
        "see https://example.com/home/user/docs and https://example.com/tmp/x",
        "data/tmp/file.csv ./home/x ../root/y",
        "sha256 1eb815eb69b438934f5bf53174cb24c4826753e4fb00564a0461ad4043a1d199",
        "policy model@2024-05.json and contract rag@v2",
        "run 20261129T213057Z-1eb815eb69b4; password: not set",
        "risk-averse sk-learn style ask-me-anything",
    ],
)
def test_no_false_alarm(text: str) -> None:
    """Relative paths, /in and /out, URLs, hashes and ids are not findings."""
    assert (
        scan_outputs({"decision.json": orjson.dumps({"summary": text}), "report.md": text.encode()})
        == []
    )


def test_copied_text_of_twelve_tokens_is_found() -> None:
    """Twelve consecutive private tokens are a copy, whatever the case and punctuation."""
    twelve = "approved a new budget on Tuesday allocating four million dollars to repair"
    assert len(twelve.split()) == 12
    shouted = twelve.upper().replace(" ", ", ")
    findings = scan_outputs(
        {"decision.json": _decision_json(f"note: {shouted}!"), "report.md": b"clean\n"},
        [PRIVATE_CONTEXT],
    )
    assert [(f.kind, f.field) for f in findings] == [
        ("copied-text", "candidates[0].gates[1].reason")
    ]


def test_eleven_tokens_are_not_a_copy() -> None:
    """Eleven consecutive private tokens stay below the threshold."""
    eleven = "approved a new budget on Tuesday allocating four million dollars to"
    assert scan_outputs({"decision.json": _decision_json(eleven)}, [PRIVATE_CONTEXT]) == []


def test_copy_across_markdown_lines_is_found() -> None:
    """A copy wrapped over several lines of report.md is found at the line it starts on."""
    report = (
        b"# Report\n"
        b"the old stone bridge and expand\n"
        b"the public library's evening hours\n"
        b"for students.\n"
    )
    findings = scan_outputs({"report.md": report}, iter([PRIVATE_CONTEXT]))
    assert [(f.kind, f.line) for f in findings] == [("copied-text", 2)]


def test_copy_scan_streams_many_texts() -> None:
    """Private texts are consumed once, as a stream; a copy of the last one is still found."""
    texts = (
        f"unrelated filler sentence number {i} about nothing in particular at all today"
        for i in range(5000)
    )

    def stream():
        yield from texts
        yield PRIVATE_CONTEXT

    findings = scan_outputs({"report.md": PRIVATE_CONTEXT.encode()}, stream())
    assert [f.kind for f in findings] == ["copied-text"]


def test_real_outputs_are_clean(real_run: Run) -> None:
    """The outputs of the shipped example carry no finding."""
    outputs = {p.name: p.read_bytes() for p in real_run.output_dir.iterdir()}
    assert scan_outputs(outputs) == []


def test_withhold_redacts_json_and_replaces_text(real_run: Run) -> None:
    """JSON outputs are redacted (and still validate); report.md is replaced by a notice."""
    names = ("decision.json", "validation_report.json", "report.md")
    outputs = {name: (real_run.output_dir / name).read_bytes() for name in names}
    decision = orjson.loads(outputs["decision.json"])
    decision["summary"] = f"contact {EMAIL} with key {OPENAI}"
    outputs["decision.json"] = orjson.dumps(decision)
    outputs["report.md"] += f"\nfrom {HOME_PATH}\n".encode()
    findings = scan_outputs(outputs)
    assert {(f.file, f.kind) for f in findings} == {
        ("decision.json", "email-address"),
        ("decision.json", "api-token"),
        ("report.md", "absolute-path"),
    }
    outcome = withhold(outputs, findings)
    assert outcome.withheld == ["report.md"] == files_to_withhold(findings)
    assert outcome.redacted == ["decision.json"]
    assert set(outcome.kept) == set(names)
    assert outcome.kept["validation_report.json"] == outputs["validation_report.json"]
    notice = outcome.kept["report.md"].decode()
    assert notice.startswith("# report.md withheld") and "absolute-path" in notice
    assert scan_outputs(outcome.kept) == []
    redacted = Decision.model_validate_json(outcome.kept["decision.json"])
    assert EMAIL not in redacted.summary and "[withheld: " in redacted.summary
    dropped = withhold(outputs, findings, notice=False)
    assert "report.md" not in dropped.kept


def test_withhold_can_limit_redaction() -> None:
    """A JSON file outside ``redact`` is withheld like any other file."""
    outputs = {"a.json": orjson.dumps({"x": EMAIL}), "b.json": orjson.dumps({"x": EMAIL})}
    findings = scan_outputs(outputs)
    outcome = withhold(outputs, findings, redact=("a.json",), notice=False)
    assert (outcome.redacted, outcome.withheld, sorted(outcome.kept)) == (
        ["a.json"],
        ["b.json"],
        ["a.json"],
    )


def test_checks_validate_as_output_models() -> None:
    """The hygiene checks fit the validation-report model."""
    findings = scan_outputs({"report.md": f"{EMAIL}\n".encode()})
    checks = [ValidationCheck.model_validate(c) for c in findings_to_checks(findings)]
    assert [(c.id, c.file, c.row) for c in checks] == [("hygiene:email-address", "report.md", 1)]
