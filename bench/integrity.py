"""Benchmark: do a run's outputs survive kills, retries, forgers and leaks? Prints counts.

Four parts, each on copies of ``examples/corroboration-demo`` (evidence with question, response
and context text) in a temporary directory:

1. **flips** — every single-byte flip (XOR 0x01) of ``decision.intoto.json`` and
   ``manifest.json`` (the files no manifest digest covers), and ``--sample`` random positions of
   every other output (``--all-bytes``: every byte of every file), each checked by
   ``verify_output_dir`` with the input directory (inputs hashed; no replay: a replay only adds
   detections). Counts flips that still verify.
2. **attestation edits** — every single-field edit of the Statement (each leaf changed, each
   member deleted, each list shortened, a member added), written back in canonical form.
   Counts edits that still verify.
3. **secrets** — ``SECRETS`` (23 kinds) x ``PLACES`` (17 places a user can put a value: contract
   fields, policy configs, evidence cells and headers, slice, metric and policy names, example
   ids, the names of input files and directories, ...; a value holding a path separator cannot
   be one file or directory name and is skipped there): one run each, in-process through
   ``cli.main`` with stdout and stderr captured at the file-descriptor level and a ledger; a
   leak is the raw value (or its JSON-escaped form) in any output file, the ledger, stdout or
   stderr.
4. **kills** — ``ragwarrant run`` in a subprocess, SIGKILLed (a) at each of its first N
   file-system write calls (``os.write``, ``fsync``, ``replace``, ``rename``, ``unlink``,
   ``mkdir``, ``rmdir``, ``symlink``, ``ftruncate``; the child counts them), and (b) at
   ``--kills`` random times during the output phase (after the ``gates_evaluated`` event);
   each kill is followed by a retry into the same output directory and ledger, then
   ``verify``. Counts: directories that do not verify after the retry, retries whose exit
   code differs from an unkilled run's, leftover temp/staging files, manifests present but
   unverifiable right after the kill, ledgers broken after the retry. (c) ``--torn`` times, a
   completed run's ledger entry is cut at a random byte (a torn last line), then a run: its
   exit code must be the unkilled run's and the ledger must verify.

The committed run is the output directory itself or, when the writer keeps per-run
subdirectories, the one its ``latest`` pointer (symlink, or file holding a name) designates.

Usage: ``python bench/integrity.py [--quick] [--all-bytes] [--sample N] [--kills N]
[--seed S] [--parts flips,edits,secrets,kills]``. ``--quick`` is the smoke test's size.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import yaml

from ragwarrant.audit.ledger import verify_chain
from ragwarrant.audit.verify import verify_output_dir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "corroboration-demo"
ATTESTATION = "decision.intoto.json"


# ---------------------------------------------------------------------------------------------
# Running the job.


@contextlib.contextmanager
def _captured(stdout: Path, stderr: Path) -> Iterator[None]:
    """Redirect file descriptors 1 and 2 (so every writer, structlog included, is captured)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with stdout.open("wb") as out, stderr.open("wb") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def run_in_process(argv: list[str], work: Path) -> tuple[int, bytes, bytes]:
    """Run ``ragwarrant <argv>`` in this process; return (exit code, stdout, stderr)."""
    from ragwarrant.cli import main

    out, err = work / "stdout.bin", work / "stderr.bin"
    with _captured(out, err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return code, out.read_bytes(), err.read_bytes()


def committed_dir(output_dir: Path) -> Path:
    """The directory holding the committed run (see the module docstring)."""
    latest = output_dir / "latest"
    if latest.is_symlink() or latest.is_dir():
        return latest.resolve()
    if latest.is_file():
        return output_dir / latest.read_text().strip()
    return output_dir


def _copy_example(work: Path) -> Path:
    input_dir = work / "in"
    shutil.copytree(EXAMPLE, input_dir)
    return input_dir


# ---------------------------------------------------------------------------------------------
# 1. Byte flips.


def _flip_positions(name: str, size: int, args: argparse.Namespace, rng: Any) -> list[int]:
    if args.all_bytes or name in ("manifest.json", ATTESTATION):
        positions = list(range(size))
        if args.quick:
            positions = sorted(rng.choice(size, min(size, args.sample), replace=False).tolist())
        return positions
    return sorted(rng.choice(size, min(size, args.sample), replace=False).tolist())


def bench_flips(work: Path, args: argparse.Namespace, rng: Any) -> list[tuple[str, int, int]]:
    """Rows (file, flips, flips that still verify)."""
    input_dir = _copy_example(work)
    out = work / "out"
    run_in_process(["run", "--input", str(input_dir), "--output", str(out)], work)
    target = committed_dir(out)
    assert verify_output_dir(target, input_dir=input_dir).ok, "the untouched run must verify"
    rows = []
    for path in sorted(p for p in target.iterdir() if p.is_file()):
        original = path.read_bytes()
        missed = 0
        positions = _flip_positions(path.name, len(original), args, rng)
        for pos in positions:
            flipped = bytearray(original)
            flipped[pos] ^= 0x01
            path.write_bytes(bytes(flipped))
            if verify_output_dir(target, input_dir=input_dir).ok:
                missed += 1
        path.write_bytes(original)
        rows.append((path.name, len(positions), missed))
    return rows


# ---------------------------------------------------------------------------------------------
# 2. Attestation edits.


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return (value[:-1] + ("x" if not value.endswith("x") else "y")) if value else "x"
    return "x"


def _edits(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, Callable[[Any], None]]]:
    """(label, edit function) for every single-field edit of a JSON document."""

    def at(doc: Any) -> Any:
        for part in path:
            doc = doc[part]
        return doc

    label = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "(root)"
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _edits(value, (*path, key))
            yield f"{label}.{key} deleted", lambda d, k=key: at(d).pop(k)
        yield f"{label}.extra added", lambda d: at(d).__setitem__("extra", "x")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _edits(value, (*path, i))
        if node:
            yield f"{label} last item dropped", lambda d: at(d).pop()
            yield f"{label} last item repeated", lambda d: at(d).append(at(d)[-1])
    else:

        def edit(doc: Any) -> None:
            parent = doc
            for part in path[:-1]:
                parent = parent[part]
            parent[path[-1]] = _changed(parent[path[-1]])

        yield f"{label} changed", edit


def bench_attestation_edits(work: Path) -> tuple[int, list[str]]:
    """Return (edits tried, labels of edits that still verify)."""
    input_dir = _copy_example(work)
    out = work / "out"
    run_in_process(["run", "--input", str(input_dir), "--output", str(out)], work)
    target = committed_dir(out)
    path = target / ATTESTATION
    original = path.read_bytes()
    passing = []
    edits = list(_edits(orjson.loads(original)))
    for label, edit in edits:
        doc = orjson.loads(original)
        edit(doc)
        path.write_bytes(
            orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
        if verify_output_dir(target).ok:
            passing.append(label)
    path.write_bytes(original)
    return len(edits), passing


# ---------------------------------------------------------------------------------------------
# 3. Secrets x places. Values are assembled at run time (no credential-shaped literal in the
# repository for a secret scanner to flag).

SECRETS: dict[str, str] = {
    "aws-access-key": "AKIA" + "Z7QX2M4NB6RT8WYE",
    "aws-secret-assignment": "aws_secret_access_key=" + "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY1",
    "openai-key": "sk-" + "proj-" + "Q8x7L2m9N4b6V1c3Z5k8J0h2",
    "stripe-key": "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "google-key": "AIza" + "SyD3x9Lm2Qw8Er5Ty7Ui0Op4As6Df1Gh2Jk",
    "slack-token": "xox" + "b-2048-1024-Zq8x7L2m9N4b",
    "github-token": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "pem-private-key": "-----BEGIN " + "PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0B",
    "bearer-token": "Bearer " + "eyJhbGciOiJIUzI1NiJ9abcdef0123",
    "password-in-url": "postgres://svc:" + "Tr0ub4dor" + "@db.internal.example.com:5432/evals",
    "password-assignment": "password=" + "hunter2hunter2",
    "home-path": "/home/alice/evals/run.csv",
    "windows-path": "C:\\Users\\bob\\evals\\run.csv",
    "srv-path": "/srv/ml-team/private/evals.csv",
    "opt-path": "/opt/acme/keys/run.json",
    "email": "alice.smith@example.org",
    "ipv4": "10.20.30.40",
    "ipv6": "2001:db8:85a3::8a2e:370:7334",
    "phone-intl": "+44 20 7946 0958",
    "phone-us": "(415) 555-0132",
    "us-ssn": "123-45-6789",
    "uk-nino": "AB 12 34 56 C",
}


def _edit_contract(input_dir: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = input_dir / "contract.yaml"
    doc = yaml.safe_load(path.read_text())
    edit(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


def _edit_csv(input_dir: Path, edit: Callable[[list[dict[str, str]]], None]) -> None:
    import csv

    path = input_dir / "evidence" / "results.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    edit(rows)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _edit_config(input_dir: Path, key: str, value: str) -> None:
    path = input_dir / "policies" / "candidate-small.json"
    doc = orjson.loads(path.read_bytes())
    doc[key] = value
    path.write_bytes(orjson.dumps(doc))


def _set_column(rows: list[dict[str, str]], column: str, value: str, where: str) -> None:
    for row in rows:
        if row["example_id"] == where:
            row[column] = value


def _rename_metric(doc: dict[str, Any], secret: str) -> None:
    doc["evidence"][0]["metrics"][secret] = doc["evidence"][0]["metrics"].pop("cost_usd")
    doc["operational_metrics"][0]["id"] = secret
    doc["claims"]["items"][0]["metric"] = secret


def _rename_policy(input_dir: Path, secret: str) -> None:
    _edit_contract(input_dir, lambda d: d["candidates"][0].__setitem__("policy_id", secret))
    _edit_csv(
        input_dir,
        lambda rows: [
            r.__setitem__("policy", secret) for r in rows if r["policy"] == "candidate-small"
        ],
    )


def _add_header(rows: list[dict[str, str]], secret: str) -> None:
    for row in rows:
        row[secret] = "1"


class NotANameError(Exception):
    """The secret cannot be a file or directory name (it holds a path separator)."""


def _move_evidence(input_dir: Path, new_rel: str) -> None:
    """Move evidence/results.csv to ``new_rel`` (relative) and point the contract at it."""
    (input_dir / new_rel).parent.mkdir(parents=True, exist_ok=True)
    (input_dir / "evidence" / "results.csv").rename(input_dir / new_rel)
    _edit_contract(input_dir, lambda c: c["evidence"][0].__setitem__("path", new_rel))


def _as_name(secret: str) -> str:
    if "/" in secret or "\\" in secret or secret.startswith("-"):
        raise NotANameError(secret)
    return secret


PLACES: dict[str, Callable[[Path, str], None]] = {
    "evidence file name": lambda d, s: _move_evidence(d, f"evidence/{_as_name(s)}.csv"),
    "evidence directory name": lambda d, s: _move_evidence(d, f"evidence/{_as_name(s)}/r.csv"),
    "contract.id": lambda d, s: _edit_contract(d, lambda c: c.__setitem__("id", s)),
    "contract.version": lambda d, s: _edit_contract(d, lambda c: c.__setitem__("version", s)),
    "contract.description": lambda d, s: _edit_contract(
        d, lambda c: c.__setitem__("description", f"Owner note: {s}")
    ),
    "evidence source id": lambda d, s: _edit_contract(
        d, lambda c: c["evidence"][0].__setitem__("id", s)
    ),
    "evaluator name": lambda d, s: _edit_contract(
        d, lambda c: c["evidence"][0].__setitem__("evaluator", s)
    ),
    "policy config value": lambda d, s: _edit_config(d, "notes", f"deployed by {s}"),
    "policy config secret-named key": lambda d, s: _edit_config(d, "api_key", s),
    "policy id": _rename_policy,
    "metric name": lambda d, s: _edit_contract(d, lambda c: _rename_metric(c, s)),
    "evidence header": lambda d, s: _edit_csv(d, lambda rows: _add_header(rows, s)),
    "evidence cell: question": lambda d, s: _edit_csv(
        d, lambda rows: _set_column(rows, "question", f"Ask {s} about it?", "prod-01")
    ),
    "evidence cell: response": lambda d, s: _edit_csv(
        d, lambda rows: _set_column(rows, "response", f"Call {s}.", "prod-01")
    ),
    "evidence cell: context": lambda d, s: _edit_csv(
        d,
        lambda rows: _set_column(rows, "contexts", orjson.dumps([f"See {s}"]).decode(), "prod-01"),
    ),
    "slice name": lambda d, s: _edit_csv(d, lambda rows: _set_column(rows, "topic", s, "prod-01")),
    "example id": lambda d, s: _edit_csv(
        d, lambda rows: _set_column(rows, "example_id", s, "prod-01")
    ),
}


def _forms(secret: str) -> list[bytes]:
    """The raw value and its JSON-escaped form (a Windows path's backslashes are doubled)."""
    raw = secret.encode()
    escaped = orjson.dumps(secret)[1:-1]
    return [raw] if escaped == raw else [raw, escaped]


def _leaks(secret: str, blobs: dict[str, bytes]) -> list[str]:
    return sorted(name for name, data in blobs.items() if any(f in data for f in _forms(secret)))


def bench_secrets(
    work: Path, kinds: list[str], places: list[str]
) -> tuple[int, dict[str, dict[str, list[str]]], dict[str, int]]:
    """Return (cases, {kind: {place: [where it leaked]}}, exit-code histogram)."""
    leaks: dict[str, dict[str, list[str]]] = {}
    codes: dict[str, int] = {}
    cases = 0
    for kind in kinds:
        for place in places:
            case = work / f"case-{cases}"
            case.mkdir()
            input_dir = _copy_example(case)
            try:
                PLACES[place](input_dir, SECRETS[kind])
            except NotANameError:  # a path or PEM header cannot be one file or directory name
                shutil.rmtree(case)
                continue
            out, ledger = case / "out", case / "ledger.jsonl"
            argv = ["run", "--input", str(input_dir), "--output", str(out), "--ledger", str(ledger)]
            code, stdout, stderr = run_in_process(argv, case)
            codes[str(code)] = codes.get(str(code), 0) + 1
            blobs = {"stdout": stdout, "stderr": stderr}
            if ledger.is_file():
                blobs["ledger"] = ledger.read_bytes()
            for path in sorted(out.rglob("*")) if out.is_dir() else []:
                if path.is_file():
                    blobs[str(path.relative_to(out))] = path.read_bytes()
            where = _leaks(SECRETS[kind], blobs)
            if where:
                leaks.setdefault(kind, {})[place] = where
            cases += 1
            shutil.rmtree(case)
    return cases, leaks, codes


# ---------------------------------------------------------------------------------------------
# 4. Kill and retry.

_CHILD = r"""
import atexit, os, signal, sys
kill_at = int(os.environ.get("RW_KILL_AT", "0"))
count = [0]
def wrap(f):
    def g(*a, **kw):
        count[0] += 1
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return f(*a, **kw)
    return g
for name in ("write", "fsync", "replace", "rename", "unlink", "mkdir", "rmdir", "symlink",
             "ftruncate"):
    if hasattr(os, name):
        setattr(os, name, wrap(getattr(os, name)))
if os.environ.get("RW_COUNT_FILE"):
    atexit.register(lambda: open(os.environ["RW_COUNT_FILE"], "w").write(str(count[0])))
from ragwarrant.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _child(argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the log events (gates_evaluated) go to stderr off a TTY
        env={**os.environ, **env},
    )


def _stray_files(output_dir: Path) -> int:
    """Temp files and staging directories left in the output volume."""
    if not output_dir.is_dir():
        return 0
    return sum(
        1
        for p in output_dir.rglob("*")
        if p.name.endswith(".tmp") or ".staging" in p.name or p.name.startswith(".tmp")
    )


class _KillTally:
    """Counts over kill-and-retry trials."""

    def __init__(self) -> None:
        self.trials = 0
        self.killed = 0
        self.unverifiable_after_retry = 0
        self.wrong_retry_exit = 0
        self.stray_after_kill = 0
        self.stray_after_retry = 0
        self.manifest_but_unverifiable_after_kill = 0
        self.ledger_broken_after_retry = 0

    def row(self) -> dict[str, int]:
        return dict(vars(self))


def _trial(work: Path, input_dir: Path, kill: Callable[[Path, Path], bool], expected: int) -> Any:
    """One kill (by ``kill(output_dir, ledger)``), one retry, one verify; return the findings."""
    out, ledger = work / "out", work / "ledger.jsonl"
    landed = kill(out, ledger)
    found = {"killed": int(landed), "stray_after_kill": _stray_files(out)}
    target = committed_dir(out)
    found["manifest_but_unverifiable_after_kill"] = int(
        (target / "manifest.json").is_file() and not verify_output_dir(target).ok
    )
    argv = ["run", "--input", str(input_dir), "--output", str(out), "--ledger", str(ledger)]
    retry = _child(argv, {})
    retry.communicate()
    found["wrong_retry_exit"] = int(retry.returncode != expected)
    found["unverifiable_after_retry"] = int(
        not verify_output_dir(committed_dir(out), input_dir=input_dir).ok
    )
    found["stray_after_retry"] = _stray_files(out)
    found["ledger_broken_after_retry"] = int(bool(ledger.is_file() and verify_chain(ledger)))
    shutil.rmtree(out, ignore_errors=True)
    ledger.unlink(missing_ok=True)
    return found


def _tally(tally: _KillTally, found: dict[str, int]) -> None:
    tally.trials += 1
    for key, value in found.items():
        setattr(tally, key, getattr(tally, key) + value)


def _calibrate(work: Path, input_dir: Path) -> tuple[int, int, float]:
    """Run once unkilled: (exit code, write calls made, seconds from gates_evaluated to exit)."""
    count_file = work / "count.txt"
    out = work / "calib-out"
    argv = ["run", "--input", str(input_dir), "--output", str(out), "--ledger", str(work / "l")]
    child = _child(argv, {"RW_COUNT_FILE": str(count_file)})
    assert child.stdout is not None
    seen = None
    for line in child.stdout:
        if b'"gates_evaluated"' in line:
            seen = time.monotonic()
    child.wait()
    output_phase = time.monotonic() - (seen or time.monotonic())
    shutil.rmtree(out, ignore_errors=True)
    (work / "l").unlink(missing_ok=True)
    return child.returncode, int(count_file.read_text()), output_phase


def bench_kills(work: Path, args: argparse.Namespace, rng: Any) -> dict[str, dict[str, int]]:
    """Kill at every write call (``--syscalls`` first ones) and at random output-phase times."""
    input_dir = _copy_example(work)
    expected, n_calls, output_phase = _calibrate(work, input_dir)
    at_calls, at_times = _KillTally(), _KillTally()
    argv_of = lambda out, ledger: [  # noqa: E731
        "run",
        "--input",
        str(input_dir),
        "--output",
        str(out),
        "--ledger",
        str(ledger),
    ]
    limit = n_calls if args.syscalls is None else min(n_calls, args.syscalls)
    for k in range(1, limit + 1):

        def kill_at_call(out: Path, ledger: Path, k: int = k) -> bool:
            child = _child(argv_of(out, ledger), {"RW_KILL_AT": str(k)})
            child.communicate()
            return child.returncode == -signal.SIGKILL

        _tally(at_calls, _trial(work, input_dir, kill_at_call, expected))
    for _ in range(args.kills):
        delay = float(rng.uniform(0.0, output_phase * 1.1))

        def kill_at_time(out: Path, ledger: Path, delay: float = delay) -> bool:
            child = _child(argv_of(out, ledger), {})
            assert child.stdout is not None
            for line in child.stdout:
                if b'"gates_evaluated"' in line:
                    time.sleep(delay)
                    break
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGKILL)
            child.communicate()
            return child.returncode == -signal.SIGKILL

        _tally(at_times, _trial(work, input_dir, kill_at_time, expected))
    torn = _KillTally()
    for _ in range(args.torn):

        def tear_ledger(out: Path, ledger: Path) -> bool:
            child = _child(argv_of(out, ledger), {})
            child.communicate()
            data = ledger.read_bytes()
            cut = int(rng.integers(1, len(data) - 1))  # inside the only entry: a torn line
            ledger.write_bytes(data[:cut])
            shutil.rmtree(out, ignore_errors=True)
            return True

        _tally(torn, _trial(work, input_dir, tear_ledger, expected))
    print(
        f"  (calibration: exit {expected}, {n_calls} write calls, "
        f"output phase {output_phase:.3f} s)"
    )
    return {
        "at each write call": at_calls.row(),
        "at random output-phase times": at_times.row(),
        "ledger line torn, then a run": torn.row(),
    }


# ---------------------------------------------------------------------------------------------
# Report.


def _print_flips(rows: list[tuple[str, int, int]]) -> int:
    print("\n## single-byte flips (verify --input, no replay)")
    print(f"| {'file':<24} | {'flips':>6} | {'missed':>6} |")
    print(f"|{'-' * 26}|{'-' * 8}:|{'-' * 8}:|")
    for name, flips, missed in rows:
        print(f"| {name:<24} | {flips:>6} | {missed:>6} |")
    total = sum(r[2] for r in rows)
    print(f"| {'total':<24} | {sum(r[1] for r in rows):>6} | {total:>6} |")
    return total


def _print_secrets(
    cases: int, leaks: dict[str, dict[str, list[str]]], codes: dict[str, int]
) -> int:
    n_leaks = sum(len(v) for v in leaks.values())
    print(f"\n## secrets: {len(SECRETS)} kinds x {len(PLACES)} places available")
    print(f"cases run: {cases}; exit codes: {dict(sorted(codes.items()))}")
    where = [w for by_place in leaks.values() for w in by_place.values()]
    files = sum(1 for w in where if set(w) - {"stdout", "stderr"})
    print(f"cases with a leak: {n_leaks}")
    print(f"  into an output file or the ledger: {files}")
    print(f"  into stdout: {sum(1 for w in where if 'stdout' in w)}")
    print(f"  into stderr: {sum(1 for w in where if 'stderr' in w)}")
    for kind, by_place in sorted(leaks.items()):
        for place, where in sorted(by_place.items()):
            print(f"  LEAK {kind:<22} via {place:<32} -> {', '.join(where)}")
    return n_leaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (the smoke test)")
    parser.add_argument("--all-bytes", action="store_true", help="flip every byte of every file")
    parser.add_argument("--sample", type=int, default=200, help="flips per hash-covered file")
    parser.add_argument("--kills", type=int, default=30, help="random-time kills")
    parser.add_argument("--syscalls", type=int, default=None, help="first N write calls only")
    parser.add_argument("--torn", type=int, default=5, help="runs after a torn ledger line")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--parts", default="flips,edits,secrets,kills")
    args = parser.parse_args()
    if args.quick:
        args.sample, args.kills, args.syscalls, args.torn = 20, 2, 3, 1
    parts = set(args.parts.split(","))
    rng = np.random.default_rng(args.seed)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="ragwarrant-integrity-") as tmp:
        root = Path(tmp)
        if "flips" in parts:
            (root / "flips").mkdir()
            failures += _print_flips(bench_flips(root / "flips", args, rng))
        if "edits" in parts:
            (root / "edits").mkdir()
            tried, passing = bench_attestation_edits(root / "edits")
            print(f"\n## attestation single-field edits: {tried} tried, {len(passing)} pass verify")
            for label in passing:
                print(f"  PASSES {label}")
            failures += len(passing)
        if "secrets" in parts:
            (root / "secrets").mkdir()
            kinds = list(SECRETS)[:2] if args.quick else list(SECRETS)
            places = list(PLACES)[1:3] if args.quick else list(PLACES)
            failures += _print_secrets(*bench_secrets(root / "secrets", kinds, places))
        if "kills" in parts:
            (root / "kills").mkdir()
            print("\n## kill and retry")
            for mode, row in bench_kills(root / "kills", args, rng).items():
                print(f"  {mode}: {row}")
                failures += row["unverifiable_after_retry"] + row["wrong_retry_exit"]
                failures += row["ledger_broken_after_retry"]
    print(f"\nproblems counted above: {failures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
