"""deploy/argo and deploy/airflow, validated offline; the classes stay distinct in each.

Argo Workflows: Hera's pydantic models of the Argo API (build/deploy-tools/argo). Argo Rollouts:
the AnalysisTemplate validator generated from the Argo Rollouts Go API types (npm
@kubernetes-models/argo-rollouts in build/argo/npm, run with node), and kubernetes-validate for
the core objects and the analysis Job. Both come from scripts/fetch-argo-schemas.sh (package
registries only); absent, the tests skip (or fail under RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1).
"""

from __future__ import annotations

import ast
import copy
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragwarrant.cli import main
from ragwarrant.exit_codes import DecisionClass

from .conftest import EXAMPLE, KUBERNETES_VERSIONS, ROOT, TOOLS, missing, restricted_violations

ARGO = ROOT / "deploy" / "argo"
WORKFLOW = ARGO / "workflow-template.yaml"
ROLLOUTS = ARGO / "rollouts-analysis.yaml"
DAG = ROOT / "deploy" / "airflow" / "ragwarrant_dag.py"
ROLLOUTS_VALIDATOR = ROOT / "build" / "argo" / "npm" / "validate-analysis-template.mjs"
HERA = TOOLS / "argo" / "bin" / "python"
DECISIONS = {c.value for c in DecisionClass if c is not DecisionClass.ERROR}


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _hera_errors(doc: dict[str, Any]) -> str:
    """Validate ``doc`` with Hera's WorkflowTemplate model; return the error text ('' = valid)."""
    if not HERA.is_file():
        missing("hera (scripts/fetch-argo-schemas.sh)")
    code = (
        "import json, sys\n"
        "from pydantic import ValidationError\n"
        "from hera.workflows.models import WorkflowTemplate\n"
        "try:\n"
        "    WorkflowTemplate.model_validate(json.load(sys.stdin))\n"
        "except ValidationError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [str(HERA), "-c", code], input=json.dumps(doc), capture_output=True, text=True, check=True
    )
    return done.stdout


def test_workflow_template_validates() -> None:
    """The WorkflowTemplate is a valid Argo Workflows object (Hera's models)."""
    assert _hera_errors(_docs(WORKFLOW)[0]) == ""


def test_workflow_validation_bites() -> None:
    """A template whose container args are not a list is rejected."""
    doc = _docs(WORKFLOW)[0]
    decide = next(t for t in doc["spec"]["templates"] if t["name"] == "decide")
    decide["container"]["args"] = {"not": "a list"}
    assert "args" in _hera_errors(doc)


def test_workflow_branches_on_every_class() -> None:
    """The decide step runs in status mode; every decision class has a branch; class is output."""
    doc = _docs(WORKFLOW)[0]
    templates = {t["name"]: t for t in doc["spec"]["templates"]}
    args = templates["decide"]["container"]["args"]
    assert args[args.index("--exit-mode") + 1] == "status"
    assert args[args.index("--summary-json") + 1] == "/tmp/summary.json"
    branches = [s for group in templates["gate"]["steps"] for s in group if "when" in s]
    covered = {c for s in branches for c in re.findall(r"== (\w+)", s["when"])}
    assert covered == DECISIONS
    outputs = {p["name"] for p in templates["gate"]["outputs"]["parameters"]}
    assert outputs == {"class", "summary"}


@pytest.fixture(scope="module")
def rollouts_errors() -> Callable[[list[dict[str, Any]]], list[str]]:
    """Validate AnalysisTemplates with the Argo Rollouts models: one line per document."""
    if not ROLLOUTS_VALIDATOR.is_file() or shutil.which("node") is None:
        missing("node and the Argo Rollouts models (scripts/fetch-argo-schemas.sh)")

    def validate(docs: list[dict[str, Any]]) -> list[str]:
        done = subprocess.run(
            ["node", str(ROLLOUTS_VALIDATOR)],
            input=json.dumps(docs),
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.splitlines()

    return validate


def _analysis_templates() -> list[dict[str, Any]]:
    return [d for d in _docs(ROLLOUTS) if d["kind"] == "AnalysisTemplate"]


def test_analysis_templates_validate_against_the_rollouts_models(
    rollouts_errors: Callable[[list[dict[str, Any]]], list[str]],
) -> None:
    """Both AnalysisTemplates are valid Argo Rollouts objects."""
    assert rollouts_errors(_analysis_templates()) == ["ok", "ok"]


def test_rollouts_validation_bites(
    rollouts_errors: Callable[[list[dict[str, Any]]], list[str]],
) -> None:
    """A web metric without its required url is rejected."""
    doc = _analysis_templates()[1]
    del doc["spec"]["metrics"][0]["provider"]["web"]["url"]
    [line] = rollouts_errors([doc])
    assert line.startswith("invalid:") and "required property url" in line


def _holds(condition: str, message: str) -> bool:
    """Evaluate an expr condition made of ``result startsWith "X"`` terms joined by ``||``."""
    terms = [t.strip() for t in condition.split("||")]
    prefixes = [re.fullmatch(r'result startsWith "(\w+)"', t) for t in terms]
    assert all(prefixes), condition
    return any(message.startswith(m.group(1)) for m in prefixes if m)


def test_rollouts_keep_promote_inconclusive_reject_distinct() -> None:
    """PROMOTE succeeds, REJECT/BLOCK/ERROR fail, INCONCLUSIVE is neither (Argo: Inconclusive)."""
    decide, reader = _analysis_templates()
    container = decide["spec"]["metrics"][0]["provider"]["job"]["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["args"][-2:] == ["--exit-mode", "status"]
    metric = reader["spec"]["metrics"][0]
    outcome = {}
    for klass in [*DECISIONS, "ERROR"]:
        message = f"{klass}: candidate=... (contract x v1)"
        ok = _holds(metric["successCondition"], message)
        bad = _holds(metric["failureCondition"], message)
        assert not (ok and bad), klass
        outcome[klass] = "Successful" if ok else "Failed" if bad else "Inconclusive"
    assert outcome == {
        "PROMOTE": "Successful",
        "INCONCLUSIVE": "Inconclusive",
        "REJECT": "Failed",
        "BLOCK": "Failed",
        "ERROR": "Failed",
    }


def test_termination_message_starts_with_the_class(tmp_path: Path) -> None:
    """The run's termination message, which the web metric reads, begins with the run class."""
    message = tmp_path / "termination-log"
    main(
        [
            "run",
            "--input",
            str(EXAMPLE),
            "--output",
            str(tmp_path / "out"),
            "--termination-message-path",
            str(message),
        ]
    )
    assert message.read_text().startswith("PROMOTE: ")


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_objects_and_the_analysis_job_validate(
    tool: Callable[[str], Path], tmp_path: Path, version: str
) -> None:
    """The RBAC objects and the analysis Job (args filled in) pass kubernetes-validate --strict."""
    core = [d for d in _docs(ROLLOUTS) if d["kind"] != "AnalysisTemplate"]
    job_spec = _analysis_templates()[0]["spec"]["metrics"][0]["provider"]["job"]["spec"]
    text = json.dumps(job_spec)
    for name, value in {
        "canary-hash": "abc123",
        "image": "r/ragwarrant:1",
        "input-claim": "in",
    }.items():
        text = text.replace("{{args." + name + "}}", value)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "ragwarrant-decide"},
        "spec": json.loads(text),
    }
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([*core, job]))
    done = subprocess.run(
        [str(tool("kubernetes-validate")), "--strict", "--quiet", "-k", version, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)


def _module_constant(tree: ast.Module, name: str) -> Any:
    node = next(
        n
        for n in tree.body
        if isinstance(n, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == name
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        )
    )
    assert node.value is not None
    return ast.literal_eval(node.value)


def test_airflow_dag_runs_status_mode_and_routes_every_class() -> None:
    """The DAG compiles, its pod pushes the summary as XCom, and every class has a branch."""
    source = DAG.read_text()
    tree = ast.parse(source)
    compile(tree, str(DAG), "exec")
    args = _module_constant(tree, "ARGUMENTS")
    assert args[args.index("--exit-mode") + 1] == "status"
    assert args[args.index("--summary-json") + 1] == "/airflow/xcom/return.json"
    routes = _module_constant(tree, "NEXT_TASK")
    assert set(routes) == DECISIONS and len(set(routes.values())) == len(routes)
    assert "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator" in (
        source
    )
    assert "do_xcom_push=True" in source


# A port of how Argo Rollouts turns a Rollout's analysis step into resolved metrics
# (argoproj/argo-rollouts: utils/analysis/factory.go BuildArgumentsForRolloutAnalysisRun,
# utils/analysis/helpers.go MergeArgs/ResolveArgs, analysis/analysis.go resolveArgs,
# utils/template/template.go ResolveQuotedArgs). Errors carry the controller's messages.
class RolloutsError(Exception):
    """The AnalysisRun would be created in error (or not at all)."""


def _field_path(obj: dict[str, Any], path: str) -> str:
    """k8s.io/kubernetes/pkg/fieldpath.ExtractFieldPathAsString, for the metadata paths."""
    meta = obj["metadata"]
    subscript = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if subscript:
        return str(meta.get(subscript.group(1), {}).get(subscript.group(2), ""))
    if path in ("metadata.name", "metadata.namespace", "metadata.uid"):
        return str(meta.get(path.split(".")[1], ""))
    raise RolloutsError(f"unsupported fieldPath: {path}")


def _rollout_arguments(
    args: list[dict[str, Any]], rollout: dict[str, Any], latest_hash: str
) -> list[dict[str, Any]]:
    """BuildArgumentsForRolloutAnalysisRun: every argument leaves with a value."""
    out = []
    for arg in args:
        value = arg.get("value", "")
        source = arg.get("valueFrom") or {}
        if source.get("podTemplateHashValue") == "Latest":
            value = latest_hash
        elif "fieldRef" in source:
            value = _field_path(rollout, source["fieldRef"]["fieldPath"])
        out.append({"name": arg["name"], "value": value})
    return out


def _merge_args(
    incoming: list[dict[str, Any]], template: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """MergeArgs then ResolveArgs: an argument with neither value nor valueFrom is an error."""
    merged = copy.deepcopy(template)
    for arg in incoming:
        for target in merged:
            if target["name"] == arg["name"]:
                if arg.get("value") is not None:
                    target["value"] = arg["value"]
                elif arg.get("valueFrom") is not None:
                    target["valueFrom"] = arg["valueFrom"]
    for arg in merged:
        if arg.get("value") is None and arg.get("valueFrom") is None:
            raise RolloutsError(f"args.{arg['name']} was not resolved")
    return merged


def _resolve_metric(
    metric: dict[str, Any], args: list[dict[str, Any]], secrets: dict[tuple[str, str], str]
) -> dict[str, Any]:
    """The controller's resolveArgs (secretKeyRef only) then ResolveQuotedArgs."""
    values = {}
    for arg in args:
        ref = (arg.get("valueFrom") or {}).get("secretKeyRef")
        value = secrets[(ref["name"], ref["key"])] if ref else arg.get("value")
        if value is None:
            raise RolloutsError(f'argument "{arg["name"]}" was not supplied')
        values[f"args.{arg['name']}"] = json.dumps(value)[1:-1]

    def substitute(match: re.Match[str]) -> str:
        tag = match.group(1).strip()
        if tag not in values:
            raise RolloutsError(f"failed to resolve {{{{{match.group(1)}}}}}")
        return values[tag]

    return json.loads(re.sub(r"\{\{(.*?)\}\}", substitute, json.dumps(metric)))


def _readme_analysis_steps() -> list[dict[str, Any]]:
    """The canary steps of deploy/argo/README.md's Rollout snippet that run an analysis."""
    block = re.search(r"```yaml\n(.*?)```", (ARGO / "README.md").read_text(), re.S)
    assert block is not None
    steps = yaml.safe_load(block.group(1))["strategy"]["canary"]["steps"]
    return [s["analysis"] for s in steps if "analysis" in s]


def _run_analysis(step: dict[str, Any], templates: dict[str, dict[str, Any]]) -> list[Any]:
    """Resolve every metric of one analysis step for a Rollout in namespace ``shop``."""
    rollout = {"metadata": {"name": "checkout", "namespace": "shop"}}
    (ref,) = step["templates"]
    template = templates[ref["templateName"]]
    incoming = _rollout_arguments(step.get("args", []), rollout, latest_hash="6d4f8b9c7")
    args = _merge_args(incoming, template["spec"].get("args", []))
    secrets = {("ragwarrant-class-reader-token", "token"): "t0ken"}
    return [_resolve_metric(m, args, secrets) for m in template["spec"]["metrics"]]


def test_rollout_steps_resolve_every_analysis_argument() -> None:
    """The README's Rollout steps give both AnalysisTemplates every argument the way the
    controller resolves them: the namespace from the Rollout, the token from its Secret."""
    templates = {t["metadata"]["name"]: t for t in _analysis_templates()}
    steps = _readme_analysis_steps()
    assert [s["templates"][0]["templateName"] for s in steps] == list(templates)
    (decide,) = _run_analysis(steps[0], templates)
    job = decide["provider"]["job"]["spec"]["template"]
    assert job["metadata"]["labels"]["ragwarrant.io/canary-hash"] == "6d4f8b9c7"
    (reader,) = _run_analysis(steps[1], templates)
    web = reader["provider"]["web"]
    assert "/namespaces/shop/pods?" in web["url"] and web["url"].endswith("%3D6d4f8b9c7")
    assert web["headers"] == [{"key": "Authorization", "value": "Bearer t0ken"}]
    assert "{{" not in json.dumps([decide, reader])


def test_rollouts_port_refuses_a_field_ref_inside_the_template() -> None:
    """A template that declares its own fieldRef argument (what the controller cannot resolve)
    errors, and so does an argument nobody passes."""
    templates = {t["metadata"]["name"]: t for t in _analysis_templates()}
    step = copy.deepcopy(_readme_analysis_steps()[1])
    template = templates["ragwarrant-class"]
    namespace = next(a for a in template["spec"]["args"] if a["name"] == "namespace")
    namespace["valueFrom"] = {"fieldRef": {"fieldPath": "metadata.namespace"}}
    step["args"] = [a for a in step["args"] if a["name"] != "namespace"]
    with pytest.raises(RolloutsError, match='argument "namespace" was not supplied'):
        _run_analysis(step, templates)
    del namespace["valueFrom"]
    with pytest.raises(RolloutsError, match="args.namespace was not resolved"):
        _run_analysis(step, templates)


def _workflow_pods(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any], list[Any], list[Any]]]:
    """Each container template's pod as Argo builds it: the workflow-level securityContext, the
    template's container and the workflow's volumes (Argo mounts them all on every pod)."""
    spec = doc["spec"]
    pods = []
    for t in spec["templates"]:
        if "container" in t:
            pod = {"securityContext": t.get("securityContext", spec.get("securityContext", {}))}
            container = {"name": t["name"], **t["container"]}
            pods.append((t["name"], pod, [container], spec.get("volumes", [])))
    return pods


def test_workflow_template_meets_restricted() -> None:
    """Every template runs under Pod Security "restricted", read-only root, named command."""
    doc = _docs(WORKFLOW)[0]
    pods = _workflow_pods(doc)
    assert [name for name, *_ in pods] == ["decide", "classify", "announce"]
    for name, pod, (container,), volumes in pods:
        assert restricted_violations(pod, [container], volumes) == [], name
        assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
        assert container["command"], name
        assert set(container["resources"]["limits"]) >= {"memory"}, name
    assert doc["spec"]["automountServiceAccountToken"] is False
    assert doc["spec"]["executor"]["serviceAccountName"]


def test_restricted_check_bites() -> None:
    """Dropping the seccomp profile, allowing escalation or a hostPath volume is caught."""
    doc = _docs(WORKFLOW)[0]
    _, pod, (container,), volumes = _workflow_pods(doc)[0]
    del pod["securityContext"]["seccompProfile"]
    del container["securityContext"]["seccompProfile"]
    container["securityContext"]["allowPrivilegeEscalation"] = True
    volumes = [*volumes, {"name": "host", "hostPath": {"path": "/"}}]
    assert restricted_violations(pod, [container], volumes) == [
        "volume host: type not allowed",
        "decide: allowPrivilegeEscalation is not false",
        "decide: seccompProfile is not RuntimeDefault or Localhost",
    ]


def test_workflow_template_mounts_the_ledger_and_ships_a_network_policy() -> None:
    """decide appends to the ledger on its claim, writes /tmp to an emptyDir; the
    NetworkPolicy selects the pods' labels, denies ingress and allows only API-server egress."""
    docs = _docs(WORKFLOW)
    spec = docs[0]["spec"]
    decide = next(t for t in spec["templates"] if t["name"] == "decide")["container"]
    args, mounts = decide["args"], {m["mountPath"]: m["name"] for m in decide["volumeMounts"]}
    assert args[args.index("--ledger") + 1] == "/ledger/ledger.jsonl"
    volumes = {v["name"]: v for v in spec["volumes"]}
    ledger = volumes[mounts["/ledger"]]["persistentVolumeClaim"]["claimName"]
    assert ledger == "{{workflow.parameters.ledger-claim}}"
    assert "emptyDir" in volumes[mounts["/tmp"]]
    (netpol,) = [d for d in docs if d["kind"] == "NetworkPolicy"]
    selector = netpol["spec"]["podSelector"]["matchLabels"]
    assert selector.items() <= spec["podMetadata"]["labels"].items()
    assert sorted(netpol["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in netpol["spec"]
    assert netpol["spec"]["egress"] == [
        {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]}
    ]
    (role,) = [d for d in docs if d["kind"] == "Role"]
    assert role["rules"] == [
        {"apiGroups": ["argoproj.io"], "resources": ["workflowtaskresults"],
         "verbs": ["create", "patch"]}
    ]  # fmt: skip


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_workflow_template_core_objects_validate(
    tool: Callable[[str], Path], tmp_path: Path, version: str
) -> None:
    """The NetworkPolicy and the executor's RBAC shipped with the template pass
    kubernetes-validate --strict."""
    core = [d for d in _docs(WORKFLOW) if d["kind"] != "WorkflowTemplate"]
    assert [d["kind"] for d in core] == ["NetworkPolicy", "ServiceAccount", "Role", "RoleBinding"]
    path = tmp_path / "core.yaml"
    path.write_text(yaml.safe_dump_all(core))
    done = subprocess.run(
        [str(tool("kubernetes-validate")), "--strict", "--quiet", "-k", version, str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
