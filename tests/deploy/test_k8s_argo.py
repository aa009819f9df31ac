"""`k8s render --engine argo`: an Argo Workflow fanning out with the Indexed Job's own pod.

The Workflow is validated offline with Hera's pydantic models of the Argo API, strictly
(scripts/argo/validate_workflow.py, run by the Hera venv of scripts/fetch-argo-schemas.sh; absent,
the tests skip, or fail under RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1); the other objects with
kubernetes-validate --strict, like every rendered manifest.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragwarrant.k8s import FAIL_JOB_EXIT_CODES, MIN_KUBERNETES_VERSION

from .conftest import (
    DIGEST_IMAGE,
    EXAMPLE,
    K8S,
    ROOT,
    TOOLS,
    job_spec,
    load_docs,
    missing,
    render,
    restricted_violations,
    workload,
)

HERA = TOOLS / "argo" / "bin" / "python"
VALIDATE_WORKFLOW = ROOT / "scripts" / "argo" / "validate_workflow.py"
STRICT_CONTRACT = K8S / "overlays" / "indexed" / "contracts" / "contract-1.yaml"


def _errors(workflow: dict[str, Any]) -> list[str]:
    """Validate ``workflow`` with Hera's models (strict round trip); the errors, [] when valid."""
    if not HERA.is_file():
        missing("hera (scripts/fetch-argo-schemas.sh)")
    done = subprocess.run(
        [str(HERA), str(VALIDATE_WORKFLOW)],
        input=json.dumps([workflow]), capture_output=True, text=True, check=True,
    )  # fmt: skip
    (line,) = done.stdout.splitlines()
    return [] if line == "ok" else line.removeprefix("invalid: ").split("; ")


def _render(tmp_path: Path, *argv: str, engine: str = "argo") -> Path:
    out = tmp_path / f"{engine}.yaml"
    assert render("--image", DIGEST_IMAGE, "--engine", engine, *argv, "--out", str(out)) == 0
    return out


def _split(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    docs = load_docs(path)
    (workflow,) = [d for d in docs if d["kind"] == "Workflow"]
    return workflow, [d for d in docs if d["kind"] != "Workflow"]


CONFIGMAP_ARGV = ["--evidence-dir", str(EXAMPLE), "--contract", str(EXAMPLE / "contract.yaml"),
                  "--contract", str(STRICT_CONTRACT)]  # fmt: skip


def test_workflow_validates_against_the_argo_models_and_the_rest_strictly(
    k8s_client: Any, tmp_path: Path, tool: Callable[[str], Path]
) -> None:
    """The Workflow passes Hera's Argo models (strict); Namespace, ServiceAccounts, RBAC,
    NetworkPolicy, ledger claim and ConfigMaps pass kubernetes-validate --strict."""
    workflow, rest = _split(_render(tmp_path, *CONFIGMAP_ARGV))
    assert _errors(workflow) == []
    others = tmp_path / "others.yaml"
    others.write_text(yaml.safe_dump_all(rest))
    done = subprocess.run(
        [str(tool("kubernetes-validate")), "--strict", "--quiet", "-k",
         f"{MIN_KUBERNETES_VERSION}.0", str(others)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_argo_validation_bites(k8s_client: Any, tmp_path: Path) -> None:
    """A misspelt field in the decide template, a wrong type, or a value that only a lax parser
    would coerce, fails the validation, named by its path."""
    workflow, _ = _split(_render(tmp_path, *CONFIGMAP_ARGV))
    assert _errors(workflow) == []
    bad = copy.deepcopy(workflow)
    bad["spec"]["templates"][1]["retryStrategy"]["limitt"] = 2
    assert _errors(bad) == [".spec.templates[1].retryStrategy.limitt: unknown field"]
    bad = copy.deepcopy(workflow)
    bad["spec"]["parallelism"] = "ten"
    assert [e.split(":")[0] for e in _errors(bad)] == ["spec.parallelism"]
    bad = copy.deepcopy(workflow)
    bad["spec"]["parallelism"] = "10"
    assert _errors(bad) == [".spec.parallelism: '10' is read as 10 (wrong type)"]


def test_workflow_shares_the_indexed_job_pod(k8s_client: Any, tmp_path: Path) -> None:
    """The decide template's container, security context, volumes, labels and per-pod deadline
    are the Indexed Job's; only the item, the run prefix and the Job-only env differ."""
    workflow, _ = _split(_render(tmp_path, *CONFIGMAP_ARGV))
    job = workload(load_docs(_render(tmp_path, "--kind", "indexed", *CONFIGMAP_ARGV,
                                     engine="kubernetes")))  # fmt: skip
    pod = job_spec(job)["template"]
    spec = workflow["spec"]
    decide = next(t for t in spec["templates"] if t["name"] == "decide")
    job_container = copy.deepcopy(pod["spec"]["containers"][0])
    argo_container = copy.deepcopy(decide["container"])
    assert argo_container.pop("command") == ["ragwarrant"]
    argo_args, job_args = argo_container.pop("args"), job_container.pop("args")
    assert argo_args[:5] == [
        "run", "--input", "/in/{{inputs.parameters.item}}", "--output",
        "/out/{{workflow.name}}/{{workflow.uid}}/{{inputs.parameters.item}}",
    ]  # fmt: skip
    assert argo_args[5:] == job_args[5:] and argo_args[5:7] == ["--ledger", "/ledger/ledger.jsonl"]
    job_env = job_container.pop("env")
    assert argo_container.pop("env") == [e for e in job_env if e["name"] == "TMPDIR"]
    assert argo_container == job_container
    assert spec["volumes"] == pod["spec"]["volumes"]
    assert spec["securityContext"] == pod["spec"]["securityContext"]
    assert spec["podMetadata"]["labels"] == pod["metadata"]["labels"]
    assert decide["activeDeadlineSeconds"] == str(pod["spec"]["activeDeadlineSeconds"])
    assert spec["automountServiceAccountToken"] is False
    assert spec["serviceAccountName"] == pod["spec"]["serviceAccountName"]


def test_workflow_fans_out_over_every_contract_and_never_retries_a_decision(
    k8s_client: Any, tmp_path: Path
) -> None:
    """withItems lists each contract's directory; failFast is off; the retry expression
    excludes every final exit code (a REJECT is an answer) and nothing else."""
    workflow, _ = _split(_render(tmp_path, *CONFIGMAP_ARGV))
    fan_out = next(t for t in workflow["spec"]["templates"] if t["name"] == "fan-out")
    ((step,),) = fan_out["steps"]
    assert step["withItems"] == ["0", "1"] and fan_out["failFast"] is False
    decide = next(t for t in workflow["spec"]["templates"] if t["name"] == "decide")
    expression = decide["retryStrategy"]["expression"]
    listed = {int(c) for c in expression.split("[")[1].split("]")[0].split(",")}
    assert listed == set(FAIL_JOB_EXIT_CODES) and expression.startswith("!(")
    assert workflow["metadata"]["generateName"] == "ragwarrant-"


def test_workflow_fans_out_by_name_from_an_input_claim(k8s_client: Any, tmp_path: Path) -> None:
    """On an input claim, Argo items are the directories' names (any names, unlike the Job)."""
    root = tmp_path / "volume"
    for name in ("team-b", "team-a"):
        shutil.copytree(EXAMPLE, root / name)
    workflow, rest = _split(_render(tmp_path, "--input-claim", "c", "--input-root", str(root)))
    assert _errors(workflow) == []
    fan_out = next(t for t in workflow["spec"]["templates"] if t["name"] == "fan-out")
    assert fan_out["steps"][0][0]["withItems"] == ["team-a", "team-b"]
    assert not [d for d in rest if d["kind"] == "ConfigMap"]
    (volume,) = [v for v in workflow["spec"]["volumes"] if v["name"] == "input"]
    assert volume["persistentVolumeClaim"] == {"claimName": "c", "readOnly": True}


def test_executor_gets_only_what_argo_needs(k8s_client: Any, tmp_path: Path) -> None:
    """The executor's ServiceAccount may create and patch workflowtaskresults only, and the
    NetworkPolicy lets pods reach the API server's ports, nothing else."""
    workflow, rest = _split(_render(tmp_path, *CONFIGMAP_ARGV))
    (role,) = [d for d in rest if d["kind"] == "Role"]
    assert role["rules"] == [
        {"apiGroups": ["argoproj.io"], "resources": ["workflowtaskresults"],
         "verbs": ["create", "patch"]}
    ]  # fmt: skip
    (binding,) = [d for d in rest if d["kind"] == "RoleBinding"]
    assert binding["subjects"][0]["name"] == workflow["spec"]["executor"]["serviceAccountName"]
    (netpol,) = [d for d in rest if d["kind"] == "NetworkPolicy"]
    assert "ingress" not in netpol["spec"]
    assert netpol["spec"]["egress"] == [
        {"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}
    ]


@pytest.mark.parametrize("count", [1, 10000])
def test_workflow_of_many_items_validates(k8s_client: Any, tmp_path: Path, count: int) -> None:
    """--completions N on a claim: N items, parallelism bounded by the default, still valid."""
    workflow, _ = _split(_render(tmp_path, "--input-claim", "c", "--completions", str(count)))
    fan_out = next(t for t in workflow["spec"]["templates"] if t["name"] == "fan-out")
    assert fan_out["steps"][0][0]["withItems"] == [str(i) for i in range(count)]
    assert _errors(workflow) == []


def test_argo_engine_refuses_a_cronjob(k8s_client: Any) -> None:
    """--engine argo --kind cronjob: a usage error pointing to CronWorkflow, nothing written."""
    from ragwarrant.errors import UsageError

    with pytest.raises(UsageError) as info:
        render("--image", DIGEST_IMAGE, "--engine", "argo", "--kind", "cronjob", *CONFIGMAP_ARGV)
    assert info.value.code == "k8s-argo-cronjob" and "CronWorkflow" in info.value.hint


@pytest.mark.parametrize("kind", [[], ["--kind", "job"], ["--kind", "indexed"]])
def test_workflow_deadline_scales_with_the_fan_out_whatever_the_kind(
    k8s_client: Any, tmp_path: Path, kind: list[str]
) -> None:
    """The README's `--engine argo --input-claim` (no --kind) gets a Workflow deadline covering
    every wave of every item's attempts, as --kind indexed does, not a Job's 3600 s."""
    workflow, _ = _split(_render(tmp_path, *kind, "--input-claim", "c", "--completions", "10000",
                                 "--pod-deadline-seconds", "600"))  # fmt: skip
    spec = workflow["spec"]
    decide = next(t for t in spec["templates"] if t["name"] == "decide")
    attempts = int(decide["retryStrategy"]["limit"]) + 1
    assert spec["activeDeadlineSeconds"] == 10000 // spec["parallelism"] * attempts * 600


def test_job_deadline_defaults_to_the_pod_deadline(k8s_client: Any, tmp_path: Path) -> None:
    """A Job (one pod) gets --pod-deadline-seconds, 3600 s by default, unless given."""
    argv = ["--kind", "job", *CONFIGMAP_ARGV[:4]]
    for extra, expected in (([], 3600), (["--pod-deadline-seconds", "900"], 900),
                            (["--active-deadline-seconds", "120"], 120)):  # fmt: skip
        docs = load_docs(_render(tmp_path, *argv, *extra, engine="kubernetes"))
        assert job_spec(workload(docs))["activeDeadlineSeconds"] == expected, extra


def test_status_size_estimate_needs_compression_then_offloading(k8s_client: Any) -> None:
    """10^3 items pass MAX_WORKFLOW_SIZE plainly only compressed; 3x10^4 need offloading even
    compressed; 10 items fit as they are."""
    from ragwarrant.k8s import RenderOptions, WorkloadKind
    from ragwarrant.k8s.argo import MAX_WORKFLOW_SIZE, build_argo_manifests, estimate_status_size

    def size(n: int) -> Any:
        options = RenderOptions(kind=WorkloadKind.INDEXED, image=DIGEST_IMAGE, contracts=(),
                                input_claim="c", input_names=tuple(map(str, range(n))))  # fmt: skip
        return estimate_status_size(build_argo_manifests(options)[-1])

    small, thousand, many = size(10), size(1000), size(30000)
    assert small.plain < MAX_WORKFLOW_SIZE
    assert thousand.compressed < MAX_WORKFLOW_SIZE < thousand.plain and not thousand.needs_offload
    assert many.needs_offload and many.compressed > MAX_WORKFLOW_SIZE
    assert thousand.plain < many.plain / 25  # grows with the items


def test_render_warns_past_the_workflow_size(
    k8s_client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The render warns on stderr once the status passes MAX_WORKFLOW_SIZE, naming offloading
    when even the compressed status does not fit; a small fan-out renders silently."""
    _render(tmp_path, "--input-claim", "c", "--completions", "10")
    assert capsys.readouterr().err == ""
    _render(tmp_path, "--input-claim", "c", "--completions", "2000")
    assert "only compressed" in capsys.readouterr().err
    _render(tmp_path, "--input-claim", "c", "--completions", "30000")
    err = capsys.readouterr().err
    assert "MAX_WORKFLOW_SIZE" in err and "nodeStatusOffLoad" in err


def test_rendered_workflow_meets_restricted(k8s_client: Any, tmp_path: Path) -> None:
    """The rendered Workflow's decide pod passes the Pod Security "restricted" rules, with a
    read-only root and a named command."""
    workflow, _ = _split(_render(tmp_path, *CONFIGMAP_ARGV))
    spec = workflow["spec"]
    decide = next(t for t in spec["templates"] if t["name"] == "decide")
    container = {"name": "decide", **decide["container"]}
    pod = {"securityContext": spec["securityContext"]}
    assert restricted_violations(pod, [container], spec["volumes"]) == []
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["command"] == ["ragwarrant"]
