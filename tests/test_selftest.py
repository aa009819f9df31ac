"""The engine self-test passes on the real engine and fails on every planted mutation of it."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import textwrap
import threading

import orjson
import pytest

import ragwarrant.corroborators.checks as checks_module
import ragwarrant.decision as decision_module
import ragwarrant.gates.candidate as candidate_module
import ragwarrant.gates.hard as hard_module
import ragwarrant.gates.noninferiority as ni_module
from ragwarrant import cli, selftest
from ragwarrant.commands import selftest as selftest_command
from ragwarrant.errors import InternalError
from ragwarrant.outputs import GateStatus
from ragwarrant.stats.onesided import oriented_bootstrap
from tests.conftest import REPO

REQUIRED_CASES = {
    "reject-quality-loss",
    "reject-protected-slice-loss",
    "inconclusive-straddles-margin",
    "inconclusive-tie-at-margin",
    "inconclusive-all-tied",
    "block-constant-quality-signal",
    "block-duplicated-rows",
    "block-split-leakage",
    "promote-better-and-cheaper",
    "fabricated-citation",
    "faithful-answer-irrelevant-context",
    "honest-refusal",
    "unreliable-judge-caps-promote",
}


def failed_cases() -> set[str]:
    return {c.name for c in selftest.run_selftest().failed}


def mutate_source(func, old: str, new: str):
    """Return ``func`` recompiled from its source with ``old`` replaced by ``new`` (once)."""
    src = textwrap.dedent(inspect.getsource(func))
    assert src.count(old) == 1, f"mutation anchor {old!r} not found once in {func.__name__}"
    namespace = dict(func.__globals__)
    exec(compile(src.replace(old, new), inspect.getsourcefile(func), "exec"), namespace)  # noqa: S102
    return namespace[func.__name__]


def test_selftest_passes_on_the_engine():
    """Every planted case passes, each checks several legs, and the required cases are all there."""
    report = selftest.run_selftest()
    assert report.passed, report.failed
    assert {c.name for c in report.cases} >= REQUIRED_CASES
    assert all(c.legs >= 7 for c in report.cases)
    assert {c.expected_class for c in report.cases} >= {
        "PROMOTE",
        "REJECT",
        "INCONCLUSIVE",
        "BLOCK",
        "unsupported",
    }


def test_flipped_noninferiority_pass_comparison_fails_selftest(monkeypatch):
    """Mutant: the noninferiority pass rule (the stats test rejects H0) negated."""
    mutant = mutate_source(
        ni_module.gate_noninferiority, "if test.rejects:", "if not test.rejects:"
    )
    monkeypatch.setattr(candidate_module, "gate_noninferiority", mutant)
    assert {"promote-better-and-cheaper", "reject-quality-loss"} <= failed_cases()


def test_flipped_noninferiority_loss_comparison_fails_selftest(monkeypatch):
    """Mutant: the confirmed-loss rule 'ucb < -margin' flipped to 'ucb > -margin'."""
    mutant = mutate_source(
        ni_module.gate_noninferiority, "elif ucb < threshold:", "elif ucb > threshold:"
    )
    monkeypatch.setattr(candidate_module, "gate_noninferiority", mutant)
    assert {"reject-quality-loss", "reject-protected-slice-loss"} <= failed_cases()


def test_first_landing_percentile_rule_fails_selftest(monkeypatch):
    """Mutant: the first landing's rule (percentile bootstrap, pass on LCB >= -margin)."""

    def percentile(candidate, baseline, *, margin_abs, alpha, rng, resamples, power, **kw):
        sign = 1 if kw["higher_is_better"] else -1
        [boot] = oriented_bootstrap(
            candidate[:, None], baseline[:, None], ["mean"], [sign], None, resamples, rng
        )
        return boot.percentile_test(-margin_abs, alpha, power=power, inclusive=True)

    monkeypatch.setattr(candidate_module, "test_noninferiority", percentile)
    assert {"inconclusive-tie-at-margin", "inconclusive-all-tied"} <= failed_cases()


def test_dropped_duplicate_gate_fails_selftest(monkeypatch):
    """Mutant: the duplicate-rows gate is dropped (replaced by one that always passes)."""
    monkeypatch.setattr(
        hard_module,
        "gate_duplicates",
        lambda index, policies: hard_module.hard_gate("duplicate-rows", True, "mutant"),
    )
    assert failed_cases() == {"block-duplicated-rows"}


def test_gate_removed_from_evaluate_candidate_fails_selftest(monkeypatch):
    """Mutant: evaluate_candidate loses its claim gates."""
    real = candidate_module.evaluate_candidate

    def dropped(*args, **kwargs):
        ev = real(*args, **kwargs)
        return dataclasses.replace(ev, gates=[g for g in ev.gates if g.kind != "claim"])

    monkeypatch.setattr(candidate_module, "evaluate_candidate", dropped)
    assert {"reject-quality-loss", "promote-better-and-cheaper"} <= failed_cases()


def test_ignored_protected_slices_fail_selftest(monkeypatch):
    """Mutant: protected slices are ignored (only the aggregate is tested)."""
    real = candidate_module.evaluate_candidate

    def no_slices(index, contract, *args, **kwargs):
        return real(index, contract.model_copy(update={"protected_slices": []}), *args, **kwargs)

    monkeypatch.setattr(candidate_module, "evaluate_candidate", no_slices)
    assert "reject-protected-slice-loss" in failed_cases()


def test_engine_that_blocks_everything_fails_selftest(monkeypatch):
    """Mutant: a hard gate that always fails; the PROMOTE case guards against it."""
    monkeypatch.setattr(
        hard_module,
        "gate_provenance",
        lambda index, missing: hard_module.hard_gate("provenance", False, "mutant"),
    )
    assert "promote-better-and-cheaper" in failed_cases()


def test_citation_check_that_trusts_every_quote_fails_selftest(monkeypatch):
    """Mutant: every cited quote counts as verified."""
    monkeypatch.setattr(
        checks_module,
        "verify_citation",
        lambda quote, contexts: checks_module.CitationCheck(True, 0, 1),
    )
    assert "fabricated-citation" in failed_cases()


def test_refusal_detector_removed_fails_selftest(monkeypatch):
    """Mutant: honest refusals are scored as claims (and flagged as hallucinations)."""
    monkeypatch.setattr(checks_module, "is_honest_refusal", lambda response: False)
    assert "honest-refusal" in failed_cases()


def test_context_relevance_ignored_fails_selftest(monkeypatch):
    """Mutant: context relevance always 1.0 (the retrieval leg can never fail)."""
    monkeypatch.setattr(checks_module, "context_relevance", lambda question, context: 1.0)
    assert "faithful-answer-irrelevant-context" in failed_cases()


def test_decision_ignoring_corroboration_fails_selftest(monkeypatch):
    """Mutant: classify_candidate ignores failed corroboration gates."""
    real = decision_module.classify_candidate
    monkeypatch.setattr(
        decision_module,
        "classify_candidate",
        lambda ev, c, extra: real(ev, c, [g for g in extra if g.kind != "corroboration"]),
    )
    assert failed_cases() == {"unreliable-judge-caps-promote"}


def test_require_selftest_raises_internal_error(monkeypatch):
    """A failed self-test raises InternalError selftest-failed naming the case."""
    monkeypatch.setattr(checks_module, "is_honest_refusal", lambda response: False)
    with pytest.raises(InternalError) as exc:
        selftest.require_passed(selftest.run_selftest())
    assert exc.value.code == "selftest-failed" and "honest-refusal" in exc.value.message
    assert int(exc.value.exit_code) == 70


def selftest_cli(argv: list[str]) -> int:
    """The `selftest` subcommand through argparse, as cli registers it (commands/selftest.py)."""
    parser = argparse.ArgumentParser(prog="ragwarrant")
    selftest_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_selftest_command(capsys, monkeypatch):
    """`ragwarrant selftest` prints every case and its time; exit 0, or 70 with the mutant."""
    assert selftest_cli(["selftest"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in REQUIRED_CASES)
    assert "self-test passed" in out and " s" in out.splitlines()[-1]
    monkeypatch.setattr(checks_module, "is_honest_refusal", lambda response: False)
    assert selftest_cli(["selftest"]) == 70
    out = capsys.readouterr().out
    assert "FAIL  honest-refusal" in out and "self-test FAILED" in out


def test_run_exits_70_with_error_record_when_selftest_fails(make_input, tmp_path, monkeypatch):
    """`run` with a broken engine decides nothing: exit 70, class ERROR, code selftest-failed."""
    import jsonschema

    mutant = mutate_source(
        ni_module.gate_noninferiority, "if test.rejects:", "if not test.rejects:"
    )
    monkeypatch.setattr(candidate_module, "gate_noninferiority", mutant)
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(make_input()), "--output", str(out)]) == 70
    d = orjson.loads((out / "decision.json").read_bytes())
    assert d["run_class"] == "ERROR" and d["exit_code"] == 70
    assert d["error"]["code"] == "selftest-failed" and d["error"]["fault"] == "internal"
    assert d["candidates"] == []
    schema = json.loads((REPO / "contracts" / "decision.schema.json").read_text())
    jsonschema.validate(d, schema)
    assert (out / "manifest.json").exists()


def test_a_failed_selftest_outranks_an_input_error(tmp_path, monkeypatch):
    """The self-test runs beside reading; a broken engine still exits 70 on unreadable inputs."""
    mutant = mutate_source(
        ni_module.gate_noninferiority, "if test.rejects:", "if not test.rejects:"
    )
    monkeypatch.setattr(candidate_module, "gate_noninferiority", mutant)
    missing = tmp_path / "no-such-input"
    assert cli.main(["run", "--input", str(missing), "--output", str(tmp_path / "out")]) == 70


def test_run_records_the_selftest(make_input, tmp_path):
    """A normal run records the passed self-test in validation_report.json."""
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(make_input()), "--output", str(out)]) == 0
    report = orjson.loads((out / "validation_report.json").read_bytes())
    check = next(c for c in report["checks"] if c["id"] == "engine-selftest")
    assert check["status"] == "pass" and "planted cases passed" in check["message"]


def test_selftest_cases_exercise_every_gate_status():
    """The planted engine cases see pass, fail, inconclusive and not-applicable gates."""
    seen = set(selftest.HARD_GATES.values())
    for case in selftest.ENGINE_CASES:
        seen |= set(case.gates.values())
    assert seen == {s.value for s in GateStatus}


@pytest.mark.parametrize(
    ("gate", "case"),
    [
        ("gate_constant_signal", "block-constant-quality-signal"),
        ("gate_duplicates", "block-duplicated-rows"),
        ("gate_value_range", "block-value-out-of-scale"),
        ("gate_leakage", "block-split-leakage"),
    ],
)
def test_a_hard_gate_that_never_fails_fails_its_case(monkeypatch, gate, case):
    """Mutant: one hard gate reports pass whatever it found; the case planted for it fails."""
    real = getattr(hard_module, gate)
    monkeypatch.setattr(
        hard_module,
        gate,
        lambda *a, **kw: real(*a, **kw).model_copy(update={"status": GateStatus.PASS}),
    )
    assert case in failed_cases()


def test_ignored_human_labels_fail_selftest(monkeypatch):
    """Mutant: evaluate_candidate ignores human labels (the judge's scores alone decide)."""
    real = candidate_module.evaluate_candidate

    def no_labels(*args, **kwargs):
        return real(*args, **{**kwargs, "labels": None})

    monkeypatch.setattr(candidate_module, "evaluate_candidate", no_labels)
    assert failed_cases() == {"reject-judge-bias-on-labels"}


def test_a_new_hard_gate_stops_the_selftest_until_listed(monkeypatch):
    """docs/architecture.md 'Add a hard gate': a hard gate missing from HARD_GATES fails every
    engine case; listing it there passes them again."""
    real = candidate_module.evaluate_candidate

    def with_new_gate(*args, **kwargs):
        ev = real(*args, **kwargs)
        new = hard_module.hard_gate("new-check", True, "planted")
        return dataclasses.replace(ev, gates=[*ev.gates, new])

    monkeypatch.setattr(candidate_module, "evaluate_candidate", with_new_gate)
    assert failed_cases() == {case.name for case in selftest.ENGINE_CASES}
    monkeypatch.setitem(selftest.HARD_GATES, "hard:new-check", "pass")
    assert failed_cases() == set()


# The self-test beside the job: a forked child, this process when fork is not available


def _report_naming_its_process() -> selftest.SelftestReport:
    """A passed report whose one case is named after the process that ran it."""
    case = selftest.CaseResult(f"pid-{os.getpid()}", "PROMOTE", "PROMOTE", 1, (), 0.0)
    return selftest.SelftestReport((case,), 0.0)


def test_the_forked_selftest_reports_from_a_child_process(monkeypatch):
    """Forked, the cases run in another process and its report comes back through the pipe."""
    monkeypatch.setattr(selftest, "run_selftest", _report_naming_its_process)
    with selftest.SelftestRun(fork=True) as run:
        assert run.forked
        report = run.result()
    assert report.passed and report.cases[0].name != f"pid-{os.getpid()}"


def test_a_forked_selftest_failure_raises_what_the_in_process_one_raises(monkeypatch):
    """A mutant engine fails the forked self-test with the in-process error, code and message."""
    monkeypatch.setattr(checks_module, "is_honest_refusal", lambda response: False)
    with pytest.raises(InternalError) as in_process:
        selftest.require_passed(selftest.run_selftest())
    with selftest.SelftestRun(fork=True) as run:
        assert run.forked
        failure = run.exception()
    assert isinstance(failure, InternalError)
    assert (failure.code, failure.message, failure.hint) == (
        in_process.value.code,
        in_process.value.message,
        in_process.value.hint,
    )
    with pytest.raises(InternalError, match="honest-refusal"):
        run.result()


def test_a_child_that_sends_no_report_is_replaced_by_an_in_process_selftest(monkeypatch):
    """A child that dies without a report: the self-test runs again here, and reports from here."""
    parent = os.getpid()

    def dies_in_the_child() -> selftest.SelftestReport:
        if os.getpid() != parent:
            os._exit(3)
        return _report_naming_its_process()

    monkeypatch.setattr(selftest, "run_selftest", dies_in_the_child)
    with selftest.SelftestRun(fork=True) as run:
        assert run.forked and run.result().cases[0].name == f"pid-{parent}"


def test_without_fork_the_selftest_runs_in_this_process(monkeypatch):
    """No ``os.fork`` (or a refused one): the cases run in this process, the failure is the same."""
    monkeypatch.setattr(selftest, "run_selftest", _report_naming_its_process)
    monkeypatch.delattr(os, "fork")
    assert not selftest.can_fork()
    with selftest.SelftestRun() as run:
        assert not run.forked and run.result().cases[0].name == f"pid-{os.getpid()}"


def test_a_refused_fork_falls_back_to_this_process(monkeypatch):
    """``fork`` raising OSError (a process limit) leaves the self-test in this process."""

    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(selftest, "run_selftest", _report_naming_its_process)
    monkeypatch.setattr(os, "fork", refused)
    with selftest.SelftestRun(fork=True) as run:
        assert not run.forked and run.result().cases[0].name == f"pid-{os.getpid()}"


def test_no_fork_while_another_thread_runs():
    """A process with a second thread running does not fork (its locks could stay held)."""
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not selftest.can_fork()
    finally:
        release.set()
        other.join()


@pytest.mark.parametrize("forked", [True, False])
def test_run_records_the_same_selftest_failure_forked_or_not(
    forked, make_input, tmp_path, monkeypatch
):
    """`run` with a broken engine: exit 70 and the same error record, child process or not."""
    monkeypatch.setattr(selftest, "can_fork", lambda: forked)
    spawned = []
    real_fork = selftest.SelftestRun._fork
    monkeypatch.setattr(
        selftest.SelftestRun, "_fork", lambda self: (spawned.append(1), real_fork(self))[1]
    )
    monkeypatch.setattr(checks_module, "is_honest_refusal", lambda response: False)
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(make_input()), "--output", str(out)]) == 70
    assert spawned == ([1] if forked else [])
    error = orjson.loads((out / "decision.json").read_bytes())["error"]
    with pytest.raises(InternalError) as in_process:
        selftest.require_passed(selftest.run_selftest())
    assert error["code"] == "selftest-failed" and error["fault"] == "internal"
    assert error["message"] == in_process.value.message
