"""An Argo Workflow that fans out over contracts with the Indexed Job's own pod.

``ragwarrant k8s render --engine argo`` calls ``build_argo_manifests``. The Workflow's one
``decide`` template carries the container, security contexts, volumes, per-pod deadline and
labels of ``render.pod_template`` for an Indexed Job; only what Argo names differently changes:
the item (``{{inputs.parameters.item}}``) replaces ``$(JOB_COMPLETION_INDEX)``, and the run prefix
is ``{{workflow.name}}/{{workflow.uid}}`` instead of the Job's name and uid. A ``withItems`` step
runs it once per contract directory (an index, or any name on an input claim), at most
``parallelism`` at a time.

Argo's own containers change two things around the pod (Argo Workflows' documentation, "Workflow
RBAC" and "Service Account Secrets"): its ``wait`` container reports each step to the API
server, so the NetworkPolicy allows egress to TCP 443 and 6443 (the job container itself makes no
call), and the pod's token is not mounted (``automountServiceAccountToken: false``) but the
executor gets its own ServiceAccount ``<name>-executor``, allowed only to create and patch
``workflowtaskresults``.

A decision (10, 11, 12) or configuration exit code is never retried (``retryStrategy``'s
``expression``); an internal error (70), or a pod lost without an exit code, is retried up to
``backoff_limit`` times, as ``backoffLimitPerIndex`` does for the Job.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ragwarrant.k8s.options import FAIL_JOB_EXIT_CODES, RenderOptions, WorkloadKind
from ragwarrant.k8s.render import RUN_PREFIX, pod_template, require_kubernetes, supporting_objects

ARGO_API_VERSION = "argoproj.io/v1alpha1"
ITEM = "{{inputs.parameters.item}}"
ARGO_RUN_PREFIX = "{{workflow.name}}/{{workflow.uid}}"
# The Job's own environment: the Job controller's labels and the completion index (absent here).
_JOB_ONLY_ENV = ("JOB_COMPLETION_INDEX", "JOB_NAME", "JOB_UID")
# Ports of the API server the executor's wait container reports to.
_API_SERVER_PORTS = (443, 6443)
# The workflow controller's default MAX_WORKFLOW_SIZE, bytes (argo-workflows
# workflow/packer/packer.go: 1024 * 1024; etcd refuses larger objects). Past it the controller
# gzips status.nodes into status.compressedNodes; past it again it needs node-status offloading.
MAX_WORKFLOW_SIZE = 1024 * 1024


@dataclass(frozen=True)
class StatusSize:
    """Estimated size of a finished Workflow, bytes, as the controller measures it.

    Attributes:
        plain: the Workflow's JSON with ``status.nodes`` written out.
        compressed: the same with the nodes in ``status.compressedNodes`` (gzip, base64).
        limit: ``MAX_WORKFLOW_SIZE``.
    """

    plain: int
    compressed: int
    limit: int = MAX_WORKFLOW_SIZE

    @property
    def needs_offload(self) -> bool:
        """True when even the compressed status exceeds the limit."""
        return self.compressed > self.limit


def _workflow(k: Any, options: RenderOptions) -> dict[str, Any]:
    """Return the Workflow (a dict): the ``fan-out`` step over the items and the ``decide``
    template, the Indexed Job's pod with Argo's item and run prefix."""
    pod = k.ApiClient().sanitize_for_serialization(pod_template(k, options))
    spec = pod["spec"]
    (container,) = spec["containers"]
    container = {
        **container,
        # Argo's emissary executor runs `command`; without one it asks the registry for the
        # image's ENTRYPOINT. Set it to the image's own.
        "command": ["ragwarrant"],
        # Argo's item and run prefix in place of the Job's.
        "args": [
            a.replace(RUN_PREFIX, ARGO_RUN_PREFIX).replace("$(JOB_COMPLETION_INDEX)", ITEM)
            for a in container["args"]
        ],
        "env": [e for e in container["env"] if e["name"] not in _JOB_ONLY_ENV],
    }
    never_retried = ", ".join(str(c) for c in FAIL_JOB_EXIT_CODES)
    decide = {  # the Indexed Job's container and pod-level settings
        "name": "decide",
        "inputs": {"parameters": [{"name": "item"}]},
        "metadata": {"labels": pod["metadata"]["labels"]},
        # Both fields are IntOrString; Argo's JSON Schema admits only the string form.
        "activeDeadlineSeconds": str(spec["activeDeadlineSeconds"]),
        "retryStrategy": {
            "limit": str(options.backoff_limit),
            "retryPolicy": "Always",
            # lastRetry.exitCode is a string ("-1" when the pod ended without one).
            "expression": f"!(asInt(lastRetry.exitCode) in [{never_retried}])",
        },
        "container": container,
    }
    fan_out = {
        "name": "fan-out",
        # Every contract runs whatever the others decide (a REJECT fails its own step only).
        "failFast": False,
        "steps": [
            [
                {
                    "name": "decide",
                    "template": "decide",
                    "arguments": {"parameters": [{"name": "item", "value": "{{item}}"}]},
                    "withItems": options.index_dirs,
                }
            ]
        ],
    }
    metadata: dict[str, Any] = {
        "generateName": f"{options.name}-",
        "labels": pod["metadata"]["labels"],
    }
    if options.namespace is not None:
        metadata["namespace"] = options.namespace
    return {
        "apiVersion": ARGO_API_VERSION,
        "kind": "Workflow",
        "metadata": metadata,
        "spec": {
            "entrypoint": "fan-out",
            "serviceAccountName": spec["serviceAccountName"],
            "automountServiceAccountToken": False,
            "executor": {"serviceAccountName": f"{options.name}-executor"},
            "securityContext": spec["securityContext"],
            "podMetadata": {"labels": pod["metadata"]["labels"]},
            "parallelism": min(options.parallelism, options.index_count),
            "activeDeadlineSeconds": options.job_deadline_seconds,
            "ttlStrategy": {"secondsAfterCompletion": options.ttl_seconds_after_finished},
            "podGC": {"strategy": "OnPodSuccess"},
            "volumes": spec["volumes"],
            "templates": [fan_out, decide],
        },
    }


def _node(
    name: str, kind: str, item: str, position: int, children: list[str]
) -> tuple[str, dict[str, Any]]:
    """Return one node of ``status.nodes`` (id and NodeStatus), with the fields Argo fills in:
    one item starting every 10 s, each pod running 60-120 s on one of 16 hosts, so that the
    compression is not flattered by identical nodes."""
    workflow = name.split("[", 1)[0]
    seed = zlib.crc32(item.encode())
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=10 * position)
    seconds = 60 + seed % 61
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    node_id = f"{workflow}-{zlib.crc32(name.encode())}"
    node: dict[str, Any] = {
        "id": node_id, "name": name, "displayName": name.split(".", 1)[-1], "type": kind,
        "templateName": "decide", "templateScope": f"local/{workflow}", "phase": "Failed",
        "boundaryID": workflow, "message": "Error (exit code 10)",
        "startedAt": start.strftime(stamp),
        "finishedAt": (start + timedelta(seconds=seconds)).strftime(stamp),
        "progress": "1/1", "resourcesDuration": {"cpu": seconds // 2, "memory": seconds},
        "inputs": {"parameters": [{"name": "item", "value": item}]},
        "outputs": {"exitCode": "10"},
    }  # fmt: skip
    if children:
        node["children"] = children
    else:
        node |= {"hostNodeName": f"pool-1-{seed % 16:08x}-x9y8", "taskResultSynced": True}
    return node_id, node


def estimate_status_size(workflow: dict[str, Any]) -> StatusSize:
    """Estimate the size of ``workflow`` once every item has run once (one attempt each).

    Each item adds a Retry node and its Pod node to ``status.nodes`` (argo-workflows
    ``NodeStatus``); a retried attempt adds one more Pod node, so retries make it larger.
    The controller compares the whole object's JSON with ``MAX_WORKFLOW_SIZE`` and, past it,
    gzips the nodes into ``status.compressedNodes`` (workflow/packer/packer.go).

    Returns:
        The plain and compressed sizes, bytes.
    """
    name = "ragwarrant-x7k2q"
    (step,) = workflow["spec"]["templates"][0]["steps"][0]
    nodes: dict[str, Any] = {}
    for position, item in enumerate(step["withItems"]):
        retry = f"{name}[0].decide({position}:{item})"
        pod_id, pod = _node(f"{retry}(0)", "Pod", item, position, [])
        retry_id, retry_node = _node(retry, "Retry", item, position, [pod_id])
        nodes |= {retry_id: retry_node, pod_id: pod}
    group_id, group = _node(f"{name}[0]", "StepGroup", "", 0, ["-"])
    group["children"] = [i for i, n in nodes.items() if n["type"] == "Retry"]
    nodes[group_id] = group
    spec = len(json.dumps(workflow, separators=(",", ":")))
    plain = json.dumps(nodes, separators=(",", ":")).encode()
    packed = base64.b64encode(zlib.compress(plain, 6))
    return StatusSize(plain=spec + len(plain), compressed=spec + len(packed))


def build_argo_manifests(options: RenderOptions) -> list[Any]:
    """Return the objects of an Argo fan-out over the contracts, in apply order.

    Returns:
        The objects of ``build_manifests`` except the Job (the NetworkPolicy allowing egress to
        the API server only), the executor's ServiceAccount, Role and RoleBinding, then the
        Workflow (a dict: Argo has no model in the kubernetes client). Item ``x`` reads
        ``/in/<x>/`` and writes ``/out/<workflow name>/<workflow uid>/<x>/``.

    Raises:
        UsageError: as ``build_manifests`` (except that claim directories may have any names).
    """
    k = require_kubernetes()
    fan = replace(options, kind=WorkloadKind.INDEXED)
    fan.check(by_index=False)
    objects = supporting_objects(k, fan)
    for obj in objects:  # the pods reach the API server (Argo's wait container), nothing else
        if obj.kind == "NetworkPolicy":
            ports = [k.V1NetworkPolicyPort(protocol="TCP", port=p) for p in _API_SERVER_PORTS]
            obj.spec.egress = [k.V1NetworkPolicyEgressRule(ports=ports)]
    name = f"{fan.name}-executor"
    meta = k.V1ObjectMeta(name=name, namespace=fan.namespace)
    objects += [  # the executor's ServiceAccount, Role (workflowtaskresults only), RoleBinding
        k.V1ServiceAccount(api_version="v1", kind="ServiceAccount", metadata=meta),
        k.V1Role(
            api_version="rbac.authorization.k8s.io/v1",
            kind="Role",
            metadata=meta,
            rules=[
                k.V1PolicyRule(
                    api_groups=["argoproj.io"],
                    resources=["workflowtaskresults"],
                    verbs=["create", "patch"],
                )
            ],
        ),
        k.V1RoleBinding(
            api_version="rbac.authorization.k8s.io/v1",
            kind="RoleBinding",
            metadata=meta,
            role_ref=k.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=name),
            subjects=[k.RbacV1Subject(kind="ServiceAccount", name=name, namespace=fan.namespace)],
        ),
    ]
    objects.append(_workflow(k, fan))
    return objects
