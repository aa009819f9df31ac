"""Fixtures for the audit tests: one real run of the shipped RAGTruth example, copied per test."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from ragwarrant.pipeline import run_job

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ragtruth-generators"


@dataclass(frozen=True)
class Run:
    """An input directory and the output directory of one completed run on it."""

    input_dir: Path
    output_dir: Path


def _run_example(example: Path, tmp_path_factory: pytest.TempPathFactory, name: str) -> Run:
    """Run the job once on a copy of ``example`` (skipping when the example is not shipped)."""
    if not (example / "contract.yaml").is_file():
        pytest.skip(f"examples/{example.name} is not present")
    root = tmp_path_factory.mktemp(name)
    input_dir = root / "in"
    shutil.copytree(example, input_dir)
    output_dir = root / "out"
    run_job(input_dir, output_dir, on_stage=lambda event, **fields: None)
    return Run(input_dir, output_dir)


def _copy_run(run: Run, tmp_path: Path) -> Run:
    """A private copy of ``run``'s input and output directories under ``tmp_path``."""
    input_dir = tmp_path / "in"
    output_dir = tmp_path / "out"
    shutil.copytree(run.input_dir, input_dir)
    shutil.copytree(run.output_dir, output_dir)
    return Run(input_dir, output_dir)


@pytest.fixture(scope="session")
def pristine_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Run the job once on a copy of the example; tests must not modify these directories."""
    return _run_example(EXAMPLE, tmp_path_factory, "pristine")


@pytest.fixture()
def real_run(pristine_run: Run, tmp_path: Path) -> Run:
    """A private copy of the pristine run's input and output directories."""
    return _copy_run(pristine_run, tmp_path)


TEXT_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "corroboration-demo"


@pytest.fixture(scope="session")
def pristine_text_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One run of the corroboration demo, whose evidence carries question/response/context text."""
    return _run_example(TEXT_EXAMPLE, tmp_path_factory, "pristine-text")


@pytest.fixture()
def text_run(pristine_text_run: Run, tmp_path: Path) -> Run:
    """A private copy of the corroboration demo's run."""
    return _copy_run(pristine_text_run, tmp_path)


def write_keypair(directory: Path, stem: str) -> tuple[Path, Path]:
    """Write a fresh Ed25519 key pair as ``<stem>.pem`` (PKCS#8) and ``<stem>.pub.pem`` (SPKI).

    Returns:
        ``(private key path, public key path)``.
    """
    key = ed25519.Ed25519PrivateKey.generate()
    private, public = directory / f"{stem}.pem", directory / f"{stem}.pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public
