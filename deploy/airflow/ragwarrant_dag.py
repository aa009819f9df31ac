"""Airflow: the ragwarrant gate as a KubernetesPodOperator task, then a branch on the class.

The pod runs ``ragwarrant run --exit-mode status --summary-json /airflow/xcom/return.json``:
every decision exits 0 (an ERROR keeps its code and fails the task), and the machine summary
``{run_class, exit_code, candidates: [...]}`` becomes the task's XCom (``do_xcom_push``), which the
branch reads. Needs apache-airflow-providers-cncf-kubernetes; replace the image and the claim.
Checked offline by tests/deploy/test_airflow.py (syntax, arguments, every class has a branch).
"""

from __future__ import annotations

import pendulum
from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client import models as k8s

IMAGE = (
    "REGISTRY/ragwarrant@sha256:0000000000000000000000000000000000000000000000000000000000000000"
)
INPUT_CLAIM = "ragwarrant-input"
#: The task that follows each run class.
NEXT_TASK = {
    "PROMOTE": "promote",
    "INCONCLUSIVE": "gather_more_evidence",
    "REJECT": "keep_baseline",
    "BLOCK": "fix_evidence",
}
ARGUMENTS = [
    "run",
    "--input",
    "/in",
    "--output",
    "/out",
    "--exit-mode",
    "status",
    "--summary-json",
    "/airflow/xcom/return.json",
]

with DAG(
    dag_id="ragwarrant_gate",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["ragwarrant", "release-gate"],
) as dag:
    decide = KubernetesPodOperator(
        task_id="decide",
        name="ragwarrant",
        image=IMAGE,
        arguments=ARGUMENTS,
        do_xcom_push=True,
        get_logs=True,
        volumes=[
            k8s.V1Volume(
                name="in",
                persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(
                    claim_name=INPUT_CLAIM, read_only=True
                ),
            ),
            k8s.V1Volume(name="out", empty_dir=k8s.V1EmptyDirVolumeSource()),
        ],
        volume_mounts=[
            k8s.V1VolumeMount(name="in", mount_path="/in", read_only=True),
            k8s.V1VolumeMount(name="out", mount_path="/out"),
        ],
        container_resources=k8s.V1ResourceRequirements(
            requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "2Gi"}
        ),
    )

    @task.branch(task_id="route")
    def route(summary: dict[str, object]) -> str:
        """The task id that follows the run class."""
        return NEXT_TASK[str(summary["run_class"])]

    branches = [EmptyOperator(task_id=task_id) for task_id in NEXT_TASK.values()]
    route(decide.output) >> branches
