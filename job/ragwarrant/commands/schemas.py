"""``ragwarrant schemas``: print or write the JSON Schemas of every input and output."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.errors import UsageError
from ragwarrant.exit_codes import ExitCode


def render_schemas() -> dict[str, bytes]:
    """File name → JSON Schema bytes, generated from the pydantic models (imported here, so
    ``--help`` loads no pydantic)."""
    import orjson
    from pydantic import BaseModel

    from ragwarrant.contract import ReleaseContract
    from ragwarrant.outputs import Decision, Manifest, ValidationReport

    models: dict[str, type[BaseModel]] = {
        "contract.schema.json": ReleaseContract,
        "decision.schema.json": Decision,
        "validation_report.schema.json": ValidationReport,
        "manifest.schema.json": Manifest,
    }
    out = {}
    for name, model in models.items():
        schema = model.model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://ragwarrant.dev/schemas/v1/{name}"
        out[name] = orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    return out


SCHEMAS_HELP = CommandHelp(
    purpose="list, or write, the JSON Schemas of the contract and the outputs",
    reads="nothing: the schemas are generated from the code's models",
    writes="without --write: the schema file names on stdout; with --write DIR: "
    "contract.schema.json, decision.schema.json, validation_report.schema.json and "
    "manifest.schema.json into DIR (which must exist)",
    codes=(ExitCode.PROMOTE,),
    success="listed or written",
    code_note=f"{int(ExitCode.USAGE)} also when --write names no existing directory.",
    examples=("ragwarrant schemas --write contracts",),
)
"""``ragwarrant schemas --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``schemas`` subcommand."""
    p = add_command(subparsers, "schemas", SCHEMAS_HELP, handle)
    p.add_argument(
        "--write", type=Path, metavar="DIR", help="write them into DIR (e.g. contracts/)"
    )


def handle(args: argparse.Namespace) -> int:
    """Write or list the schemas.

    Raises:
        UsageError: ``--write`` names a directory that does not exist.
    """
    if args.write is not None and not args.write.is_dir():
        raise UsageError(
            "schemas-directory-missing", f"{args.write} is not a directory", hint="create it first"
        )
    for name, data in render_schemas().items():
        if args.write:
            (args.write / name).write_bytes(data)
        else:
            print(name)
    return 0
