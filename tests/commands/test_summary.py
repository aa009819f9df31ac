"""``ragwarrant summary``: --json, whole reasons, and the next step last."""

from __future__ import annotations

import orjson
from tests.conftest import simulate

from ragwarrant import cli
from ragwarrant.digests import sha256_bytes


def _inconclusive_run(make_input, tmp_path):
    out = tmp_path / "out"
    root = make_input(data=simulate(60, quality_delta=-0.05))
    cli.main(["run", "--input", str(root), "--output", str(out)])
    return out


def test_summary_json(make_input, tmp_path, capsys) -> None:
    """--json prints the machine summary of the recorded run and exits with its code."""
    out = _inconclusive_run(make_input, tmp_path)
    recorded = orjson.loads((out / "decision.json").read_bytes())
    capsys.readouterr()
    assert cli.main(["summary", str(out), "--json"]) == recorded["exit_code"]
    doc = orjson.loads(capsys.readouterr().out)
    assert (doc["run_class"], doc["candidates"][0]["reason"]) == (
        recorded["run_class"],
        recorded["candidates"][0]["reasons"][0],
    )


def test_summary_shows_whole_reasons_and_ends_with_the_next_step(make_input, tmp_path, capsys):
    """The first reason is printed whole (no cut at 150 characters); the next step comes last."""
    out = _inconclusive_run(make_input, tmp_path)
    reason = orjson.loads((out / "decision.json").read_bytes())["candidates"][0]["reasons"][0]
    capsys.readouterr()
    cli.main(["summary", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert len(reason) > 150 and any(line.endswith(reason) for line in lines)
    assert lines[-1].startswith("  next: ")


def test_summary_refuses_a_directory_holding_a_planted_file(make_input, tmp_path, capsys):
    """A file the manifest does not list makes summary exit 65, as verify does (trial-int)."""
    out = _inconclusive_run(make_input, tmp_path)
    (out / "junk").write_text("x")
    capsys.readouterr()
    assert cli.main(["summary", str(out)]) == 65
    assert "junk is not in manifest.json" in capsys.readouterr().err


def test_summary_of_an_error_run_states_the_error_once(make_input, tmp_path, capsys) -> None:
    """An ERROR record's code and message are printed once, not again as an "error:" line."""
    out = tmp_path / "out"
    root = make_input(mutate=lambda c: c.update(statistics={"alpha": 0.7}))
    assert cli.main(["run", "--input", str(root), "--output", str(out)]) != 0
    error = orjson.loads((out / "decision.json").read_bytes())["error"]
    capsys.readouterr()
    cli.main(["summary", str(out)])
    printed = capsys.readouterr().out
    assert printed.count(f"{error['code']}: {error['message']}") == 1


def test_summary_names_the_first_invalid_field_of_a_decision(make_input, tmp_path, capsys):
    """A decision.json the manifest records but the schema refuses: exit 65, naming the field."""
    out = _inconclusive_run(make_input, tmp_path)
    old = (out / "decision.json").read_bytes()
    doc = orjson.loads(old)
    doc["candidates"][0]["policy_id"] = 7
    new = orjson.dumps(doc)
    (out / "decision.json").write_bytes(new)
    manifest = (out / "manifest.json").read_bytes()
    (out / "manifest.json").write_bytes(
        manifest.replace(sha256_bytes(old).encode(), sha256_bytes(new).encode())
    )
    capsys.readouterr()
    assert cli.main(["summary", str(out)]) == 65
    assert (
        "not a valid decision record: candidates.0.policy_id: Input should be a valid string"
        in (capsys.readouterr().err)
    )
