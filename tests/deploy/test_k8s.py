"""Kubernetes manifests: strict schema validation on two versions, restricted hardening, one source.

Both `kubectl kustomize deploy/k8s/overlays/*` and `ragwarrant k8s render` output are checked.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragwarrant.errors import UsageError
from ragwarrant.k8s import MIN_KUBERNETES_VERSION

from .conftest import (
    DIGEST_IMAGE,
    EXAMPLE,
    K8S,
    KUBERNETES_VERSIONS,
    LEDGER_CLAIM,
    OVERLAY_KIND,
    OVERLAYS,
    ROOT,
    SIGNED,
    SIGNING_SECRET,
    job_spec,
    load_docs,
    render,
    workload,
)

RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "privileged": False,
    "readOnlyRootFilesystem": True,
    "runAsGroup": 65532,
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "seccompProfile": {"type": "RuntimeDefault"},
}
# Volume types Pod Security Standards "restricted" allows.
RESTRICTED_VOLUME_TYPES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def _validate(
    tool: Callable[[str], Path], path: Path, version: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tool("kubernetes-validate")), "--strict", "--quiet", "-k", version, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_kustomize_output_validates_strictly(
    kustomized: dict[str, Path], tool: Callable[[str], Path], version: str
) -> None:
    """Every overlay's kustomize output passes kubernetes-validate --strict."""
    for overlay in OVERLAYS:
        done = _validate(tool, kustomized[overlay], version)
        assert done.returncode == 0, (overlay, done.stdout, done.stderr)


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_rendered_output_validates_strictly(
    rendered: dict[str, Path], tool: Callable[[str], Path], version: str
) -> None:
    """Every kind written by `ragwarrant k8s render` passes kubernetes-validate --strict."""
    for kind, path in rendered.items():
        done = _validate(tool, path, version)
        assert done.returncode == 0, (kind, done.stdout, done.stderr)


def test_minimum_kubernetes_version_is_the_oldest_that_validates(
    rendered: dict[str, Path], tool: Callable[[str], Path]
) -> None:
    """MIN_KUBERNETES_VERSION is tested above and is a real floor: the version before it rejects
    the Indexed Job (its podFailurePolicy FailIndex rule, backoffLimitPerIndex)."""
    major, minor = MIN_KUBERNETES_VERSION.split(".")
    assert f"{MIN_KUBERNETES_VERSION}.0" == KUBERNETES_VERSIONS[0]
    done = _validate(tool, rendered["indexed"], f"{major}.{int(minor) - 1}.0")
    assert done.returncode != 0 and "podFailurePolicy" in done.stdout + done.stderr
    assert f"Kubernetes {MIN_KUBERNETES_VERSION}" in (ROOT / "deploy" / "README.md").read_text()


def test_strict_validation_rejects_an_unknown_field(
    rendered: dict[str, Path], tool: Callable[[str], Path], tmp_path: Path
) -> None:
    """The validator is really strict: a misspelt securityContext field fails it."""
    docs = load_docs(rendered["job"])
    pod = job_spec(workload(docs))["template"]["spec"]
    pod["containers"][0]["securityContext"]["readOnlyRootFileSystem"] = True  # wrong case
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all(docs))
    assert _validate(tool, bad, KUBERNETES_VERSIONS[-1]).returncode != 0


def _check_ledger_and_signing_key(
    docs: list[dict[str, Any]], pod: dict[str, Any], signed: bool
) -> None:
    """The ledger claim is mounted writable at /ledger and passed as --ledger; the signing key
    (only when ``signed``) is a Secret mounted read-only, mode 0440, passed as --signing-key."""
    (container,) = pod["containers"]
    args = container["args"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    for v in pod["volumes"]:
        assert set(v) - {"name"} <= RESTRICTED_VOLUME_TYPES, v
    writable = {p for p, m in mounts.items() if not m.get("readOnly")}
    assert writable == {"/out", "/tmp", "/ledger"}, writable
    ledger = volumes[mounts["/ledger"]["name"]]
    assert ledger["persistentVolumeClaim"] == {"claimName": LEDGER_CLAIM}
    assert args[5:7] == ["--ledger", "/ledger/ledger.jsonl"], args
    (claim,) = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert claim["metadata"]["name"] == LEDGER_CLAIM
    # Every run and every index appends to one file under flock: shared by many pods at once.
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["spec"]["resources"]["requests"]["storage"]
    secrets = [v for v in pod["volumes"] if "secret" in v]
    if not signed:
        assert secrets == [] and "--signing-key" not in args and "/secrets/signing" not in mounts
        assert args[7:] == []
        return
    (volume,) = secrets
    assert mounts["/secrets/signing"] == {
        "name": volume["name"],
        "mountPath": "/secrets/signing",
        "readOnly": True,
    }
    secret = volume["secret"]
    assert secret["secretName"] == SIGNING_SECRET
    mode = secret["defaultMode"]
    assert mode == 0o440 and mode & 0o333 == 0, oct(mode)  # r--r-----: nobody writes, no other
    assert not any("mode" in item for item in secret["items"])
    (item,) = secret["items"]
    assert args[7:] == ["--signing-key", f"/secrets/signing/{item['path']}"], args
    assert not any(e["name"] == "RAGWARRANT_SIGNING_KEY" for e in container.get("env", []))


def _check_restricted(docs: list[dict[str, Any]], overlay: str) -> None:
    indexed = OVERLAY_KIND[overlay] == "indexed"
    obj = workload(docs)
    spec = job_spec(obj)
    template = spec["template"]
    pod = template["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"] == {
        "fsGroup": 65532,
        "runAsGroup": 65532,
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    (container,) = pod["containers"]
    assert container["securityContext"] == RESTRICTED_CONTAINER
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert set(container["resources"]["requests"]) >= {"cpu", "memory"}
    assert set(container["resources"]["limits"]) >= {"cpu", "memory"}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/in"].get("readOnly") is True and not mounts["/out"].get("readOnly")
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    assert "configMap" in str(volumes[mounts["/in"]["name"]]), "the contract comes from a ConfigMap"
    assert spec["activeDeadlineSeconds"] > 0 and spec["ttlSecondsAfterFinished"] > 0
    args = container["args"]
    assert args[:2] == ["run", "--input"] and args[3] == "--output"
    # Every run writes under its own prefix: the Job's name and uid, from the pod's labels.
    env = {e["name"]: e for e in container["env"]}
    for var, label in (("JOB_NAME", "job-name"), ("JOB_UID", "controller-uid")):
        path = env[var]["valueFrom"]["fieldRef"]["fieldPath"]
        assert path == f"metadata.labels['batch.kubernetes.io/{label}']"
    if indexed:
        assert spec["completionMode"] == "Indexed" and spec["completions"] >= 2
        assert args[2] == "/in/$(JOB_COMPLETION_INDEX)"
        assert args[4] == "/out/$(JOB_NAME)/$(JOB_UID)/$(JOB_COMPLETION_INDEX)"
        assert "JOB_COMPLETION_INDEX" in env
        # Per-index limits: retries and a deadline per pod, every index runs by default.
        assert spec["backoffLimitPerIndex"] >= 1 and "backoffLimit" not in spec
        assert pod["activeDeadlineSeconds"] > 0
    else:
        assert args[2:5] == ["/in", "--output", "/out/$(JOB_NAME)/$(JOB_UID)"]
    _check_ledger_and_signing_key(docs, pod, signed=overlay in SIGNED)
    if obj["kind"] == "CronJob":
        assert obj["spec"]["concurrencyPolicy"] == "Forbid"
        assert obj["spec"]["successfulJobsHistoryLimit"] >= 1
        assert obj["spec"]["failedJobsHistoryLimit"] >= 1
    # Dedicated ServiceAccount without a token, and a deny-all NetworkPolicy that selects the
    # labels written on the pod template itself.
    (sa,) = [d for d in docs if d["kind"] == "ServiceAccount"]
    assert sa["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    (netpol,) = [d for d in docs if d["kind"] == "NetworkPolicy"]
    assert sorted(netpol["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in netpol["spec"] and "egress" not in netpol["spec"]
    selector = netpol["spec"]["podSelector"]["matchLabels"]
    assert selector and selector.items() <= template["metadata"]["labels"].items()
    (ns,) = [d for d in docs if d["kind"] == "Namespace"]
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"} == {
        ns["metadata"]["name"]
    }


def test_kustomize_output_meets_restricted(kustomized: dict[str, Path]) -> None:
    """Each overlay's pod meets Pod Security Standards 'restricted' and the issue's hardening."""
    for overlay in OVERLAYS:
        _check_restricted(load_docs(kustomized[overlay]), overlay)


def test_rendered_output_meets_restricted(rendered: dict[str, Path]) -> None:
    """Each rendered kind meets the same hardening."""
    for overlay, path in rendered.items():
        _check_restricted(load_docs(path), overlay)


def _normalised_pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the pod template without image and without kustomize's ConfigMap hash suffixes."""
    names = {
        d["metadata"]["name"]: re.sub(r"-[a-z0-9]{10}$", "", d["metadata"]["name"])
        for d in docs
        if d["kind"] == "ConfigMap"
    }
    template = copy.deepcopy(job_spec(workload(docs))["template"])
    for volume in template["spec"]["volumes"]:
        for source in volume.get("projected", {}).get("sources", []):
            cm = source["configMap"]
            cm["name"] = names.get(cm["name"], cm["name"])
    for c in template["spec"]["containers"]:
        c.pop("image")
    return template


def test_kustomize_and_render_agree(kustomized: dict[str, Path], rendered: dict[str, Path]) -> None:
    """The kustomize overlays and `k8s render` produce the same pod template for each kind.

    For job-signed this checks the hand-written signing-key patch against
    `render --signing-key-secret`.
    """
    for kind in OVERLAYS:
        assert _normalised_pod(load_docs(kustomized[kind])) == _normalised_pod(
            load_docs(rendered[kind])
        ), kind


def test_kustomize_input_mounts_every_shipped_file(kustomized: dict[str, Path]) -> None:
    """The evidence ConfigMap holds every file of the shipped example, byte for byte."""
    import base64

    docs = load_docs(kustomized["job"])
    (evidence,) = [d for d in docs if d["metadata"]["name"].startswith("ragwarrant-evidence")]
    items = {**evidence.get("data", {})}
    items.update({k: base64.b64decode(v) for k, v in evidence.get("binaryData", {}).items()})
    shipped = {
        p.relative_to(EXAMPLE).as_posix(): p.read_bytes()
        for p in EXAMPLE.rglob("*")
        if p.is_file() and p.name != "contract.yaml"
    }
    got = {
        k.replace("__", "/"): v if isinstance(v, bytes) else v.encode() for k, v in items.items()
    }
    assert got == shipped


def test_generated_k8s_files_are_up_to_date(k8s_client: Any) -> None:
    """deploy/k8s's generated files equal what scripts/deploy/sync_k8s.py writes now."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "deploy" / "sync_k8s.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_indexed_variant_contract_is_valid() -> None:
    """The Indexed overlay's second contract loads as a release contract."""
    from ragwarrant.contract import load_contract

    contract = load_contract(K8S / "overlays" / "indexed" / "contracts" / "contract-1.yaml")
    assert contract.quality_metrics[0].margin_abs == pytest.approx(0.03)


def test_render_indexed_fans_out_one_directory_per_contract(rendered: dict[str, Path]) -> None:
    """Index i reads /in/<i>/contract.yaml plus every evidence file under /in/<i>/."""
    docs = load_docs(rendered["indexed"])
    pod = job_spec(workload(docs))["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "input"]
    paths = {i["path"] for s in volume["projected"]["sources"] for i in s["configMap"]["items"]}
    evidence = [
        p.relative_to(EXAMPLE).as_posix()
        for p in EXAMPLE.rglob("*")
        if p.is_file() and p.name != "contract.yaml"
    ]
    assert paths == {f"{i}/{p}" for i in (0, 1) for p in ["contract.yaml", *evidence]}


def test_render_rejects_two_contracts_for_a_plain_job(k8s_client: Any, tmp_path: Path) -> None:
    """--kind job with two contracts is a usage error naming --kind indexed."""
    c = str(EXAMPLE / "contract.yaml")
    with pytest.raises(UsageError, match="runs one contract, found 2") as info:
        render("--kind", "job", "--image", DIGEST_IMAGE, "--contract", c, "--contract", c)
    assert "--kind indexed" in info.value.hint


def test_render_rejects_input_larger_than_a_configmap(k8s_client: Any, tmp_path: Path) -> None:
    """Evidence over 1 MB is refused with a hint to use a PersistentVolumeClaim; the guide the
    hint names exists and has the section it names."""
    shutil.copytree(EXAMPLE, tmp_path / "in")
    (tmp_path / "in" / "big.csv").write_bytes(b"a" * 1_000_001)
    with pytest.raises(UsageError, match="ConfigMap") as info:
        render("--image", DIGEST_IMAGE, "--contract", str(tmp_path / "in" / "contract.yaml"))
    assert info.value.code == "k8s-input-too-large"
    assert "PersistentVolumeClaim" in info.value.hint
    found = re.search(r"see (\S+), section '([^']+)'", info.value.hint)
    assert found, info.value.hint
    guide = ROOT / found.group(1)
    assert guide.is_file(), f"the hint names {found.group(1)}, which does not exist"
    text = guide.read_text()
    assert f"**{found.group(2)}.**" in text, f"{guide} has no section {found.group(2)!r}"
    section = text.split(f"**{found.group(2)}.**", 1)[1].split("\n**", 1)[0]
    assert "persistentVolumeClaim" in section and "/spec/template/spec/volumes/0" in section


def test_render_without_the_kubernetes_client_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the k8s extra missing, render raises UsageError naming `ragwarrant[k8s]`."""
    monkeypatch.setitem(sys.modules, "kubernetes.client", None)  # `import` raises ImportError
    with pytest.raises(UsageError, match="kubernetes client") as info:
        render("--image", DIGEST_IMAGE, "--contract", str(EXAMPLE / "contract.yaml"))
    assert info.value.code == "k8s-client-missing" and "ragwarrant[k8s]" in info.value.hint
    assert int(info.value.exit_code) == 64


def test_cli_exposes_k8s_render(k8s_client: Any, tmp_path: Path) -> None:
    """`python -m ragwarrant k8s render` works through the real CLI (commands/k8s.py registered)."""
    out = tmp_path / "job.yaml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragwarrant",
            "k8s",
            "render",
            "--image",
            DIGEST_IMAGE,
            "--contract",
            str(EXAMPLE / "contract.yaml"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert workload(load_docs(out))["spec"]["template"]["spec"]["containers"][0]["image"] == (
        DIGEST_IMAGE
    )


def test_render_output_claim_keeps_outputs(k8s_client: Any, tmp_path: Path) -> None:
    """--output-claim mounts the claim at /out instead of an emptyDir."""
    out = tmp_path / "job.yaml"
    contract = str(EXAMPLE / "contract.yaml")
    assert (
        render(
            "--image",
            DIGEST_IMAGE,
            "--contract",
            contract,
            "--output-claim",
            "results",
            "--out",
            str(out),
        )
        == 0
    )
    pod = job_spec(workload(load_docs(out)))["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "output"]
    assert volume == {"name": "output", "persistentVolumeClaim": {"claimName": "results"}}


def _render_job(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / "job.yaml"
    contract = str(EXAMPLE / "contract.yaml")
    assert render("--image", DIGEST_IMAGE, "--contract", contract, *extra, "--out", str(out)) == 0
    return load_docs(out)


def test_render_no_ledger_omits_volume_argument_and_claim(k8s_client: Any, tmp_path: Path) -> None:
    """--no-ledger: no /ledger mount, no --ledger argument, no PersistentVolumeClaim."""
    docs = _render_job(tmp_path, "--no-ledger")
    pod = job_spec(workload(docs))["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"] == ["run", "--input", "/in", "--output", "/out/$(JOB_NAME)/$(JOB_UID)"]
    assert "/ledger" not in {m["mountPath"] for m in container["volumeMounts"]}
    assert "ledger" not in {v["name"] for v in pod["volumes"]}
    assert "PersistentVolumeClaim" not in {d["kind"] for d in docs}


def test_render_ledger_claim_options(k8s_client: Any, tmp_path: Path) -> None:
    """--ledger-claim names the claim; size and storage class go into the emitted claim;
    --ledger-claim-exists mounts the claim without writing one."""
    docs = _render_job(
        tmp_path,
        "--ledger-claim",
        "audit-ledger",
        "--ledger-size",
        "5Gi",
        "--ledger-storage-class",
        "efs-sc",
    )
    (claim,) = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert claim["metadata"] == {
        **claim["metadata"],
        "name": "audit-ledger",
        "namespace": "ragwarrant",
    }
    assert claim["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "5Gi"}},
        "storageClassName": "efs-sc",
    }
    pod = job_spec(workload(docs))["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "ledger"]
    assert volume["persistentVolumeClaim"] == {"claimName": "audit-ledger"}
    existing = _render_job(tmp_path, "--ledger-claim", "audit-ledger", "--ledger-claim-exists")
    assert "PersistentVolumeClaim" not in {d["kind"] for d in existing}
    pod = job_spec(workload(existing))["template"]["spec"]
    assert {"name": "ledger", "persistentVolumeClaim": {"claimName": "audit-ledger"}} in pod[
        "volumes"
    ]


def test_render_signing_key_item_and_indexed(k8s_client: Any, tmp_path: Path) -> None:
    """--signing-key-item picks the Secret's key; an Indexed Job mounts it for every index."""
    out = tmp_path / "indexed.yaml"
    strict = str(K8S / "overlays" / "indexed" / "contracts" / "contract-1.yaml")
    argv = ["--kind", "indexed", "--image", DIGEST_IMAGE, "--evidence-dir", str(EXAMPLE)]
    argv += ["--contract", str(EXAMPLE / "contract.yaml"), "--contract", strict]
    argv += ["--signing-key-secret", "keys", "--signing-key-item", "release.pem"]
    assert render(*argv, "--out", str(out)) == 0
    pod = job_spec(workload(load_docs(out)))["template"]["spec"]
    assert pod["containers"][0]["args"][-2:] == ["--signing-key", "/secrets/signing/release.pem"]
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert volume["secret"] == {
        "secretName": "keys",
        "items": [{"key": "release.pem", "path": "release.pem"}],
        "defaultMode": 0o440,
    }


@pytest.mark.parametrize(
    ("flag", "value", "code"),
    [
        ("--signing-key-item", "../escape.pem", "k8s-bad-secret-key"),
        ("--signing-key-secret", "Bad_Name", "k8s-bad-name"),
        ("--ledger-claim", "UPPER", "k8s-bad-name"),
    ],
)
def test_render_rejects_bad_ledger_and_secret_names(
    k8s_client: Any, tmp_path: Path, flag: str, value: str, code: str
) -> None:
    """A claim or Secret name that is no object name, or a key with '/', is a usage error."""
    extra = [flag, value]
    if flag == "--signing-key-item":
        extra += ["--signing-key-secret", "keys"]
    with pytest.raises(UsageError) as info:
        _render_job(tmp_path, *extra)
    assert info.value.code == code and flag in info.value.message


def test_readme_input_claim_patch_mounts_a_claim_at_in(
    tool: Callable[[str], Path], tmp_path: Path
) -> None:
    """The guide's patch for evidence larger than a ConfigMap (where the too-large hint sends the
    user) applies to the job overlay and puts a read-only claim at /in, valid strictly."""
    text = (ROOT / "deploy" / "README.md").read_text()
    section = text.split("**Evidence larger than a ConfigMap.**", 1)[1].split("\n**", 1)[0]
    (patch,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    shutil.copytree(K8S / "base", tmp_path / "base")
    overlay = tmp_path / "overlays" / "job"
    shutil.copytree(K8S / "overlays" / "job", overlay)
    with (overlay / "kustomization.yaml").open("a") as fh:
        fh.write(patch)
    done = subprocess.run(
        [str(tool("kubectl")), "kustomize", str(overlay)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out.yaml"
    out.write_text(done.stdout)
    pod = job_spec(workload(load_docs(out)))["template"]["spec"]
    (mount,) = [m for m in pod["containers"][0]["volumeMounts"] if m["mountPath"] == "/in"]
    assert mount.get("readOnly") is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert set(volume) == {"name", "persistentVolumeClaim"}, volume
    assert _validate(tool, out, KUBERNETES_VERSIONS[-1]).returncode == 0


def test_rendered_file_is_owner_readable_only(k8s_client: Any, tmp_path: Path) -> None:
    """The rendered YAML packages contracts and evidence: written atomically with mode 0600."""
    _render_job(tmp_path)
    assert (tmp_path / "job.yaml").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["job.yaml"]


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (("--namespace", "a\nb: <x>"), "k8s-bad-namespace"),
        (("--namespace", "ns\n"), "k8s-bad-namespace"),
        (("--namespace", "Prod"), "k8s-bad-namespace"),
        (("--namespace", "x" * 64), "k8s-bad-namespace"),
        (("--namespace", "kube-system"), "k8s-system-namespace"),
        (("--namespace", "default"), "k8s-system-namespace"),
        (("--kind", "cronjob", "--time-zone", "../../etc/passwd"), "k8s-bad-time-zone"),
        (("--kind", "cronjob", "--time-zone", "Mars/Olympus"), "k8s-bad-time-zone"),
        (("--name", "rw\n"), "k8s-bad-name"),
    ],
)
def test_render_refuses_bad_namespace_and_time_zone(
    k8s_client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: Any, code: str
) -> None:
    """A namespace that is no DNS-1123 label, the cluster's own (default, kube-*), or a time
    zone that is not IANA's: exit 64 through the real CLI, nothing written."""
    from ragwarrant.cli import main

    out = tmp_path / "job.yaml"
    contract = str(EXAMPLE / "contract.yaml")
    argv = ["k8s", "render", "--image", DIGEST_IMAGE, "--contract", contract, *extra]
    assert main([*argv, "--out", str(out)]) == 64
    assert code in capsys.readouterr().err and not out.exists()


def test_render_accepts_a_valid_namespace_and_time_zone(k8s_client: Any, tmp_path: Path) -> None:
    """A 63-character label and Europe/Paris are accepted; the Namespace object is written."""
    ns = "n" * 63
    extra = ("--namespace", ns, "--kind", "cronjob", "--time-zone", "Europe/Paris")
    docs = _render_job(tmp_path, *extra)
    assert (docs[0]["kind"], docs[0]["metadata"]["name"]) == ("Namespace", ns)
    assert workload(docs)["spec"]["timeZone"] == "Europe/Paris"
