"""``ragwarrant init --from FILE [FILE...] --output contract.yaml``: a contract draft."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path

from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.display import quoted, visible
from ragwarrant.errors import EvidenceError, InputError, UsageError, shown_path
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
    "overwritten); paths are relative to --output's directory (created when absent), and exports "
    "outside it are copied into it byte for byte, keeping their layout below their common "
    "folder, that folder's name first (never over a different file); stdout: what was seen per "
    "export",
    codes=(ExitCode.PROMOTE, ExitCode.NO_INPUT, ExitCode.CANT_CREATE),
    success="the draft was written",
    code_note=f"{int(ExitCode.USAGE)} also when --output is no contract.yaml or contract.yml "
    "(nor a directory), names an unset ${NAME}, exists and --force is not given, --from names "
    "one file twice, a different file is where an export's copy goes, an export in its "
    "directory is a link leading outside it, or a stub would be written outside policies/ or "
    "through a symlink; "
    f"{int(ExitCode.NO_INPUT)}: an export is missing, a directory, unreadable, of an unknown "
    "suffix or not of its format, or names a policy that is not a contract id; "
    f"{int(ExitCode.CANT_CREATE)}: a directory or file of --output's cannot be created or "
    "written. Nothing is copied or written when init fails on an export.",
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
        default="contract.yaml",
        metavar="FILE",
        help="the draft to write: DIR/contract.yaml or DIR/contract.yml, or a directory for "
        "DIR/contract.yaml; ${NAME} is read from the environment (default: contract.yaml)",
    )
    p.add_argument("--id", dest="contract_id", default="my-release", help="the contract id")
    p.add_argument("--force", action="store_true", help="overwrite --output if it exists")


def contract_path(text: str) -> Path:
    """``--output`` as the contract file ``run`` finds: ``${NAME}`` expanded as ``run`` does,
    an existing directory or a path ending in ``/`` meaning ``<dir>/contract.yaml``.

    Raises:
        UsageError: ``run-variable-unset`` for an unset ``${NAME}``; ``init-output-name`` when
            the file is not named contract.yaml or contract.yml (the draft is YAML).
    """
    from ragwarrant.commands.run import expand_variables

    path = expand_variables(text)
    if path.is_dir() or text.endswith(("/", os.sep)):
        path = path / "contract.yaml"
    if path.name not in ("contract.yaml", "contract.yml"):
        raise UsageError(
            "init-output-name",
            f"--output names the file {quoted(path.name)}: init writes a commented YAML draft, "
            "named contract.yaml or contract.yml (run also reads a contract.json, which init "
            "does not write)",
            hint="pass --output DIR/contract.yaml (or an existing directory, or DIR/)",
        )
    return path


def handle(args: argparse.Namespace) -> int:
    """Describe each export, write the draft, print what was seen; return 0.

    Paths in the draft are relative to the directory of ``--output`` (the input directory,
    created when absent); an export outside it is copied there (``place_exports``) once every
    export is described and the draft is made: a refusal writes nothing.

    Raises:
        InputError: an export is missing, unreadable, of an unknown suffix, or not of its format.
        UsageError: ``--output`` is no contract file name or exists and ``--force`` is not
            given, an export outside it cannot be copied there (``place_exports``), or a
            stub would be written through a symlink.
        OutputError: a directory or file cannot be created or written (exit 73).
    """
    # imported here: reading exports needs pyarrow and the contract models, --help does not
    from ragwarrant import scaffold_files as files
    from ragwarrant.scaffold import describe_export, draft_contract

    output = contract_path(args.output)
    args.output = output.parent  # errors may name the files under it (cli's mounts)
    if output.exists() and not args.force:
        raise UsageError(
            "init-exists",
            f"--output {visible(shown_path(output))} exists; not overwritten",
            hint="choose another --output, or pass --force",
        )
    base = output.resolve().parent
    exports, copies = [], []
    placed, origin = files.place_exports(args.sources, base)
    for file, display, copied in placed:
        try:
            export = describe_export(file, display)
        except EvidenceError as exc:
            raise InputError(exc.code, exc.message, hint=exc.hint) from exc
        note = "copied beside the contract from the path given to --from (byte for byte)"
        exports.append(replace(export, notes=[*export.notes, note]) if copied else export)
        copies += [(file, base / display)] if copied else []
    text = draft_contract(exports, args.contract_id)
    planned = files.plan_policy_stubs(text, base)  # refused before anything is written
    copies += _beside_copies(text, base, origin, copies)
    files.copy_exports(copies)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise files.unwritable(output, exc) from exc
    for _, target in copies:
        print(visible(f"copied {target.relative_to(base)} beside {output} (from outside it)"))
    stubs = files.write_policy_stubs(planned, exports)
    _print_sources(text)
    for stub in stubs:  # named as --output was typed (stubs are planned under its resolved dir)
        shown = output.parent / stub.relative_to(base)
        print(f"wrote {visible(str(shown))}: a stub config; describe the policy in it")
    print(
        f"wrote {visible(str(output))}: declare each null (direction, margin_abs, the "
        "claim's items, evidence_class), check the lines marked CHECK, then 'ragwarrant run'"
    )
    return 0


def _beside_copies(
    text: str, base: Path, origin: Path | None, copies: list[tuple[Path, Path]]
) -> list[tuple[Path, Path]]:
    """The files the draft ``text`` names that are neither in ``base`` nor in ``copies``: a
    Phoenix spans file found beside a copied export, copied from ``origin`` too.

    Raises:
        UsageError: ``init-copy-exists`` (``refuse_other_file``).
    """
    import yaml  # here: --help and --version import no YAML

    from ragwarrant.scaffold_files import refuse_other_file

    sources = yaml.safe_load(text)["evidence"]
    named = {p for s in sources for p in (s["path"], s.get("options", {}).get("spans")) if p}
    more = []
    for path in sorted(named):
        source, target = (origin or base) / path, base / path
        new = not target.exists() and target not in {t for _, t in copies}
        if origin and new and source.is_file():
            refuse_other_file(source, target)
            more.append((source, target))
    return more


def _print_sources(text: str) -> None:
    """One stdout line per evidence source of the draft: adapter, pairing, what it gives."""
    import yaml  # here: --help and --version import no YAML

    data = yaml.safe_load(text)
    operational = ", ".join(m["id"] for m in data.get("operational_metrics") or [])
    for src in data["evidence"]:
        gives = ", ".join(src.get("metrics", {}).values()) or "no score read"
        if src.get("layout") == "long":
            gives = f"long layout, metric ids in column {src['columns']['metric']}"
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
