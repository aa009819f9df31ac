"""``ragwarrant k8s render|submit``: the hardened Kubernetes objects for contracts and an image.

Built from the official ``kubernetes`` client's V1 models (``ragwarrant.k8s.render``), so the
same hardening comes out as from ``deploy/k8s/`` with kustomize. ``submit`` creates them in the
current kubeconfig context and, with ``--wait``, exits with the job's own exit code
(``ragwarrant.k8s.submit``). Needs the optional extra ``k8s``.

Both refuse inputs that cannot work before writing or creating anything: an invalid contract
(78), a file the contract names that is missing from its directory (66), an image not pinned by
a ``sha256`` digest unless ``--allow-tag``, a malformed digest, or a malformed ``--schedule`` (64).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwarrant.errors import OutputError, UsageError
from ragwarrant.k8s.render import WorkloadKind

if TYPE_CHECKING:
    from ragwarrant.k8s import RenderOptions

__all__ = ["register"]


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
            required=True,
            type=Path,
            help="contract file; repeat with --kind indexed (index i runs the i-th contract)",
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
            "(default: ragwarrant)",
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
    ("--time-zone", dict(default="Etc/UTC", help="IANA zone of --schedule")),
    ("--parallelism", dict(type=int, default=2, help="pods at once (indexed)")),
    ("--active-deadline-seconds", dict(type=int, default=3600)),
    ("--backoff-limit", dict(type=int, default=2)),
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


def _add_workload_args(parser: argparse.ArgumentParser) -> None:
    for flag, spec in _WORKLOAD_ARGS:
        parser.add_argument(flag, **spec)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``k8s render`` and ``k8s submit`` to the CLI."""
    k8s = subparsers.add_parser("k8s", help="Kubernetes manifests for the job")
    verbs = k8s.add_subparsers(dest="k8s_command", required=True, metavar="VERB")
    render = verbs.add_parser(
        "render",
        help="write a hardened Job, CronJob or Indexed Job (YAML) for contracts and an image",
        description="Writes Namespace, ServiceAccount, deny-all NetworkPolicy, the ledger's "
        "PersistentVolumeClaim, ConfigMaps holding the contract(s) and evidence, and the "
        "workload. Apply with `kubectl apply -f FILE`.",
    )
    _add_workload_args(render)
    render.add_argument("-o", "--out", default="-", help="output file, or - for stdout")
    render.set_defaults(handler=run_render)
    submit = verbs.add_parser(
        "submit",
        help="create the same objects in the current kubeconfig context; --wait for the decision",
        description="Creates what `render` writes. With --wait, exits with the job's exit code "
        "(for an Indexed Job, the first non-zero one in index order). An existing ledger claim "
        "is kept (the ledger outlives runs). Not tested against a "
        "live cluster: our tests replay API responses from a loopback server.",
    )
    _add_workload_args(submit)
    submit.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube)")
    submit.add_argument("--context", help="kubeconfig context (default: the current one)")
    submit.add_argument("--wait", action="store_true", help="wait and exit with the job's code")
    submit.add_argument("--timeout", type=float, default=None, help="seconds to wait at most")
    submit.add_argument("--poll-seconds", type=float, default=5.0, help=argparse.SUPPRESS)
    submit.set_defaults(handler=run_submit)


def _options(args: argparse.Namespace) -> RenderOptions:
    """Check the arguments and the inputs; return what to render.

    Raises:
        UsageError: a bad number, image or schedule, an unreadable contract file (64).
        ContractError: a contract is invalid (78).
        InputError: a file a contract names is not in its directory (66).
    """
    from ragwarrant.k8s import RenderOptions, check_image, check_schedule, load_inputs

    for flag, value, least in (
        ("--parallelism", args.parallelism, 1),
        ("--backoff-limit", args.backoff_limit, 0),
        ("--active-deadline-seconds", args.active_deadline_seconds, 1),
    ):
        if value < least:
            raise UsageError("k8s-bad-number", f"{flag} must be at least {least}, found {value}")
    check_image(args.image, allow_tag=args.allow_tag)
    kind = WorkloadKind(args.kind)
    if kind is WorkloadKind.CRONJOB:
        check_schedule(args.schedule)
    inputs = load_inputs(args.contract, args.evidence_dir)
    return RenderOptions(
        kind=kind,
        image=args.image,
        contracts=inputs.contracts,
        evidence=inputs.evidence,
        index_evidence=inputs.index_evidence,
        name=args.name,
        namespace=args.namespace,
        schedule=args.schedule,
        time_zone=args.time_zone,
        parallelism=args.parallelism,
        active_deadline_seconds=args.active_deadline_seconds,
        backoff_limit=args.backoff_limit,
        output_claim=args.output_claim,
        ledger_claim=args.ledger_claim,
        ledger_claim_object=not args.ledger_claim_exists,
        ledger_size=args.ledger_size,
        ledger_storage_class=args.ledger_storage_class,
        signing_key_secret=args.signing_key_secret,
        signing_key_item=args.signing_key_item,
    )


def run_render(args: argparse.Namespace) -> int:
    """Render the manifests and write them; return exit code 0.

    Raises:
        UsageError: bad arguments or image, missing kubernetes client, files too large for a
            ConfigMap.
        ContractError: a contract is invalid.
        InputError: a file a contract names is missing.
        OutputError: the output file cannot be written.
    """
    from ragwarrant.k8s import build_manifests, manifests_to_yaml

    text = manifests_to_yaml(build_manifests(_options(args)))
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except OSError as exc:
        raise OutputError(
            "k8s-output-unwritable",
            f"cannot write {out}: {exc.strerror}",
            hint="pass --out with a writable directory, or - for stdout",
        ) from exc
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
    from ragwarrant.k8s import build_manifests, submit

    options = _options(args)
    if options.namespace is None:
        raise UsageError(
            "k8s-namespace-required",
            "submit needs a namespace to create the objects in",
            hint="drop --no-namespace or pass --namespace NAME",
        )
    timeout = args.timeout or options.active_deadline_seconds + 300.0
    result = submit(
        build_manifests(options),
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
