"""deploy/argo and deploy/airflow, validated offline; the classes stay distinct in each.

Argo Workflows: Hera's pydantic models of the Argo API (build/deploy-tools/argo). Argo Rollouts:
the AnalysisTemplate validator generated from the Argo Rollouts Go API types (npm
@kubernetes-models/argo-rollouts in build/argo/npm, run with node), and kubernetes-validate for
the core objects and the analysis Job. Both come from scripts/fetch-argo-schemas.sh (package
registries only); absent, the tests skip (or fail under RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1).
"""

from __future__ import annotations

import ast
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

from .conftest import EXAMPLE, KUBERNETES_VERSIONS, ROOT, TOOLS, missing

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
