"""``ragwarrant init --from FILE [FILE...] --output contract.yaml``: a contract draft."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.display import visible
from ragwarrant.errors import EvidenceError, InputError, UsageError
from ragwarrant.exit_codes import ExitCode

INIT_HELP = CommandHelp(
    purpose="draft a release contract from your evaluation exports (margins left to declare)",
    reads="the exports given to --from (Ragas, DeepEval, LangSmith, Phoenix, TruLens, OTel "
    "telemetry or generic CSV/JSON/Parquet): each one's tool, metrics, pairing key, policies, "
    "slices and splits are detected",
    writes="--output (default contract.yaml; refused if it exists, unless --force): a commented "
    "draft with every mapping detected and null left only for your judgement (an unknown "
    "direction, each margin_abs, the claim's items, evidence_class), so it does not validate "
    "until you declare them; policies/<id>.yaml beside it, a stub config per policy (never "
    "overwritten); paths are relative to --output's directory (created when absent), and an export "
    "outside it is copied into it byte for byte (never over a different file); stdout: what was "
    "seen per export",
    codes=(ExitCode.PROMOTE, ExitCode.NO_INPUT),
    success="the draft was written",
    code_note=f"{int(ExitCode.USAGE)} also when --output exists and --force is not given, its "
    "directory cannot be created, or a different file has the name of an export to copy; "
    f"{int(ExitCode.NO_INPUT)}: an export is missing, unreadable, of an unknown suffix or not "
    "of its format, names a policy that is not a contract id, or a stub would be written "
    "outside policies/ or through a symlink.",
    examples=("ragwarrant init --from evals.csv telemetry.parquet --output in/contract.yaml",),
)
"""``ragwarrant init --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``init`` subcommand."""
    p = add_command(subparsers, "init", INIT_HELP, handle)
    p.add_argument(
        "--from",
        dest="sources",
        type=Path,
        nargs="+",
        required=True,
        metavar="FILE",
        help="evaluation exports and telemetry files to describe",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=Path("contract.yaml"),
        metavar="FILE",
        help="the draft to write, inside the input directory (default: contract.yaml)",
    )
    p.add_argument("--id", dest="contract_id", default="my-release", help="the contract id")
    p.add_argument("--force", action="store_true", help="overwrite --output if it exists")


def handle(args: argparse.Namespace) -> int:
    """Describe each export, write the draft, print what was seen; return 0.

    Paths in the draft are relative to the directory of ``--output`` (the input directory,
    created when absent); an export outside it is copied there first (``place_exports``).

    Raises:
        InputError: an export is missing, unreadable, of an unknown suffix, or not of its format.
        UsageError: ``--output`` exists and ``--force`` is not given, its directory cannot be
            created, or an export outside it cannot be copied there (``place_exports``).
    """
    # imported here: reading exports needs pyarrow and the contract models, --help does not
    from ragwarrant.scaffold import describe_export, draft_contract
    from ragwarrant.scaffold_files import place_exports, plan_policy_stubs, write_policy_stubs

    if args.output.exists() and not args.force:
        raise UsageError(
            "init-exists",
            f"{args.output} exists; not overwritten",
            hint="choose another --output, or pass --force",
        )
    base = args.output.resolve().parent
    exports = []
    for file, display, copied in place_exports(args.sources, base):
        try:
            export = describe_export(file, display)
        except EvidenceError as exc:
            raise InputError(exc.code, exc.message, hint=exc.hint) from exc
        note = "copied beside the contract from the path given to --from (byte for byte)"
        exports.append(replace(export, notes=[*export.notes, note]) if copied else export)
        if copied:
            print(visible(f"copied {display} beside {args.output} (it was outside its directory)"))
    text = draft_contract(exports, args.contract_id)
    planned = plan_policy_stubs(text, base)  # refused before the contract is written
    args.output.write_text(text, encoding="utf-8")
    stubs = write_policy_stubs(text, planned, exports)
    _print_sources(text)
    for stub in stubs:
        print(f"wrote {visible(str(stub))}: a stub config; describe the policy in it")
    print(
        f"wrote {visible(str(args.output))}: declare each null (direction, margin_abs, the "
        "claim's items, evidence_class), check the lines marked CHECK, then 'ragwarrant run'"
    )
    return 0


def _print_sources(text: str) -> None:
    """One stdout line per evidence source of the draft: adapter, pairing, what it gives."""
    import yaml  # here: --help and --version import no YAML

    data = yaml.safe_load(text)
    operational = ", ".join(m["id"] for m in data.get("operational_metrics") or [])
    for src in data["evidence"]:
        gives = ", ".join(src.get("metrics", {}).values()) or "no score read"
        if src.get("kind") == "telemetry":
            gives = f"telemetry ({operational})"
        elif src["pairing"] == "span-join" and "spans" not in src.get("options", {}):
            gives += "; CHECK: add the spans export of the same run to --from"
        print(visible(f"{src['path']}: {src['adapter']}, pairing {src['pairing']}; {gives}"))
    keys = {
        (s.get("kind") == "telemetry", s["pairing"] == "question-hash") for s in data["evidence"]
    }
    if any((True, not hashed) in keys for telemetry, hashed in keys if not telemetry):
        print(
            "WARNING: the quality exports and the telemetry are paired by different keys (one by "
            "question-hash, a hash of the question text; the other by its own ids): their "
            "examples will not overlap and a cost or latency claim would BLOCK "
            "(hard:evidence-overlap); give both the same example id column"
        )
