"""`ragwarrant k8s submit --wait` against a loopback HTTP server replaying Kubernetes API responses.

The official client does the HTTP; the server answers as the API server would (201 with the
object, 409 AlreadyExists, a Job's status, a PodList). No live cluster is involved.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from ragwarrant.errors import InternalError, UsageError

from .conftest import DIGEST_IMAGE, EXAMPLE, K8S, render

NS = "ragwarrant"
JOB_PATH = f"/apis/batch/v1/namespaces/{NS}/jobs"
PVC_PATH = f"/api/v1/namespaces/{NS}/persistentvolumeclaims"


class FakeApi:
    """Records requests; answers creates with 201 (or a planned status) and GETs from a script."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, Any] | None, str]] = []
        self.create_status: dict[str, int] = {}  # path -> status for POST
        self.job_statuses: list[dict[str, Any]] = []  # successive Job .status answers
        self.pods: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def answer(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        if method == "POST":
            status = self.create_status.get(path.split("?")[0], 201)
            if status == 409:
                return 409, {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "AlreadyExists",
                    "code": 409,
                    "message": "already exists",
                }
            return status, body
        if method == "GET" and path.startswith(f"{JOB_PATH}/ragwarrant/status"):
            job_status = (
                self.job_statuses.pop(0) if len(self.job_statuses) > 1 else self.job_statuses[0]
            )
            return 200, {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "ragwarrant", "namespace": NS},
                "status": job_status,
            }
        if method == "GET" and path.startswith(f"/api/v1/namespaces/{NS}/pods"):
            query = parse_qs(urlsplit(path).query)
            if query.get("labelSelector") != ["batch.kubernetes.io/job-name=ragwarrant"]:
                return 400, {"kind": "Status", "apiVersion": "v1", "code": 400, "message": path}
            return 200, {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": self.pods}
        return 404, {"kind": "Status", "apiVersion": "v1", "code": 404, "message": path}


def _pod(
    name: str,
    code: int,
    message: str,
    index: int | None = None,
    finished: str = "2026-11-29T21:00:00Z",
) -> dict[str, Any]:
    annotations = {} if index is None else {"batch.kubernetes.io/job-completion-index": str(index)}
    return {
        "metadata": {"name": name, "namespace": NS, "annotations": annotations},
        "status": {
            "containerStatuses": [
                {
                    "name": "ragwarrant",
                    "image": DIGEST_IMAGE,
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {
                        "terminated": {"exitCode": code, "message": message, "finishedAt": finished}
                    },
                }
            ]
        },
    }


FAILED = {
    "failed": 1,
    "conditions": [{"type": "Failed", "status": "True", "reason": "PodFailurePolicy"}],
}
COMPLETE = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
RUNNING = {"active": 1}


@pytest.fixture()
def api(k8s_client: Any, tmp_path: Path) -> Iterator[tuple[FakeApi, Path]]:
    fake = FakeApi()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            with fake.lock:
                fake.requests.append(
                    (self.command, self.path, body, self.headers.get("Authorization", ""))
                )
                status, payload = fake.answer(self.command, self.path, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "fake",
                "clusters": [
                    {
                        "name": "fake",
                        "cluster": {"server": f"http://127.0.0.1:{server.server_port}"},
                    }
                ],
                "users": [{"name": "fake", "user": {"token": "replay-token"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            }
        )
    )
    try:
        yield fake, kubeconfig
    finally:
        server.shutdown()
        server.server_close()


def _submit(kubeconfig: Path, *extra: str, kind: str = "job") -> int:
    argv = ["--kind", kind, "--image", DIGEST_IMAGE, "--contract", str(EXAMPLE / "contract.yaml")]
    if kind == "indexed":
        argv += [
            "--contract",
            str(K8S / "overlays" / "indexed" / "contracts" / "contract-1.yaml"),
            "--evidence-dir",
            str(EXAMPLE),
        ]
    return render(
        *argv, "--kubeconfig", str(kubeconfig), "--poll-seconds", "0.01", *extra, verb="submit"
    )


def test_submit_wait_returns_the_jobs_exit_code(
    api: tuple[FakeApi, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A Job failed by podFailurePolicy on exit 10: submit --wait exits 10, prints the summary."""
    fake, kubeconfig = api
    fake.job_statuses = [RUNNING, RUNNING, FAILED]
    fake.pods = [_pod("ragwarrant-x1", 10, "REJECT: llama-2-7b-chat=REJECT")]
    assert _submit(kubeconfig, "--wait") == 10
    posts = [(p, b) for m, p, b, _ in fake.requests if m == "POST"]
    assert [p for p, _ in posts] == [
        "/api/v1/namespaces",
        f"/api/v1/namespaces/{NS}/serviceaccounts",
        f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies",
        PVC_PATH,
        f"/api/v1/namespaces/{NS}/configmaps",
        f"/api/v1/namespaces/{NS}/configmaps",
        JOB_PATH,
    ]
    assert {auth for *_, auth in fake.requests} == {"Bearer replay-token"}
    # The Job sent is exactly the one `render` writes.
    out = tmp_path / "rendered.yaml"
    render("--image", DIGEST_IMAGE, "--contract", str(EXAMPLE / "contract.yaml"), "--out", str(out))
    rendered_job = [d for d in yaml.safe_load_all(out.read_text()) if d and d["kind"] == "Job"][0]
    assert posts[-1][1] == rendered_job
    status_polls = [p for m, p, *_ in fake.requests if m == "GET" and p.startswith(JOB_PATH)]
    assert len(status_polls) == 3
    printed = capsys.readouterr().out
    assert "exit 10: REJECT: llama-2-7b-chat=REJECT" in printed


def test_submit_without_wait_creates_and_returns_zero(api: tuple[FakeApi, Path]) -> None:
    """Without --wait, submit creates the objects, polls nothing and exits 0."""
    fake, kubeconfig = api
    assert _submit(kubeconfig) == 0
    assert [m for m, *_ in fake.requests] == ["POST"] * 7


def test_an_existing_ledger_claim_is_reused(api: tuple[FakeApi, Path]) -> None:
    """409 on the ledger's PersistentVolumeClaim: the claim (and the ledger on it) is kept, the
    Job is still created and mounts it."""
    fake, kubeconfig = api
    fake.create_status = {PVC_PATH: 409}
    fake.job_statuses = [COMPLETE]
    fake.pods = [_pod("ragwarrant-ok", 0, "PROMOTE")]
    assert _submit(kubeconfig, "--wait") == 0
    posts = {p: b for m, p, b, _ in fake.requests if m == "POST" and b is not None}
    assert posts[PVC_PATH]["spec"]["accessModes"] == ["ReadWriteMany"]
    volumes = posts[JOB_PATH]["spec"]["template"]["spec"]["volumes"]
    assert {
        "name": "ledger",
        "persistentVolumeClaim": {"claimName": "ragwarrant-ledger"},
    } in volumes


def test_no_ledger_creates_no_claim(api: tuple[FakeApi, Path]) -> None:
    """--no-ledger: no PersistentVolumeClaim is created."""
    fake, kubeconfig = api
    assert _submit(kubeconfig, "--no-ledger") == 0
    assert PVC_PATH not in {p for m, p, *_ in fake.requests if m == "POST"}


def test_indexed_wait_reports_the_first_nonzero_index(api: tuple[FakeApi, Path]) -> None:
    """Index 0 retried (70 then 0) and index 1 REJECT: the latest attempt counts; exit 10."""
    fake, kubeconfig = api
    fake.job_statuses = [FAILED]
    fake.pods = [
        _pod("r-0-b", 0, "PROMOTE", index=0, finished="2026-11-29T21:05:00Z"),
        _pod("r-0-a", 70, "internal", index=0, finished="2026-11-29T21:01:00Z"),
        _pod("r-1-a", 10, "REJECT", index=1),
    ]
    assert _submit(kubeconfig, "--wait", kind="indexed") == 10


def test_existing_service_account_is_kept_but_an_existing_job_is_an_error(
    api: tuple[FakeApi, Path],
) -> None:
    """409 on the ServiceAccount is fine; 409 on the Job is a usage error naming the Job."""
    fake, kubeconfig = api
    fake.create_status = {f"/api/v1/namespaces/{NS}/serviceaccounts": 409, JOB_PATH: 409}
    with pytest.raises(UsageError, match="Job/ragwarrant already exists") as info:
        _submit(kubeconfig)
    assert info.value.code == "k8s-object-exists"


def test_forbidden_is_a_usage_error(api: tuple[FakeApi, Path]) -> None:
    """A 403 from the API server is reported as an RBAC problem, exit 64."""
    fake, kubeconfig = api
    fake.create_status = {"/api/v1/namespaces": 403}
    with pytest.raises(UsageError, match="HTTP 403") as info:
        _submit(kubeconfig)
    assert info.value.code == "k8s-forbidden"


def test_a_server_error_is_an_internal_error(api: tuple[FakeApi, Path]) -> None:
    """A 500 on creating the Job: InternalError k8s-api-error naming the Job (exit 70)."""
    fake, kubeconfig = api
    fake.create_status = {JOB_PATH: 500}
    with pytest.raises(InternalError, match="creating Job/ragwarrant failed: HTTP 500") as info:
        _submit(kubeconfig)
    assert info.value.code == "k8s-api-error"


def test_wait_times_out(api: tuple[FakeApi, Path]) -> None:
    """A Job that never finishes: InternalError k8s-wait-timeout after --timeout."""
    fake, kubeconfig = api
    fake.job_statuses = [RUNNING]
    with pytest.raises(InternalError) as info:
        _submit(kubeconfig, "--wait", "--timeout", "0.2")
    assert info.value.code == "k8s-wait-timeout"


def test_successful_job_exits_zero(api: tuple[FakeApi, Path]) -> None:
    """A Complete Job whose pod exited 0 (PROMOTE): submit --wait exits 0."""
    fake, kubeconfig = api
    fake.job_statuses = [COMPLETE]
    fake.pods = [_pod("ragwarrant-ok", 0, "PROMOTE: gpt-3.5-turbo-0613=PROMOTE")]
    assert _submit(kubeconfig, "--wait") == 0


def test_wait_on_a_cronjob_is_a_usage_error(api: tuple[FakeApi, Path]) -> None:
    """--wait with --kind cronjob is refused before anything is created."""
    fake, kubeconfig = api
    with pytest.raises(UsageError, match="CronJob"):
        _submit(kubeconfig, "--wait", kind="cronjob")
    assert fake.requests == []


def test_missing_kubeconfig_is_a_usage_error(k8s_client: Any, tmp_path: Path) -> None:
    """No kubeconfig file: UsageError k8s-no-kubeconfig with a hint naming KUBECONFIG."""
    with pytest.raises(UsageError) as info:
        _submit(tmp_path / "absent")
    assert info.value.code == "k8s-no-kubeconfig" and "KUBECONFIG" in info.value.hint


def test_submit_without_a_contract_is_refused_as_render_refuses_it(
    api: tuple[FakeApi, Path],
) -> None:
    """--kind indexed and no --contract: k8s-no-contract (64) before anything else, as render."""
    fake, kubeconfig = api
    argv = ("--kind", "indexed", "--image", DIGEST_IMAGE, "--kubeconfig", str(kubeconfig))
    with pytest.raises(UsageError) as info:
        render(*argv, verb="submit")
    assert info.value.code == "k8s-no-contract"
    assert fake.requests == []
