"""``ragwarrant review sample``: draw a blinded random sample of examples for human labels."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from ragwarrant.commands._help import CommandHelp, add_command, add_verbs
from ragwarrant.exit_codes import ExitCode
from ragwarrant.limits import UINT64_MAX

# The inputs, the evidence and Jinja2 are imported by the handler (a light ``--help``).

REVIEW_SAMPLE_HELP = CommandHelp(
    purpose="draw a blinded random sample of examples for reviewers to label",
    reads="DIR (--input): the contract and the evidence it names, as 'run' reads them",
    writes="QUEUE (--output, a new .json path: the draw's seed, item ids, blinded order, "
    "evidence sha256), "
    "and beside it QUEUE with .csv and .html: the items with both outputs as A and B, to label",
    codes=(ExitCode.PROMOTE, ExitCode.NO_INPUT, ExitCode.CANT_CREATE, ExitCode.CONFIG),
    success="the queue, the CSV and the page were written",
    code_note=f"{int(ExitCode.NO_INPUT)}: the input cannot be read or an evidence file is "
    f"unreadable; {int(ExitCode.CANT_CREATE)}: QUEUE, its .csv or its .html cannot be "
    f"written; {int(ExitCode.CONFIG)}: the contract does not validate; "
    f"{int(ExitCode.USAGE)}: QUEUE does not end in .json, or it, its .csv or its .html exists.",
    notes=(
        "The population is the confirmatory split's examples where both policies have the "
        "metric. Name the queue and the returned labels CSV under the metric's human_labels in "
        "the contract: its noninferiority gates then decide on the judge-corrected bound.",
    ),
    examples=(
        "ragwarrant review sample --input in --metric faithfulness --n 200 --seed 7 "
        "--output in/review/queue.json",
    ),
)
"""``ragwarrant review sample --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``review sample`` to the CLI."""
    verbs = add_verbs(
        subparsers,
        "review",
        "draw examples for human labels",
        "Draw a blinded sample of examples for reviewers (sample)",
    )
    p = add_command(verbs, "sample", REVIEW_SAMPLE_HELP, run_review_sample)
    p.add_argument("--input", type=Path, required=True, metavar="DIR")
    p.add_argument("--metric", required=True, metavar="M", help="a quality metric's id")
    p.add_argument("--n", type=int, required=True, metavar="N", help="items to draw")
    p.add_argument("--seed", type=int, required=True, metavar="S", help="seed of the draw")
    p.add_argument("--output", type=Path, required=True, metavar="QUEUE", help="queue JSON path")
    p.add_argument("--candidate", metavar="ID", help="the candidate (default: the first)")
    p.add_argument(
        "--stratify-by-slice",
        action="store_true",
        help="allocate the draw to slices in proportion to their size",
    )


def _check_output(out: Path) -> None:
    """Refuse a QUEUE not ending in .json, or one whose queue, CSV or page exists.

    The CSV and page are written beside QUEUE with its suffix replaced: any of the three
    existing (a queue being labelled, or an evidence file such as ``evals.csv``) would be
    overwritten.

    Raises:
        UsageError: ``review-output-suffix`` or ``review-queue-exists`` (64).
    """
    from ragwarrant.errors import UsageError

    if out.suffix != ".json":
        raise UsageError(
            "review-output-suffix",
            f"--output {out} does not end in .json: the queue's CSV and page are written "
            "beside it with .csv and .html",
            hint="name the queue QUEUE.json",
        )
    for path in (out, out.with_suffix(".csv"), out.with_suffix(".html")):
        if path.exists() or path.is_symlink():
            raise UsageError(
                "review-queue-exists",
                f"{path} exists: a new draw would overwrite it (and orphan any labels that "
                "answer an old queue)",
                hint="choose another --output, or remove the old queue if no one is labelling it",
            )


def run_review_sample(args: argparse.Namespace) -> int:
    """Draw, blind and write the queue, its CSV and its page; print where they are.

    Raises:
        InputError: the input or an evidence file cannot be read (66).
        UsageError: QUEUE does not end in .json or it, its .csv or its .html exists; --seed
            outside 0..2**64-1; unknown metric or candidate, or --n outside [1, population] (64).
        ContractError: the contract does not validate (78).
        OutputError: QUEUE, its .csv or its .html cannot be written (73).
    """
    from ragwarrant.audit.writer import write_atomic
    from ragwarrant.corroborators.corroborate import text_records
    from ragwarrant.errors import InputError, UsageError
    from ragwarrant.inputs import check_input_dir, read_inputs, take_evidence
    from ragwarrant.review.page import render_csv, render_html, review_rows
    from ragwarrant.review.sample import draw, evidence_digests, population

    check_input_dir(args.input)
    _check_output(args.output)
    if not 0 <= args.seed <= UINT64_MAX:
        raise UsageError(
            "review-seed-range",
            f"--seed {args.seed} is outside 0..2**64-1",
            hint=f"choose a seed in 0..{UINT64_MAX}",
        )
    inputs = read_inputs(args.input)
    # The labels the contract may already name are what the draw is for: not needed yet.
    bad = [u for u in inputs.unresolved if not u.startswith("human labels ")]
    bad += [f"evidence {s}" for s, _ in inputs.unreadable if not s.startswith("human_labels:")]
    if bad:
        raise InputError(
            "review-input-unreadable",
            f"cannot draw: {', '.join(bad)} could not be read",
            hint="run 'ragwarrant run' on the input to see each problem",
        )
    contract = inputs.contract
    candidates = contract.policy_ids[1:]
    candidate = args.candidate or candidates[0]
    if candidate not in candidates:
        raise UsageError(
            "review-candidate-unknown",
            f"--candidate {candidate!r} is not a candidate of the contract",
            hint=f"one of: {', '.join(candidates)}",
        )
    baseline = contract.baseline.policy_id
    pop = population(take_evidence(inputs), contract, args.metric, baseline, candidate)
    digests = evidence_digests(contract, [(d.path, d.sha256) for d in inputs.digests])
    queue = draw(
        pop,
        n=args.n,
        seed=args.seed,
        stratify=args.stratify_by_slice,
        meta=(args.metric, baseline, candidate),
        evidence=digests,
    )
    rows = review_rows(queue, text_records([r.texts for r in inputs.results if r.texts]))
    scale = next(m.scale for m in contract.quality_metrics if m.id == args.metric)
    out: Path = args.output
    with contextlib.suppress(OSError):  # one that cannot be made: write_atomic says so (73)
        out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, queue.model_dump_json(indent=2).encode() + b"\n")
    write_atomic(out.with_suffix(".csv"), render_csv(rows).encode())
    write_atomic(out.with_suffix(".html"), render_html(queue, rows, scale).encode())
    sys.stdout.write(
        f"drew {len(queue.items)} of {queue.population} paired examples (seed {queue.seed}): "
        f"{out}, {out.with_suffix('.csv')}, {out.with_suffix('.html')}\n"
    )
    return int(ExitCode.PROMOTE)
