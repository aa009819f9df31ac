"""``ragwarrant k8s render|submit``: the hardened Kubernetes objects for contracts and an image.

Built from the official ``kubernetes`` client's V1 models (``ragwarrant.k8s.render``; the options
and their checks in ``k8s.options``), so the same hardening comes out as from ``deploy/k8s/`` with
kustomize. ``submit`` creates them in the current kubeconfig context and, with ``--wait``, exits
with the job's own exit code (``ragwarrant.k8s.submit``). Needs the optional extra ``k8s``.

Both refuse inputs that cannot work before writing or creating anything: an invalid contract
(78), a file the contract names that is missing from its directory (66), an image not pinned by
a ``sha256`` digest unless ``--allow-tag``, a malformed digest, or a malformed ``--schedule`` (64).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwarrant.commands._help import RUN_EXIT_CODES, CommandHelp, add_command, add_verbs
from ragwarrant.errors import UsageError
from ragwarrant.exit_codes import ExitCode
from ragwarrant.k8s.argo import build_argo_manifests, estimate_status_size
from ragwarrant.k8s.options import (
    DEFAULT_PARALLELISM,
    Engine,
    RenderOptions,
    WorkloadKind,
    check_image,
    check_schedule,
)
from ragwarrant.k8s.render import build_manifests, manifests_to_yaml

if TYPE_CHECKING:  # k8s.inputs loads the contract models (pydantic): imported where used
    from ragwarrant.k8s.inputs import RenderInputs  # noqa: F811

# The arguments ``render`` and ``submit`` share: (flag, ``add_argument`` keywords), in help order.
_WORKLOAD_ARGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--kind", dict(choices=[k.value for k in WorkloadKind], default="job")),
    (
        "--image",
        dict(
            required=True,
            help="image reference pinned by digest: REGISTRY/ragwarrant@sha256:<64 hex digits>",
        ),
    ),
    (
        "--allow-tag",
        dict(
            action="store_true",
            help="accept an image without a digest (a mutable tag, or none: latest)",
        ),
    ),
    (
        "--contract",
        dict(
            action="append",
            default=[],
            type=Path,
            help="contract file; repeat with --kind indexed (index i runs the i-th contract). "
            "Packaged with its files into ConfigMaps (1 MiB at most); for more, --input-claim",
        ),
    ),
    (
        "--input-claim",
        dict(
            metavar="NAME",
            help="PersistentVolumeClaim mounted read-only at /in instead of ConfigMaps (a file "
            "share, or an object-store CSI volume): /in/<index or name>/ holds one contract and "
            "its files. Give --input-root or --completions with it",
        ),
    ),
    (
        "--input-root",
        dict(
            type=Path,
            metavar="DIR",
            help="with --input-claim: a local view of the volume (mounted here, or a copy); each "
            "subdirectory holding a contract is one index, checked before rendering",
        ),
    ),
    (
        "--completions",
        dict(
            type=int,
            metavar="N",
            help="with --input-claim and no --input-root: the volume holds /in/0/ .. /in/N-1/ "
            "(not checked)",
        ),
    ),
    (
        "--evidence-dir",
        dict(
            type=Path,
            help="directory every contract's evidence and policy paths are relative to "
            "(default: each contract's own directory; an Indexed Job over contracts in different "
            "directories then packages each one's own files for its index)",
        ),
    ),
    ("--name", dict(default="ragwarrant", help="base name of every object")),
    (
        "--namespace",
        dict(
            default="ragwarrant",
            help="namespace of every object, written first with Pod Security 'restricted' enforced "
            "(default: ragwarrant); a DNS label, not 'default' nor 'kube-*' (exit 64)",
        ),
    ),
    (
        "--no-namespace",
        dict(
            dest="namespace",
            action="store_const",
            const=None,
            help="set no namespace and write no Namespace object (kubectl's current one is used)",
        ),
    ),
    ("--schedule", dict(default="0 6 * * *", help="cron schedule (cronjob)")),
    ("--time-zone", dict(default="Etc/UTC", help="IANA zone of --schedule, e.g. Europe/Paris")),
    (
        "--parallelism",
        dict(
            type=int,
            default=DEFAULT_PARALLELISM,
            help=f"pods at once (indexed; default {DEFAULT_PARALLELISM})",
        ),
    ),
    (
        "--active-deadline-seconds",
        dict(
            type=int,
            help="wall-clock limit of the whole Job or Workflow, s (default: for indexed and "
            "--engine argo, enough for every index: waves x attempts x --pod-deadline-seconds; "
            "for job and cronjob, --pod-deadline-seconds)",
        ),
    ),
    (
        "--pod-deadline-seconds",
        dict(
            type=int,
            default=3600,
            help="wall-clock limit of each index's pod (one attempt), s; a job or cronjob's "
            "whole-Job default (default 3600)",
        ),
    ),
    (
        "--backoff-limit",
        dict(type=int, default=2, help="retries of an internal error (indexed: per index)"),
    ),
    (
        "--max-failed-indexes",
        dict(
            type=int,
            metavar="N",
            help="indexed: fail the whole Job once more than N indexes failed. A REJECT, "
            "INCONCLUSIVE or BLOCK fails its index too (default: run every index)",
        ),
    ),
    (
        "--output-claim",
        dict(
            help="PersistentVolumeClaim for /out, to keep the outputs (default: an emptyDir; an "
            "Indexed Job writes index i to /out/<i>/, so parallel pods need a ReadWriteMany claim)"
        ),
    ),
    (
        "--ledger-claim",
        dict(
            default="ragwarrant-ledger",
            metavar="NAME",
            help="PersistentVolumeClaim mounted at /ledger; each run appends to "
            "/ledger/ledger.jsonl (--ledger). Written as a ReadWriteMany claim unless "
            "--ledger-claim-exists; its storage must support flock (NFSv4, EFS) "
            "(default: ragwarrant-ledger)",
        ),
    ),
    (
        "--no-ledger",
        dict(
            dest="ledger_claim",
            action="store_const",
            const=None,
            help="mount no ledger volume and pass no --ledger",
        ),
    ),
    (
        "--ledger-claim-exists",
        dict(
            action="store_true",
            help="the ledger claim exists already: mount it, write no PersistentVolumeClaim",
        ),
    ),
    ("--ledger-size", dict(default="1Gi", help="storage of the ledger claim (default: 1Gi)")),
    (
        "--ledger-storage-class",
        dict(
            metavar="CLASS",
            help="storage class of the ledger claim, one offering ReadWriteMany with file locks "
            "(default: the cluster's default class)",
        ),
    ),
    (
        "--signing-key-secret",
        dict(
            metavar="NAME",
            help="Secret holding an Ed25519 PKCS#8 PEM key: mounted read-only (mode 0440) at "
            "/secrets/signing and passed as --signing-key, so decision.intoto.json is signed. "
            "Create it first: kubectl create secret generic NAME "
            "--from-file=ed25519.pem=signing.pem",
        ),
    ),
    (
        "--signing-key-item",
        dict(
            default="ed25519.pem",
            metavar="KEY",
            help="the Secret's key holding the PEM (default: ed25519.pem)",
        ),
    ),
)


_K8S_READS = (
    "each --contract FILE and the policy configs and evidence files it names (checked before "
    "anything is written: an invalid contract or a missing file is refused)"
)

K8S_RENDER_HELP = CommandHelp(
    purpose="write a hardened Job, CronJob or Indexed Job (YAML) for contracts and an image",
    reads=_K8S_READS,
    writes="-o FILE (default: stdout): Namespace, ServiceAccount, deny-all NetworkPolicy, the "
    "ledger's PersistentVolumeClaim, ConfigMaps holding the contract(s) and evidence, and the "
    "workload. Apply with `kubectl apply -f FILE`.",
    codes=(ExitCode.PROMOTE, ExitCode.NO_INPUT, ExitCode.CANT_CREATE, ExitCode.CONFIG),
    success="the manifests were written",
    code_note=f"{int(ExitCode.USAGE)} also for an image not pinned by digest (unless "
    "--allow-tag), a bad number or schedule, or an unreadable contract file.",
    examples=(
        "ragwarrant k8s render --kind job --image REGISTRY/ragwarrant@sha256:<digest> "
        "--contract in/contract.yaml -o job.yaml",
    ),
)
"""``ragwarrant k8s render --help``."""

K8S_SUBMIT_HELP = CommandHelp(
    purpose="create the same objects in the current kubeconfig context; --wait for the decision",
    reads=f"{_K8S_READS}; the kubeconfig ($KUBECONFIG or ~/.kube, --context)",
    writes="the objects 'render' writes, created in the cluster (an existing ledger claim is "
    "kept: the ledger outlives runs); progress on stdout",
    codes=RUN_EXIT_CODES,
    success="created (without --wait), or the job PROMOTEd (with --wait)",
    code_note="With --wait, exits with the job's exit code (any code of 'ragwarrant run'; for an "
    "Indexed Job, the first non-zero one in index order). Not tested against a live cluster: "
    "our tests replay API responses from a loopback server.",
    examples=(
        "ragwarrant k8s submit --kind job --image REGISTRY/ragwarrant@sha256:<digest> "
        "--contract in/contract.yaml --wait",
    ),
)
"""``ragwarrant k8s submit --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``k8s render`` and ``k8s submit`` to the CLI."""
    verbs = add_verbs(
        subparsers,
        "k8s",
        "Kubernetes manifests for the job",
        "Render (render) or create (submit) the Kubernetes objects that run the job",
    )
    render = add_command(verbs, "render", K8S_RENDER_HELP, run_render)
    submit = add_command(verbs, "submit", K8S_SUBMIT_HELP, run_submit)
    for parser in (render, submit):
        for flag, spec in _WORKLOAD_ARGS:
            parser.add_argument(flag, **spec)
    render.add_argument(
        "--engine",
        choices=[e.value for e in Engine],
        default=Engine.KUBERNETES.value,
        help="kubernetes: a Job, CronJob or Indexed Job; argo: an Argo Workflow fanning out "
        "(withItems) over the contracts with the Indexed Job's pod (default: kubernetes)",
    )
    render.add_argument("-o", "--out", default="-", help="output file, or - for stdout")
    submit.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube)")
    submit.add_argument("--context", help="kubeconfig context (default: the current one)")
    submit.add_argument("--wait", action="store_true", help="wait and exit with the job's code")
    submit.add_argument("--timeout", type=float, default=None, help="seconds to wait at most")
    submit.add_argument("--poll-seconds", type=float, default=5.0, help=argparse.SUPPRESS)


def _options(args: argparse.Namespace) -> RenderOptions:
    """Check the arguments and the inputs; return what to render.

    Raises:
        UsageError: a bad number, image or schedule, an unreadable contract file (64).
        ContractError: a contract is invalid (78).
        InputError: a file a contract names is not in its directory (66).
    """
    for flag, value, least in (
        ("--parallelism", args.parallelism, 1),
        ("--backoff-limit", args.backoff_limit, 0),
        ("--active-deadline-seconds", args.active_deadline_seconds, 1),
        ("--pod-deadline-seconds", args.pod_deadline_seconds, 1),
        ("--completions", args.completions, 1),
    ):
        if value is not None and value < least:
            raise UsageError("k8s-bad-number", f"{flag} must be at least {least}, found {value}")
    check_image(args.image, allow_tag=args.allow_tag)
    kind = WorkloadKind(args.kind)
    if kind is WorkloadKind.CRONJOB:
        check_schedule(args.schedule)
    inputs, names = _inputs(args)
    # Every option whose flag's dest is a field's name (--ledger-size: ledger_size) passes as is.
    given = {f.name: vars(args)[f.name] for f in fields(RenderOptions) if f.name in vars(args)}
    given |= {
        "kind": kind,
        "contracts": inputs.contracts,
        "evidence": inputs.evidence,
        "index_evidence": inputs.index_evidence,
        "input_names": names,
        "ledger_claim_object": not args.ledger_claim_exists,
    }
    return RenderOptions(**given)


def _inputs(args: argparse.Namespace) -> tuple[RenderInputs, tuple[str, ...]]:
    """Return the packaged inputs (ConfigMap mode) or the claim's directory names.

    Raises:
        UsageError: ``--input-claim`` combined with ``--contract``, or without exactly one of
            ``--input-root`` and ``--completions``; those two without ``--input-claim``.
        ContractError: a contract is invalid (78).
        InputError: a file a contract names is missing (66).
    """
    from ragwarrant.k8s.inputs import RenderInputs, load_inputs, scan_input_root

    if args.input_claim is None:
        if args.input_root is not None or args.completions is not None:
            raise UsageError(
                "k8s-input-claim-required",
                "--input-root and --completions describe an input volume",
                hint="add --input-claim NAME, the claim pods mount at /in",
            )
        return load_inputs(args.contract, args.evidence_dir), ()
    if args.contract or args.evidence_dir is not None:
        raise UsageError(
            "k8s-input-conflict",
            "--input-claim mounts the contracts from a volume; --contract and --evidence-dir "
            "package them into ConfigMaps",
            hint="give one or the other",
        )
    if (args.input_root is None) == (args.completions is None):
        raise UsageError(
            "k8s-input-root-required",
            "--input-claim needs exactly one of --input-root DIR and --completions N",
            hint="--input-root checks every contract on a local view of the volume",
        )
    if args.input_root is not None:
        names = scan_input_root(args.input_root)
    else:
        names = tuple(str(i) for i in range(args.completions))
    return RenderInputs((), ()), names


def run_render(args: argparse.Namespace) -> int:
    """Render the manifests and write them; return exit code 0.

    Raises:
        UsageError: bad arguments or image, missing kubernetes client, files too large for a
            ConfigMap.
        ContractError: a contract is invalid.
        InputError: a file a contract names is missing.
        OutputError: the output file cannot be written.
    """
    if Engine(args.engine) is Engine.ARGO and WorkloadKind(args.kind) is WorkloadKind.CRONJOB:
        raise UsageError(
            "k8s-argo-cronjob",
            "--engine argo renders a Workflow, run once per submission; it has no schedule",
            hint="schedule it with an Argo CronWorkflow wrapping the Workflow's spec, or use "
            "--engine kubernetes --kind cronjob",
        )
    options = _options(args)
    if Engine(args.engine) is Engine.ARGO:
        objects = build_argo_manifests(options)
        size = estimate_status_size(objects[-1])
        if size.plain > size.limit:  # the finished Workflow will not fit MAX_WORKFLOW_SIZE plainly
            how = (
                "even compressed: enable the controller's node-status offloading (persistence, "
                "nodeStatusOffLoad: true) or split the contracts into several Workflows"
                if size.needs_offload
                else "only compressed (status.compressedNodes), and retries add a node per attempt"
            )
            print(
                f"warning: the finished Workflow's status is about {size.plain:,} bytes "
                f"({size.compressed:,} compressed), above MAX_WORKFLOW_SIZE {size.limit:,}: it "
                f"fits {how} (docs/scheduling.md)",
                file=sys.stderr,
            )
        text = manifests_to_yaml(objects)
    else:
        text = manifests_to_yaml(build_manifests(options))
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    from ragwarrant.audit.writer import write_atomic

    # The rendered objects package contracts and evidence: readable by the owner only.
    write_atomic(Path(args.out), text.encode("utf-8"), mode=0o600)
    return 0


def run_submit(args: argparse.Namespace) -> int:
    """Create the objects; with ``--wait`` return the job's exit code, else 0.

    Raises:
        UsageError: bad arguments or image, no kubeconfig, objects already present, access
            denied.
        ContractError: a contract is invalid.
        InputError: a file a contract names is missing.
        InternalError: an unexpected API error, or the wait timed out.
    """
    options = _options(args)
    objects = build_manifests(options)  # checks the options before the deadline divides by n
    if options.namespace is None:
        raise UsageError(
            "k8s-namespace-required",
            "submit needs a namespace to create the objects in",
            hint="drop --no-namespace or pass --namespace NAME",
        )
    from ragwarrant.k8s.submit import submit

    timeout = args.timeout or options.job_deadline_seconds + 300.0
    result = submit(
        objects,
        kubeconfig=args.kubeconfig,
        context=args.context,
        wait=args.wait,
        timeout_s=timeout,
        poll_s=args.poll_seconds,
    )
    for name in result.created:
        print(f"created {name}")
    for outcome in result.outcomes:
        where = f"index {outcome.index} " if outcome.index is not None else ""
        print(f"{where}pod {outcome.pod}: exit {outcome.exit_code}: {outcome.message}")
    return result.exit_code
