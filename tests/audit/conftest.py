"""Fixtures for the audit tests: one real run of the shipped RAGTruth example, copied per test."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragwarrant.job import run_job

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ragtruth-generators"


@dataclass(frozen=True)
class Run:
    """An input directory and the output directory of one completed run on it."""

    input_dir: Path
    output_dir: Path


@pytest.fixture(scope="session")
def pristine_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Run the job once on a copy of the example; tests must not modify these directories."""
    if not (EXAMPLE / "contract.yaml").is_file():
        pytest.skip("examples/ragtruth-generators is not present")
    root = tmp_path_factory.mktemp("pristine")
    input_dir = root / "in"
    shutil.copytree(EXAMPLE, input_dir)
    output_dir = root / "out"
    run_job(input_dir, output_dir, on_stage=lambda event, **fields: None)
    return Run(input_dir, output_dir)


@pytest.fixture()
def real_run(pristine_run: Run, tmp_path: Path) -> Run:
    """A private copy of the pristine run's input and output directories."""
    input_dir = tmp_path / "in"
    output_dir = tmp_path / "out"
    shutil.copytree(pristine_run.input_dir, input_dir)
    shutil.copytree(pristine_run.output_dir, output_dir)
    return Run(input_dir, output_dir)


TEXT_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "corroboration-demo"


@pytest.fixture(scope="session")
def pristine_text_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One run of the corroboration demo, whose evidence carries question/response/context text."""
    if not (TEXT_EXAMPLE / "contract.yaml").is_file():
        pytest.skip("examples/corroboration-demo is not present")
    root = tmp_path_factory.mktemp("pristine-text")
    input_dir = root / "in"
    shutil.copytree(TEXT_EXAMPLE, input_dir)
    output_dir = root / "out"
    run_job(input_dir, output_dir, on_stage=lambda event, **fields: None)
    return Run(input_dir, output_dir)


@pytest.fixture()
def text_run(pristine_text_run: Run, tmp_path: Path) -> Run:
    """A private copy of the corroboration demo's run."""
    input_dir = tmp_path / "in"
    output_dir = tmp_path / "out"
    shutil.copytree(pristine_text_run.input_dir, input_dir)
    shutil.copytree(pristine_text_run.output_dir, output_dir)
    return Run(input_dir, output_dir)
