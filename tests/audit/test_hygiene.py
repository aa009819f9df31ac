"""Tests of the publication-hygiene scan: one planted finding of each kind, and no false alarms."""

from __future__ import annotations

import orjson
import pytest

from ragwarrant.audit.hygiene import (
    Finding,
    files_to_withhold,
    findings_to_checks,
    redact_text,
    redacting_processor,
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
SRV_PATH = "/srv/ml-team/private/evals.csv"
OPT_PATH = "/opt/acme/keys/run.json"
DATA_PATH = "/data/customers/q3.parquet"
IPV4 = "10.20.30.40"
IPV6 = "2001:db8:85a3::8a2e:370:7334"
PHONE_INTL = "+44 20 7946 0958"
PHONE_US = "(415) 555-0132"
SSN = "123-45-6789"
NINO = "AB 12 34 56 C"

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
    ("absolute-path", SRV_PATH),
    ("absolute-path", OPT_PATH),
    ("absolute-path", DATA_PATH),
    ("ip-address", IPV4),
    ("ip-address", IPV6),
    ("phone-number", PHONE_INTL),
    ("phone-number", PHONE_US),
    ("national-id", SSN),
    ("national-id", NINO),
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
        "ragwarrant 0.1.0 on python 3.11.7, numpy 2.4.6, release 1.0.0.0 and v2.3.1.4",
        "finished 2026-11-29T21:30:57.123456Z at 05:48:10, on 2026/11/29",
        "estimate +0.01234, lower -1.234e-05, delta +12.5 (n=1200, 95 %)",
        "uuid 123e4567-e89b-12d3-a456-426614174000, run-123-456-7890, ex-123-45-6789",
        "module std::fmt and a::b, table |---:|---:|, judge + / lexical -, and/or 1/2",
        "served on 127.0.0.1 and 0.0.0.0 in the container, /in/contract.yaml, /out/report.md",
        "quality-only pick gpt-3.5-turbo-0613; llama-2-70b-chat",
        "sk-management-of-evaluation-runs and task-management-of-evaluation",
        "version 2.1 <a href=\"/docs/release/notes\">notes</a> and <img src='/img/logo.png'>",
        "escaped href=&#34;/docs/x&#34; href=&quot;/docs/y&quot; and a tag &lt;/b/c&gt; </b/c>",
        "dashboard https://ci.example.org/#/runs/42 and app.example.org/#/view/main",
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


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_token_glued_to_report_formatting_is_found(kind: str, secret: str) -> None:
    """report.md writes ``v<version>``: a token right after that ``v`` is still found."""
    line = f"- contract: `c` v{secret} (sha256 `0123456789abcdef…`)\n"
    findings = scan_outputs({"report.md": line.encode()})
    assert kind in _kinds(findings)


@pytest.mark.parametrize(
    "kind", ["absolute-path", "email-address", "ip-address", "phone-number", "national-id"]
)
def test_allowed_kind_is_not_reported(kind: str) -> None:
    """Each personal-data kind can be switched off alone; the others stay on."""
    planted = [secret for k, secret in PLANTED if k == kind][0]
    others = " ".join(secret for k, secret in PLANTED if k != kind)
    doc = {"decision.json": orjson.dumps({"a": planted, "b": others})}
    assert kind in _kinds(scan_outputs(doc))
    allowed = scan_outputs(doc, allowed_kinds=frozenset({kind}))
    assert kind not in {f.kind for f in allowed if f.field == "a"}
    assert _kinds(allowed) == _kinds(scan_outputs(doc)) - {kind} | (
        {kind} & {f.kind for f in allowed if f.field == "b"}
    )


def test_credentials_cannot_be_allowed() -> None:
    """Allowing a credential kind is refused."""
    with pytest.raises(ValueError, match="api-token"):
        scan_outputs({}, allowed_kinds=frozenset({"api-token"}))


def test_mounts_are_configurable() -> None:
    """A path under a given mount is not a finding; the same path is one by default."""
    doc = {"report.md": SRV_PATH.encode()}
    assert _kinds(scan_outputs(doc)) == {"absolute-path"}
    assert scan_outputs(doc, mounts=("/srv/ml-team",)) == []


def test_a_mount_under_a_private_root_is_named_but_its_neighbours_are_not() -> None:
    """The directory the user named (under /tmp or /home) is a mount; a sibling stays private."""
    mounts = ("/in", "/out", "/tmp/rw-in")
    assert redact_text("input directory /tmp/rw-in does not exist", mounts=mounts) == (
        "input directory /tmp/rw-in does not exist"
    )
    assert redact_text("read /tmp/rw-in/evidence/a.csv.", mounts=mounts).endswith("a.csv.")
    assert redact_text("read /tmp/rw-input/a.csv", mounts=mounts) == (
        "read [withheld: absolute-path]"
    )
    assert "/home/alice" not in redact_text("at /home/alice/x.csv", mounts=mounts)
    # outputs are published and verified elsewhere: there the same path is always a finding
    assert _kinds(scan_outputs({"report.md": b"read /tmp/rw-in/a.csv"}, mounts=mounts)) == {
        "absolute-path"
    }


@pytest.mark.parametrize("path", ["C:\\Users\\bob\\evals\\x.csv", "\\\\share\\bob\\a.csv"])
def test_a_windows_path_is_withheld_whole(path: str) -> None:
    """The user name after a drive or share is withheld too (it used to follow the marker)."""
    assert "bob" not in redact_text(f"cannot read {path} now")
    assert redact_text(f"cannot read {path} now").endswith(" now")


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_redact_text_removes_every_planted_value(kind: str, secret: str) -> None:
    """A log line or error message keeps its words but loses the value, named by kind."""
    text = f"contract x failed: value {secret!s} is not allowed"
    redacted = redact_text(text)
    assert secret not in redacted
    assert redacted.startswith("contract x failed: value ")
    assert "[withheld: " in redacted


def test_redact_text_replaces_private_strings_and_log_events() -> None:
    """Literal private strings are withheld; a structlog event is redacted value by value."""
    assert redact_text(
        "run of acme-secret-project done", private_texts=["acme-secret-project"]
    ) == ("run of [withheld: private-text] done")
    event = {"event": "inputs_read", "contract": f"id {GITHUB}", "api_key": "abc12345", "n": 3}
    out = redacting_processor()(None, "info", event)
    assert out == {
        "event": "inputs_read",
        "contract": "id [withheld: github-token]",
        "api_key": "[withheld: secret-assignment]",
        "n": 3,
    }


def test_ip_address_inside_a_dotted_member_name_is_found() -> None:
    """A policy id that is an IP address, joined into ``metric.missing.<policy>``, is found."""
    doc = {"missing": {f"correct.missing.{IPV4}": 0}}
    findings = scan_outputs({"decision.json": orjson.dumps(doc)})
    assert [(f.kind, f.key_of) for f in findings] == [("ip-address", True)]


def test_base64_signatures_and_payloads_are_not_paths():
    """Seeded random DSSE-like envelopes (base64 holding ``/``) give no absolute-path finding."""
    import base64

    import numpy as np

    rng = np.random.default_rng(20261201)
    for _ in range(3000):
        sig = base64.b64encode(rng.bytes(64)).decode()
        payload = base64.b64encode(rng.bytes(int(rng.integers(300, 600)))).decode()
        doc = {"payload": payload, "signatures": [{"keyid": "k", "sig": sig}]}
        found = scan_outputs({"decision.intoto.json": orjson.dumps(doc)})
        assert [f.kind for f in found] == []


def test_real_paths_are_still_found_beside_base64_rule():
    """Private paths outside the mounts are found, including ones with long plain segments."""
    for path in ("/srv/data/x.csv", "/opt/app/y", "/data/run-2026-11-29/ModelCheckpoint/x"):
        found = scan_outputs({"report.md": f"written to {path}\n".encode()})
        assert [f.kind for f in found] == ["absolute-path"]


def test_a_json_pointer_glued_to_a_file_name_is_not_a_path():
    """``contract.yaml#/statistics/alpha`` (a URI-fragment JSON pointer) is no finding; a host
    path after a bare ``#`` or under a private root after a file name's ``#`` still is."""
    for text in ("contract.yaml#/statistics/alpha", "contract.schema.json#/properties/id"):
        assert scan_outputs({"report.md": f"at {text}\n".encode()}) == []
    for text in (
        "see #/srv/data/x.csv",
        "x#/home/alice/secret.csv",
        'src="/home/alice/x.png"',
        '"/srv/data/x.csv"',
        "https://x.org/#/home/alice/x",
    ):
        found = scan_outputs({"report.md": f"{text}\n".encode()})
        assert [f.kind for f in found] == ["absolute-path"], text
