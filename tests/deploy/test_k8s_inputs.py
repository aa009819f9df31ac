"""`k8s render` and `k8s submit` refuse inputs that cannot work, before writing anything.

An invalid contract (78), a file the contract names that is not packaged (66), an image not pinned
by a sha256 digest or with a malformed one (64), a malformed schedule (64); and an Indexed Job over
contracts in different directories gives each index its own files, never the first contract's.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragwarrant.errors import ContractError, InputError, UsageError

from .conftest import DIGEST_IMAGE, EXAMPLE, job_spec, load_docs, render, workload

DIGEST = "sha256:" + "ab" * 32


def _copy_example(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest)
    return dest / "contract.yaml"


def _render_to(tmp_path: Path, *argv: str, verb: str = "render") -> Path:
    out = tmp_path / "out.yaml"
    assert render(*argv, "--out", str(out), verb=verb) == 0
    return out


def _mounted_tree(docs: list[dict[str, Any]]) -> dict[str, bytes]:
    """Return {path under /in: bytes} as the pod's projected input volume would show it."""
    maps: dict[str, dict[str, bytes]] = {}
    for d in docs:
        if d["kind"] == "ConfigMap":
            content = {k: v.encode() for k, v in (d.get("data") or {}).items()}
            content.update({k: base64.b64decode(v) for k, v in (d.get("binaryData") or {}).items()})
            maps[d["metadata"]["name"]] = content
    pod = job_spec(workload(docs))["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "input"]
    tree: dict[str, bytes] = {}
    for source in volume["projected"]["sources"]:
        cm = source["configMap"]
        for item in cm["items"]:
            assert item["path"] not in tree, f"two sources project {item['path']}"
            tree[item["path"]] = maps[cm["name"]][item["key"]]
    return tree


def _dir_tree(root: Path, prefix: str) -> dict[str, bytes]:
    return {
        prefix + p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.name != "contract.yaml"
    }


@pytest.mark.parametrize("verb", ["render", "submit"])
def test_invalid_contract_is_a_contract_error(k8s_client: Any, tmp_path: Path, verb: str) -> None:
    """A contract with an unknown key is refused with ContractError (exit 78), naming the file;
    submit checks it before it even loads a kubeconfig."""
    contract = _copy_example(tmp_path / "in")
    contract.write_text(contract.read_text() + "surprise: 1\n")
    with pytest.raises(ContractError) as info:
        render("--image", DIGEST_IMAGE, "--contract", str(contract), verb=verb)
    assert int(info.value.exit_code) == 78
    assert str(contract) in info.value.message and "surprise" in info.value.message


@pytest.mark.parametrize(
    ("remove", "named"),
    [
        ("evidence/quality.csv", "evidence ragtruth-annotations 'evidence/quality.csv'"),
        ("policies/gpt-4-0613.json", "policy config of gpt-4-0613 'policies/gpt-4-0613.json'"),
    ],
)
def test_missing_referenced_file_is_an_input_error(
    k8s_client: Any, tmp_path: Path, remove: str, named: str
) -> None:
    """A policy config or evidence file the contract names but its directory lacks: exit 66,
    the message names the contract, the file and the directory."""
    contract = _copy_example(tmp_path / "in")
    (tmp_path / "in" / remove).unlink()
    with pytest.raises(InputError) as info:
        render("--image", DIGEST_IMAGE, "--contract", str(contract))
    assert int(info.value.exit_code) == 66 and info.value.code == "k8s-input-reference-missing"
    assert named in info.value.message
    assert str(contract) in info.value.message and str(tmp_path / "in") in info.value.message


def test_hidden_referenced_file_is_not_packaged_so_refused(k8s_client: Any, tmp_path: Path) -> None:
    """A file that exists but is not packaged (under a '.' directory) is missing for the pod."""
    contract = _copy_example(tmp_path / "in")
    (tmp_path / "in" / ".data").mkdir()
    shutil.move(tmp_path / "in" / "evidence" / "quality.csv", tmp_path / "in" / ".data")
    contract.write_text(contract.read_text().replace("evidence/quality.csv", ".data/quality.csv"))
    with pytest.raises(InputError, match=r"\.data/quality\.csv"):
        render("--image", DIGEST_IMAGE, "--contract", str(contract))


def test_missing_file_of_the_second_indexed_contract_is_refused(
    k8s_client: Any, tmp_path: Path
) -> None:
    """Each contract of an Indexed Job is checked against its own directory."""
    first = _copy_example(tmp_path / "a")
    second = _copy_example(tmp_path / "b")
    (tmp_path / "b" / "evidence" / "telemetry.parquet").unlink()
    with pytest.raises(InputError) as info:
        render("--kind", "indexed", "--image", DIGEST_IMAGE, "--contract", str(first),
               "--contract", str(second))  # fmt: skip
    assert str(second) in info.value.message and "telemetry.parquet" in info.value.message
    assert str(first) not in info.value.message.replace(str(second), "")


def test_indexed_contracts_in_different_directories_get_their_own_files(
    k8s_client: Any, tmp_path: Path
) -> None:
    """Index i sees exactly its own contract's directory under /in/<i>/, byte for byte: index 1
    never reads index 0's evidence, and files only index 1 has are there."""
    first = _copy_example(tmp_path / "a")
    second = _copy_example(tmp_path / "b")
    quality = tmp_path / "b" / "evidence" / "quality.csv"
    quality.write_bytes(quality.read_bytes() + b"\n")  # same path, other content
    (tmp_path / "b" / "policies" / "notes.txt").write_text("only in b\n")
    (tmp_path / "a" / "DERIVATION.json").unlink()  # now only b has it
    out = _render_to(tmp_path, "--kind", "indexed", "--image", DIGEST_IMAGE,
                     "--contract", str(first), "--contract", str(second))  # fmt: skip
    docs = load_docs(out)
    tree = _mounted_tree(docs)
    contracts = {p: v for p, v in tree.items() if p.endswith("/contract.yaml")}
    assert contracts == {
        "0/contract.yaml": first.read_bytes(),
        "1/contract.yaml": second.read_bytes(),
    }
    evidence = {p: v for p, v in tree.items() if not p.endswith("/contract.yaml")}
    assert evidence == {**_dir_tree(tmp_path / "a", "0/"), **_dir_tree(tmp_path / "b", "1/")}
    names = sorted(d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap")
    assert names == ["ragwarrant-contract", "ragwarrant-evidence", "ragwarrant-evidence-1"]


def test_indexed_contracts_in_one_directory_share_one_configmap(
    k8s_client: Any, tmp_path: Path
) -> None:
    """Two contracts beside the same files need one evidence ConfigMap, mounted for both."""
    first = _copy_example(tmp_path / "a")
    second = tmp_path / "a" / "strict.yaml"
    shutil.copy(first, second)
    out = _render_to(tmp_path, "--kind", "indexed", "--image", DIGEST_IMAGE,
                     "--contract", str(first), "--contract", str(second))  # fmt: skip
    docs = load_docs(out)
    names = sorted(d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap")
    assert names == ["ragwarrant-contract", "ragwarrant-evidence"]
    evidence = {p: v for p, v in _mounted_tree(docs).items() if not p.endswith("contract.yaml")}
    shared = _dir_tree(tmp_path / "a", "")
    assert evidence == {f"{i}/{p}": v for i in (0, 1) for p, v in shared.items()}


@pytest.mark.parametrize(
    ("image", "code"),
    [
        ("example.org/r:latest", "k8s-image-not-pinned"),
        ("example.org/r", "k8s-image-not-pinned"),
        ("localhost:5000/team/r:1.2.3", "k8s-image-not-pinned"),
        ("example.org/r@sha256:abc", "k8s-bad-image-digest"),
        ("example.org/r@sha256:" + "A" * 64, "k8s-bad-image-digest"),
        ("example.org/r@sha256:" + "a" * 63, "k8s-bad-image-digest"),
        ("example.org/r@sha512:" + "a" * 128, "k8s-bad-image-digest"),
        ("example.org/r@", "k8s-bad-image-digest"),
        ("Example.org/R@" + DIGEST, "k8s-bad-image"),
        ("example.org/r sha256", "k8s-bad-image"),
        ("", "k8s-bad-image"),
    ],
)
@pytest.mark.parametrize("verb", ["render", "submit"])
def test_image_without_a_valid_digest_is_refused(
    k8s_client: Any, tmp_path: Path, image: str, code: str, verb: str
) -> None:
    """A tag (or no tag: latest), a malformed digest, or no reference at all: exit 64."""
    with pytest.raises(UsageError) as info:
        render("--image", image, "--contract", str(EXAMPLE / "contract.yaml"), verb=verb)
    assert info.value.code == code, info.value.message
    assert int(info.value.exit_code) == 64


@pytest.mark.parametrize(
    "image",
    ["example.org/r@" + DIGEST, "localhost:5000/team/r:1.2.3@" + DIGEST, "r@" + DIGEST],
)
def test_image_pinned_by_digest_is_accepted(k8s_client: Any, tmp_path: Path, image: str) -> None:
    """A sha256 digest reference, with or without a tag and registry port, renders as given."""
    out = _render_to(tmp_path, "--image", image, "--contract", str(EXAMPLE / "contract.yaml"))
    assert job_spec(workload(load_docs(out)))["template"]["spec"]["containers"][0]["image"] == image


def test_allow_tag_accepts_a_tag_but_not_a_malformed_digest(
    k8s_client: Any, tmp_path: Path
) -> None:
    """--allow-tag lets a mutable tag through; a broken digest still cannot be pulled."""
    contract = str(EXAMPLE / "contract.yaml")
    out = _render_to(
        tmp_path, "--allow-tag", "--image", "example.org/r:latest", "--contract", contract
    )
    pod = job_spec(workload(load_docs(out)))["template"]["spec"]
    assert pod["containers"][0]["image"] == "example.org/r:latest"
    with pytest.raises(UsageError) as info:
        render("--allow-tag", "--image", "example.org/r@sha256:abc", "--contract", contract)
    assert info.value.code == "k8s-bad-image-digest"


@pytest.mark.parametrize("verb", ["render", "submit"])
def test_no_contract_is_a_usage_error(k8s_client: Any, verb: str) -> None:
    """Neither --contract nor --input-claim: UsageError k8s-no-contract (64), not a crash."""
    with pytest.raises(UsageError) as info:
        render("--image", DIGEST_IMAGE, verb=verb)
    assert info.value.code == "k8s-no-contract" and int(info.value.exit_code) == 64


@pytest.mark.parametrize("schedule", ["banana", "0 6 * *", "0 6 * * 1 2", "@sometimes"])
def test_cronjob_rejects_a_malformed_schedule(k8s_client: Any, schedule: str) -> None:
    """A schedule that is neither five cron fields nor a macro is a usage error."""
    with pytest.raises(UsageError) as info:
        render("--kind", "cronjob", "--schedule", schedule, "--image", DIGEST_IMAGE,
               "--contract", str(EXAMPLE / "contract.yaml"))  # fmt: skip
    assert info.value.code == "k8s-bad-schedule"


@pytest.mark.parametrize("schedule", ["@daily", "*/15 6-18 * * MON-FRI"])
def test_cronjob_accepts_macros_and_cron_fields(
    k8s_client: Any, tmp_path: Path, schedule: str
) -> None:
    """Macros and ranges/steps/names pass and are written as given."""
    out = _render_to(tmp_path, "--kind", "cronjob", "--schedule", schedule, "--image",
                     DIGEST_IMAGE, "--contract", str(EXAMPLE / "contract.yaml"))  # fmt: skip
    assert workload(load_docs(out))["spec"]["schedule"] == schedule


@pytest.mark.parametrize(
    ("case", "want"), [("invalid-contract", 78), ("missing-file", 66), ("tag-image", 64)]
)
def test_cli_exit_codes_and_no_output_file(
    k8s_client: Any, tmp_path: Path, case: str, want: int
) -> None:
    """Through the real CLI: the typed error's exit code, and no manifest file written."""
    contract = _copy_example(tmp_path / "in")
    image = DIGEST_IMAGE
    if case == "invalid-contract":
        contract.write_text(contract.read_text() + "surprise: 1\n")
    elif case == "missing-file":
        (tmp_path / "in" / "evidence" / "quality.csv").unlink()
    else:
        image = "example.org/r:latest"
    out = tmp_path / "job.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "ragwarrant", "k8s", "render", "--image", image,
         "--contract", str(contract), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == want, done.stderr
    assert not out.exists()


def test_dataset_directory_evidence_is_packaged_file_by_file(
    k8s_client: Any, tmp_path: Path
) -> None:
    """An evidence path naming a directory of part files is accepted: every part is mounted
    under /in/ at its own path."""
    contract = _copy_example(tmp_path / "in")
    part = tmp_path / "in" / "evidence" / "telemetry.parquet"
    data = part.read_bytes()
    part.unlink()
    (part / "policy=a").mkdir(parents=True)
    (part / "policy=a" / "part-0.parquet").write_bytes(data)
    tree = _mounted_tree(load_docs(_render_to(tmp_path, "--image", DIGEST_IMAGE,
                                              "--contract", str(contract))))  # fmt: skip
    assert tree["evidence/telemetry.parquet/policy=a/part-0.parquet"] == data


def test_a_file_linking_outside_the_input_is_not_packaged(tmp_path: Path) -> None:
    """A symlinked input file leading outside the directory is refused, never read into the
    cluster's ConfigMap; one leading to a file inside is packaged with its content."""
    from ragwarrant.k8s.inputs import collect_input_files

    root = tmp_path / "in"
    root.mkdir()
    (root / "a.csv").write_text("a\n1\n")
    (root / "b.csv").symlink_to("a.csv")
    assert [(f.relpath, f.content) for f in collect_input_files(root)] == [
        ("a.csv", b"a\n1\n"),
        ("b.csv", b"a\n1\n"),
    ]
    (tmp_path / "secret.txt").write_text("not for the cluster\n")
    (root / "c.csv").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ContractError) as info:
        collect_input_files(root)
    assert info.value.code == "path-escapes-input"


def test_missing_human_labels_file_is_refused(k8s_client: Any, tmp_path: Path) -> None:
    """Human labels a quality metric names are files the pod needs too."""
    contract = _copy_example(tmp_path / "in")
    text = contract.read_text().replace(
        "quality_metrics:\n  - id: no_hallucination\n",
        "quality_metrics:\n  - id: no_hallucination\n"
        "    human_labels: {file: review/labels.csv, queue: review/queue.json}\n",
        1,
    )
    assert "human_labels" in text
    contract.write_text(text)
    with pytest.raises(InputError, match=r"human labels of no_hallucination 'review/queue\.json'"):
        render("--image", DIGEST_IMAGE, "--contract", str(contract))
