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
