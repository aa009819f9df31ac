"""The shared fixtures keep tests independent of their order."""

from __future__ import annotations

import pytest

PAIR = """
import io

import structlog

from ragwarrant.logging import configure_logging


def test_a_configures_logging_on_a_stream_that_then_closes():
    stream = io.StringIO()
    configure_logging(json=True, stream=stream)
    structlog.get_logger("ragwarrant").info("first")
    stream.close()


def test_b_logs_without_configuring():
    structlog.get_logger("ragwarrant").info("second")
"""


def test_logging_configured_by_one_test_does_not_reach_the_next(
    pytester: pytest.Pytester,
) -> None:
    """A test that logs after one that bound structlog to a closed stream still passes."""
    pytester.makeconftest('pytest_plugins = ("tests.conftest",)\n')
    pytester.makepyfile(test_order=PAIR)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_every_slow_entry_names_a_test_file_or_folder() -> None:
    """A renamed slow file would silently rejoin ``make test-quick``: every entry must exist."""
    from tests.conftest import REPO, SLOW_TEST_FILES

    missing = sorted(p for p in SLOW_TEST_FILES if not (REPO / p).exists())
    assert missing == []


def test_slow_files_are_marked_and_others_are_not() -> None:
    """``pytest -m 'not slow'`` collects no test from a slow file and keeps the unit tests."""
    import subprocess
    import sys

    from tests.conftest import REPO

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "--collect-only", "-q", "-m", "not slow",
         "tests/test_fuzz.py", "tests/test_decision.py", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=str(REPO), timeout=300,
    )  # fmt: skip
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected and all(line.startswith("tests/test_decision.py") for line in collected)
