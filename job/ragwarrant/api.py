"""The Python API: decide from a notebook, a test or an MLflow run, as the command line does.

>>> import ragwarrant
>>> decision = ragwarrant.decide("examples/ragtruth-generators", "out/run")  # doctest: +SKIP
>>> decision.run_class, decision.exit_code  # doctest: +SKIP
(<DecisionClass.PROMOTE: 'PROMOTE'>, 0)

``decide`` runs the same job as ``ragwarrant run`` (same validation, same gates, same output files)
and returns the pydantic model of ``decision.json``. A decision of any class is a returned value;
errors (bad contract, unreadable input, unwritable output, a failed self-test) are raised as
the typed errors of ``ragwarrant.errors``, whose ``exit_code`` is the one the CLI would exit with.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ragwarrant.audit.record import record_error
from ragwarrant.contract import ReleaseContract
from ragwarrant.contract import load_contract as _load_contract
from ragwarrant.errors import RagwarrantError
from ragwarrant.outputs import Decision
from ragwarrant.pipeline import run_job


def decide(
    input_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str] | None = None,
    *,
    on_progress: Callable[..., None] | None = None,
) -> Decision:
    """Run the promotion job on ``input_dir`` and return its decision.

    Args:
        input_dir: the directory holding ``contract.yaml`` (or ``.json``) and the evidence it
            names, as mounted at ``/in`` for the container. Never written.
        output_dir: where decision.json, validation_report.json, report.md and manifest.json
            are written (atomically, manifest last), exactly as by ``ragwarrant run --output``.
            None: a temporary directory, removed before returning (only the decision is kept).
        on_progress: optional callback ``(event: str, **fields)`` receiving the job's progress
            events (the ones ``ragwarrant run`` logs); None drops them.

    Returns:
        The decision as published (``decision.json``, after publication hygiene).

    Raises:
        ragwarrant.errors.ContractError: the contract is missing or invalid (CLI exit 78).
        ragwarrant.errors.InputError: the input cannot be read (66).
        ragwarrant.errors.OutputError: the output directory cannot be written (73).
        ragwarrant.errors.InternalError: the engine failed its self-test (70).
        When ``output_dir`` is given, an ERROR decision record is written there first, as
        the CLI does.
    """
    on_stage = on_progress or (lambda event, **fields: None)  # a library does not log to stdout
    if output_dir is None:
        with tempfile.TemporaryDirectory(prefix="ragwarrant-") as tmp:
            return run_job(Path(input_dir), Path(tmp) / "out", on_stage=on_stage).decision
    try:
        return run_job(Path(input_dir), Path(output_dir), on_stage=on_stage).decision
    except RagwarrantError as exc:
        record_error(Path(output_dir), exc, input_dir=Path(input_dir))
        raise


def load_contract(path: str | os.PathLike[str]) -> ReleaseContract:
    """Parse and validate a release contract file (YAML or JSON).

    Args:
        path: the contract file, e.g. ``in/contract.yaml``.

    Returns:
        The validated pydantic model (``ragwarrant.contract.ReleaseContract``).

    Raises:
        ragwarrant.errors.ContractError: unreadable file, syntax error, or a field that fails
            validation; the message names each field path, the rule and what was found.
    """
    return _load_contract(Path(path))
