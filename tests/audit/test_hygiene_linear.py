"""The hygiene patterns run in linear time on adversarial strings (issue 31).

A slice value, an example id or a reason can be any length, and every pattern runs on every
output string. A pattern with a quantified run that can start at every character (or nested
quantifiers over the same run) is quadratic: a 200 kB value cost about an hour. Each adversarial
shape is scanned at 10 kB and at 1 MB; linear time costs ~100x, quadratic ~10,000x, so the
generous limit of 1,000x cannot flake. The scan runs in a child process with a timeout, so a
quadratic pattern fails the test in minutes instead of hanging it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SHAPES = {
    "alphanumeric run (password-in-url scheme)": '"a" * n',
    "mixed-case run": '("aB3" * n)[:n]',
    "scheme then a long user": '"a://" + "b" * n',
    "scheme, user, colon, long password": '"a://b:" + "c" * n',
    "secret keyword then spaces": '"password" + " " * n',
    "aws keyword then spaces": '"aws_secret_access_key" + " " * n',
    "path segments after a glued v": '"/v" * (n // 2) + "+"',
    "path segments after a dotted v": '"/.v" * (n // 3) + "+"',
    "sk- then dashed groups": '"sk-" + "a-" * (n // 2)',
    "e-mail with dotted domain": '"x@" + "a." * (n // 2)',
    "colon-separated hex": '"1:" * (n // 2)',
    "PEM header words": '"-----BEGIN " + "A " * (n // 2)',
    "quoted attribute values and escaped tags": "'=&quot;/a&lt;/b#/c' * (n // 17)",
}

_SCRIPT = """
import time
from ragwarrant.audit.hygiene import redact_text

def cost(n):
    text = {expr}
    best = float("inf")
    for _ in range(3 if n < 100_000 else 1):
        t0 = time.perf_counter()
        redact_text(text)
        best = min(best, time.perf_counter() - t0)
    return best

small, large = cost(10_000), cost(1_000_000)
print(large / max(small, 1e-4))
"""


@pytest.mark.parametrize("expr", SHAPES.values(), ids=SHAPES.keys())
def test_a_one_megabyte_adversarial_string_scans_in_linear_time(expr: str) -> None:
    """1 MB costs at most 1,000x what 10 kB costs (linear: ~100x; quadratic: ~10,000x)."""
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(expr=expr)],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    ratio = float(done.stdout)
    assert ratio < 1_000
